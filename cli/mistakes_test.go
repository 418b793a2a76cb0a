package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/fn"
)

// mistakesDir holds one directory per mistake: models.yaml, usually a
// capability file, and case.yaml (mistakeCase). A new feature adds its row
// there, not here.
const mistakesDir = "../testdata/mistakes"

// mistakeCase is a case.yaml: one input with exactly one mistake in it.
type mistakeCase struct {
	// Mistake says what is wrong, for the test's failure message.
	Mistake string `json:"mistake"`
	// Names is what every command's error or warning must contain: the
	// wrong value or the missing field, so that the user can find it.
	Names string `json:"names"`
	// Skip lists the commands the mistake cannot reach, each with why
	// (`migrate` reads no capability file).
	Skip map[string]string `json:"skip,omitempty"`
}

type mistakeCommand struct {
	name string
	run  func(t *testing.T, dir string, caps bool) (code int, said, written string)
}

// mistakeCommands are every command that reads ModelDeployments or a
// capability file, each run on the case's directory, returning its exit
// status, stderr (or the function's results) and what it wrote; written
// is empty when nothing was.
var mistakeCommands = []mistakeCommand{
	{"render", runRenderMistake},
	{"build", runBuildMistake},
	{"plan", func(t *testing.T, dir string, caps bool) (int, string, string) {
		return execIn(t, dir, withCaps(caps, "plan", "-f", "models.yaml")...)
	}},
	{"diff", runDiffMistake},
	{"preview", func(t *testing.T, dir string, caps bool) (int, string, string) {
		args := []string{"preview", "-f", "models.yaml"}
		if caps {
			args = append(args, "--from", "capabilities.yaml", "--to", "capabilities.yaml")
		}
		return execIn(t, dir, args...)
	}},
	{"migrate", runMigrateMistake},
	{"capabilities nodes", func(t *testing.T, dir string, caps bool) (int, string, string) {
		return execIn(t, dir, "capabilities", "nodes", "-f", "capabilities.yaml")
	}},
	{"function", runFunctionMistake},
	{"argocd", runArgoCDMistake},
}

// TestEveryCommandNamesTheMistake is issue 35's table: no input with a
// mistake in it yields silent success. Every command must exit non-zero
// or warn, and say what the mistake is (the case's `names`); a command
// that fails writes nothing.
func TestEveryCommandNamesTheMistake(t *testing.T) {
	entries, err := os.ReadDir(mistakesDir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			src := filepath.Join(mistakesDir, e.Name())
			tc := readMistakeCase(t, src)
			_, err := os.Stat(filepath.Join(src, "capabilities.yaml"))
			caps := err == nil
			for _, cmd := range mistakeCommands {
				if _, unreached := tc.Skip[cmd.name]; unreached {
					continue // the mistake cannot reach it (case.yaml says why)
				}
				t.Run(cmd.name, func(t *testing.T) {
					dir := t.TempDir()
					require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
					require.NoError(t, os.Remove(filepath.Join(dir, "case.yaml")))
					code, said, written := cmd.run(t, dir, caps)
					switch {
					case code != 0 && written != "":
						t.Errorf("%s: exit %d, yet it wrote:\n%s", tc.Mistake, code, written)
					case !strings.Contains(said, tc.Names):
						t.Errorf("%s: exit %d and nothing said names %q; it said:\n%s", tc.Mistake, code, tc.Names, said)
					case code == 0 && !warned(said, tc.Names):
						t.Errorf("%s: exit 0 without a warning that names %q; it said:\n%s", tc.Mistake, tc.Names, said)
					}
				})
			}
		})
	}
}

// TestMistakeCasesSkipOnlyRealCommands keeps case.yaml files honest: a
// skip names a command of the table, and says why.
func TestMistakeCasesSkipOnlyRealCommands(t *testing.T) {
	entries, err := os.ReadDir(mistakesDir)
	require.NoError(t, err)
	for _, e := range entries {
		tc := readMistakeCase(t, filepath.Join(mistakesDir, e.Name()))
		for name, why := range tc.Skip {
			known := slices.ContainsFunc(mistakeCommands, func(c mistakeCommand) bool { return c.name == name })
			require.Truef(t, known, "%s: skips %q, which is no command of the table", e.Name(), name)
			require.NotEmpty(t, why, "%s: skipping %q must say why", e.Name(), name)
		}
	}
}

func readMistakeCase(t *testing.T, dir string) mistakeCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	require.NoError(t, err)
	var tc mistakeCase
	require.NoError(t, sigsyaml.UnmarshalStrict(data, &tc), dir)
	require.NotEmpty(t, tc.Mistake, dir)
	require.NotEmpty(t, tc.Names, dir)
	return tc
}

// warned reports whether some warning line (the CLI's stderr or the
// function's results) names the mistake.
func warned(said, names string) bool {
	for line := range strings.SplitSeq(said, "\n") {
		if strings.Contains(line, "warning") && strings.Contains(line, names) {
			return true
		}
	}
	return false
}

func withCaps(caps bool, args ...string) []string {
	if caps {
		return append(args, "--capabilities", "capabilities.yaml")
	}
	return args
}

// execIn runs the CLI in dir; written is its stdout when it failed.
func execIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := Execute(args, nil, &stdout, &stderr)
	if code == 0 {
		return code, stderr.String(), ""
	}
	return code, stderr.String(), stdout.String()
}

func runRenderMistake(t *testing.T, dir string, caps bool) (int, string, string) {
	code, said, written := execIn(t, dir, withCaps(caps, "render", "-f", "models.yaml", "--output-dir", "out")...)
	if _, err := os.Stat(filepath.Join(dir, "out")); code != 0 && err == nil {
		if files := listFiles(t, filepath.Join(dir, "out")); len(files) > 0 {
			written += "out/: " + strings.Join(files, ", ")
		}
	}
	return code, said, written
}

func runBuildMistake(t *testing.T, dir string, caps bool) (int, string, string) {
	resources := "models.yaml"
	if caps {
		resources += ", capabilities.yaml"
	}
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: ["+resources+"]\ntransformers: [render.yaml]\n")
	writeFile(t, filepath.Join(dir, "render.yaml"), renderDeclaration)
	t.Setenv(asFunction, "1")
	var code int
	var said, written string
	fnSaid := childStderr(t, func() { code, said, written = execIn(t, dir, "build", "--root", dir, ".") })
	return code, fnSaid + said, written
}

// childStderr runs f with os.Stderr sent to a file and returns what was
// written there: kustomize gives the function it runs the process's own
// stderr, which is where a user sees the function's errors.
func childStderr(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = file
	defer func() { os.Stderr = saved }()
	f()
	data, err := os.ReadFile(file.Name())
	require.NoError(t, err)
	require.NoError(t, file.Close())
	return string(data)
}

func runDiffMistake(t *testing.T, dir string, caps bool) (int, string, string) {
	r := &diffTestRepo{t: t, dir: dir}
	r.git("init", "-q")
	r.commit("the mistake", nil)
	return execIn(t, dir, append(withCaps(caps, "diff"), "HEAD", "--", "models.yaml")...)
}

// runMigrateMistake runs migrate; what it wrote is the file's change.
func runMigrateMistake(t *testing.T, dir string, _ bool) (int, string, string) {
	file := filepath.Join(dir, "models.yaml")
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	code, said, _ := execIn(t, dir, "migrate", "models.yaml")
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	if code != 0 && !bytes.Equal(before, after) {
		return code, said, "models.yaml became:\n" + string(after)
	}
	return code, said, ""
}

// runFunctionMistake runs the KRM function on the case's objects; what it
// said is its results, what it wrote the objects it rendered.
func runFunctionMistake(t *testing.T, dir string, caps bool) (int, string, string) {
	docs := readDocs(t, filepath.Join(dir, "models.yaml"))
	if caps {
		docs = append(docs, readDocs(t, filepath.Join(dir, "capabilities.yaml"))...)
	}
	var stdout, stderr bytes.Buffer
	code := fn.Run(strings.NewReader(resourceList("", docs...)), &stdout, &stderr)
	said := stderr.String() + stdout.String()
	if code == 0 {
		return code, said, ""
	}
	// On failure the function hands its input back, as kpt expects; what
	// it must not add is anything it rendered.
	var written []string
	for _, item := range items(t, stdout.String()) {
		if _, rendered := item.GetAnnotations()["render.airunway.ai/generated-from"]; rendered {
			written = append(written, item.GetKind()+"/"+item.GetName())
		}
	}
	return code, said, strings.Join(written, ", ")
}

func readDocs(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n---\n")
}

func runArgoCDMistake(t *testing.T, dir string, caps bool) (int, string, string) {
	app := filepath.Join(dir, "apps", "models")
	require.NoError(t, os.MkdirAll(app, 0o755))
	require.NoError(t, os.Rename(filepath.Join(dir, "models.yaml"), filepath.Join(app, "models.yaml")))
	if caps {
		t.Setenv(envCapabilities, "capabilities.yaml")
	} else {
		t.Setenv(envCapabilities, "")
	}
	t.Setenv(envSourcePath, "apps/models")
	return execIn(t, app, "argocd", "generate")
}
