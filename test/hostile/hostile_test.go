package hostile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/termsafe"
)

// The bounds every entry point runs under, on every case. The memory
// bound is the stated bound of docs/security.md, with room for the Go
// runtime's own address-space reservations (a hello-world Go binary needs
// about 1 GiB of virtual memory to start). The time limit only catches a
// run that never ends: what bounds a run's time is its work (the input
// budget, which other tests assert by bytes and nodes) and, for build and
// the Argo CD plugin, their own --timeout (2 minutes), which it leaves
// room for; how long the input budget's worst cases take is measured by
// make bench (hack/procbench's hostile workloads). A 60 s limit failed the
// common-annotations-fan-out case under load, three make test runs at
// once beside two busy loops.
const (
	virtualMemoryKiB = 3 << 20 // 3 GiB of address space
	timeLimit        = 5 * time.Minute
)

// cases is where the repositories live: testdata/hostile at the module
// root, one directory per case.
var cases = filepath.Join("..", "..", "testdata", "hostile")

// hostileCase is a case's case.yaml.
type hostileCase struct {
	// Description says what the commit tries.
	Description string `json:"description"`
	// App is the directory of repo/ that the Argo CD Application points
	// at and that build builds (default "app").
	App string `json:"app"`
	// Capabilities is the capability file, relative to repo/, given to
	// render and to the Argo CD plugin (ARGOCD_ENV_CAPABILITIES).
	Capabilities string `json:"capabilities"`
	// Links are symbolic links to make in the sandbox (a repository holds
	// them; testdata keeps them portable): name -> target, both relative
	// to the sandbox, the target as the link holds it.
	Links map[string]string `json:"links"`
	// FIFOs are named pipes to make in the sandbox.
	FIFOs []string `json:"fifos"`
	// Expect is what each entry point must do beyond the invariants
	// every run keeps; an entry point not named may exit 0 or 1.
	Expect map[string]expectation `json:"expect"`
}

type expectation struct {
	Exit   int      `json:"exit"`
	Stderr []string `json:"stderr"`
	// Stdout are texts stdout must hold.
	Stdout []string `json:"stdout"`
}

// entryPoints are the ways the renderer meets a repository.
var entryPoints = []string{"build", "argocd", "render", "migrate", "function"}

// TestHostileRepositories runs every entry point on every repository of
// testdata/hostile, each in a sandbox of its own, under a memory and a
// time bound, with a fake git, ssh, docker, kubectl and helm on PATH and a
// kustomize plugin in the plugin home, each of which would create the
// marker file. Every run must end within the bounds with exit 0 or 1 and
// leave the marker uncreated, the temporary directory empty and every file
// outside its output as it was; and do what the case expects.
func TestHostileRepositories(t *testing.T) {
	bin := renderBin(t)
	entries, err := os.ReadDir(cases)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(cases, e.Name(), "case.yaml"))
			require.NoError(t, err)
			var c hostileCase
			require.NoError(t, sigsyaml.UnmarshalStrict(data, &c))
			require.NotEmpty(t, c.Description)
			if c.App == "" {
				c.App = "app"
			}
			for name := range c.Expect {
				require.Contains(t, entryPoints, name, "case.yaml names an unknown entry point")
			}
			for _, entry := range entryPoints {
				t.Run(entry, func(t *testing.T) {
					s := newSandbox(t, filepath.Join(cases, e.Name(), "repo"), c)
					res := s.run(t, bin, entry, c)
					s.check(t, entry, c, res)
				})
			}
		})
	}
}

// sandbox is one run's world: the repository, an output directory, a
// directory outside the repository (with files a hostile repository
// would like to read or write), HOME, TMPDIR, and a PATH of programs
// that must never run.
type sandbox struct {
	dir, repo, out, outside, tmp, marker string
	before                               map[string]string
	// env is more of the environment, besides the sandbox's own.
	env []string
}

func newSandbox(t *testing.T, repo string, c hostileCase) *sandbox {
	t.Helper()
	dir := t.TempDir()
	s := &sandbox{
		dir:     dir,
		repo:    filepath.Join(dir, "repo"),
		out:     filepath.Join(dir, "out"),
		outside: filepath.Join(dir, "outside"),
		tmp:     filepath.Join(dir, "tmp"),
		marker:  filepath.Join(dir, "PWNED"),
	}
	replacer := strings.NewReplacer("@MARKER@", s.marker, "@OUTSIDE@", s.outside)
	require.NoError(t, copyTree(repo, s.repo, replacer))
	for _, d := range []string{s.outside, s.tmp, filepath.Join(dir, "home"), filepath.Join(dir, "bin")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	// What a repository would like to read or overwrite outside itself.
	writeFile(t, filepath.Join(s.outside, "token"), "secret-token\n")
	writeFile(t, filepath.Join(s.outside, "base", "kustomization.yaml"), "resources: [token.yaml]\n")
	writeFile(t, filepath.Join(s.outside, "base", "token.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside}\ndata: {token: secret-token}\n")
	// Programs that must never run, and a kustomize plugin.
	trap := "#!/bin/sh\necho \"$0 $*\" >> " + s.marker + "\nexit 1\n"
	for _, p := range []string{"git", "ssh", "docker", "podman", "kubectl", "helm", "helmV3", "kustomize", "curl", "wget"} {
		writeExecutable(t, filepath.Join(dir, "bin", p), trap)
	}
	writeExecutable(t, filepath.Join(dir, "home", "plugins", "someteam.example.com", "v1", "chartinflator", "ChartInflator"), trap)
	for name, target := range c.Links {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(replacer.Replace(target), p))
	}
	for _, name := range c.FIFOs {
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, filepath.FromSlash(name)), 0o644))
	}
	s.before = snapshot(t, dir)
	return s
}

// result is one run's outcome.
type result struct {
	stdout, stderr string
	exit           int
	err            error
}

func (s *sandbox) run(t *testing.T, bin, entry string, c hostileCase) result {
	t.Helper()
	app := filepath.Join(s.repo, filepath.FromSlash(c.App))
	var args []string
	var stdin []byte
	dir := s.dir
	env := []string{
		"HOME=" + filepath.Join(s.dir, "home"),
		"TMPDIR=" + s.tmp,
		"XDG_CONFIG_HOME=" + filepath.Join(s.dir, "home", ".config"),
		"KUSTOMIZE_PLUGIN_HOME=" + filepath.Join(s.dir, "home", "plugins"),
		"PATH=" + filepath.Join(s.dir, "bin"),
	}
	env = append(env, s.env...)
	switch entry {
	case "build":
		args = []string{"build", app, "--root", s.repo}
	case "argocd":
		args, dir = []string{"argocd", "generate"}, app
		env = append(env, "ARGOCD_APP_SOURCE_PATH="+c.App)
		if c.Capabilities != "" {
			env = append(env, "ARGOCD_ENV_CAPABILITIES="+c.Capabilities)
		}
	case "render":
		args = []string{"render", "-f", app, "--output-dir", s.out}
		if c.Capabilities != "" {
			args = append(args, "--capabilities", filepath.Join(s.repo, filepath.FromSlash(c.Capabilities)))
		}
	case "migrate":
		args = []string{"migrate", app}
	case "function":
		stdin = resourceList(t, app)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeLimit)
	defer cancel()
	// The shell applies the memory bound to the renderer it execs; it is
	// the test's shell, not one on the sandbox's PATH.
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", fmt.Sprintf("ulimit -v %d && exec \"$0\" \"$@\"", virtualMemoryKiB), bin}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String(), exit: cmd.ProcessState.ExitCode(), err: err}
	if ctx.Err() != nil {
		res.err = fmt.Errorf("did not end within %s", timeLimit)
	}
	return res
}

func (s *sandbox) check(t *testing.T, entry string, c hostileCase, res result) {
	t.Helper()
	var exitErr *exec.ExitError
	if res.err != nil && !errors.As(res.err, &exitErr) {
		t.Fatalf("%s: %v\nstderr: %s", entry, res.err, res.stderr)
	}
	require.NoFileExists(t, s.marker, "a program other than the renderer ran: %s", readOr(s.marker))
	require.Contains(t, []int{0, 1}, res.exit, "exit %d (a crash, a signal or the memory bound)\nstderr: %s", res.exit, res.stderr)
	if res.exit == 1 {
		require.NotEmpty(t, strings.TrimSpace(res.stderr), "a failure says why")
	}
	// What a repository wrote reaches stderr escaped: nothing a terminal
	// acts on, and no line the repository began.
	for _, line := range strings.Split(res.stderr, "\n") {
		require.Equal(t, termsafe.Escape(line), line, "stderr holds a character a terminal acts on")
	}
	// The output of each entry point: --output-dir for render, the
	// directory it migrates for migrate, stdout for the rest.
	exempt := map[string]string{"render": s.out, "migrate": filepath.Join(s.repo, filepath.FromSlash(c.App))}[entry]
	after := snapshot(t, s.dir)
	for name, was := range s.before {
		if inside(filepath.Join(s.dir, name), exempt) {
			continue
		}
		require.Equal(t, was, after[name], "%s changed outside the output", name)
	}
	for name := range after {
		if _, ok := s.before[name]; !ok && !inside(filepath.Join(s.dir, name), exempt) {
			t.Fatalf("%s: %s was created outside the output", entry, name)
		}
	}
	want, ok := c.Expect[entry]
	if !ok {
		return
	}
	require.Equal(t, want.Exit, res.exit, "stderr: %s", res.stderr)
	for _, text := range want.Stderr {
		require.Contains(t, res.stderr, text)
	}
	for _, text := range want.Stdout {
		require.Contains(t, res.stdout, text)
	}
	if want.Exit == 1 {
		require.Empty(t, outputFiles(t, s.out), "a failed run writes nothing")
	}
}

func inside(p, dir string) bool {
	return dir != "" && (p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)))
}

// snapshot describes every entry under dir: a file by its mode and
// content hash, a link by its target, a directory by its mode.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "link " + target
			return err
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %v %x", info.Mode(), sha256.Sum256(data))
			return err
		}
		out[rel] = "other " + info.Mode().String()
		return nil
	})
	require.NoError(t, err)
	return out
}

func outputFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// resourceList is the KRM function's input for the repository: every
// document of every YAML file in the application's directory, as a
// ResourceList item, byte for byte (so the function sees what the files
// hold, hostile structure and all); kustomization files are left out, as
// kustomize leaves them out of what it passes.
func resourceList(t *testing.T, app string) []byte {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(app, func(p string, d fs.DirEntry, err error) error {
		name := strings.ToLower(d.Name())
		if err == nil && d.Type().IsRegular() && (strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) && !strings.HasPrefix(name, "kustomization.") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, doc := range documentSeparator.Split(string(data), -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			b.WriteString("- " + strings.ReplaceAll(strings.TrimRight(doc, "\n"), "\n", "\n  ") + "\n")
		}
	}
	return []byte(b.String())
}

var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

func copyTree(src, dst string, replacer *strings.Replacer) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, []byte(replacer.Replace(string(data))), info.Mode().Perm())
	})
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func writeExecutable(t *testing.T, p, content string) {
	t.Helper()
	writeFile(t, p, content)
	require.NoError(t, os.Chmod(p, 0o755))
}

func readOr(p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return string(data)
}

// TestBuildStopsAtItsTimeout: kustomize's work grows with the square of a
// kustomization's objects (5,000 ConfigMaps take about 20 s), so a build
// past its --timeout is stopped with an error and prints nothing. The
// error proves the timeout stopped it: a build that finishes stops its
// timer and prints its objects, and the timer, once it fires, says so and
// ends the process. How soon after the second that is depends on the
// machine: the bound only catches a build that never ends.
func TestBuildStopsAtItsTimeout(t *testing.T) {
	bin := renderBin(t)
	dir := t.TempDir()
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
	}
	writeFile(t, filepath.Join(dir, "app", "kustomization.yaml"), "resources: [many.yaml]\n")
	writeFile(t, filepath.Join(dir, "app", "many.yaml"), b.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeLimit)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, "build", filepath.Join(dir, "app"), "--root", dir, "--timeout", "1s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("stopped after %.1f s", time.Since(start).Seconds())
	require.NoError(t, ctx.Err(), "the build did not end within %s", timeLimit)
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, 1, exitErr.ExitCode(), "stderr: %s", stderr.String())
	require.Contains(t, stderr.String(), "[error] the build took longer than 1s and was stopped")
	require.Empty(t, stdout.String(), "a build its timeout stopped prints nothing")
}
