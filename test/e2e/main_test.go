package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/ownci"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
)

// kustomizeVersion must match the Makefile: v5.8.3 needs Go 1.27.
const kustomizeVersion = "v5.8.2"

var (
	// repoRoot is the module root; `go test` runs in test/e2e.
	repoRoot string
	// scratch holds a binary built by the tests; removed in TestMain.
	scratch string

	binariesMu sync.Mutex
	binaries   = map[string]string{}

	kustomizeOnce sync.Once
	kustomizePath string
	kustomizeErr  error
)

func TestMain(m *testing.M) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "go.mod"))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot find the module root: %v\n", err)
		os.Exit(1)
	}
	repoRoot = root
	code := m.Run()
	if scratch != "" {
		os.RemoveAll(scratch)
	}
	os.Exit(code)
}

// renderBin returns the absolute path of the function binary: the one
// `make build` made (AIRUNWAY_RENDER_BIN), or one built once here, so a plain
// `go test ./...` still tests a real binary.
func renderBin(t *testing.T) string {
	t.Helper()
	return builtBinary(t, "AIRUNWAY_RENDER_BIN", "airunway-render")
}

// reporterBin is renderBin for the status reporter.
func reporterBin(t *testing.T) string {
	t.Helper()
	return builtBinary(t, "AIRUNWAY_STATUS_REPORTER_BIN", "airunway-status-reporter")
}

func builtBinary(t *testing.T, envVar, cmd string) string {
	t.Helper()
	binariesMu.Lock()
	defer binariesMu.Unlock()
	if p, ok := binaries[cmd]; ok {
		return p
	}
	var path string
	if p := os.Getenv(envVar); p != "" {
		abs, err := filepath.Abs(p)
		require.NoError(t, err)
		_, err = os.Stat(abs)
		require.NoError(t, err, "%s (set %s or fix the build)", cmd, envVar)
		path = abs
	} else {
		if scratch == "" {
			dir, err := os.MkdirTemp("", "airunway-e2e-")
			require.NoError(t, err)
			scratch = dir
		}
		path = filepath.Join(scratch, cmd)
		build := exec.Command("go", "build", "-trimpath", "-o", path, "./cmd/"+cmd)
		build.Dir = repoRoot
		// Static like `make build`, so the image test can use it on scratch.
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "go build %s:\n%s", cmd, out)
	}
	binaries[cmd] = path
	return path
}

// kustomizeBin returns standalone kustomize. It is never skipped: kubectl's
// embedded kustomize lacks --enable-exec, so only this binary proves the
// transformer path works.
func kustomizeBin(t *testing.T) string {
	t.Helper()
	kustomizeOnce.Do(func() {
		if p := os.Getenv("KUSTOMIZE"); p != "" {
			kustomizePath, kustomizeErr = filepath.Abs(p)
			return
		}
		cache, err := os.UserCacheDir()
		if err != nil {
			kustomizeErr = err
			return
		}
		dir := filepath.Join(cache, "airunway-render", "tools", "kustomize-"+kustomizeVersion)
		cmd := exec.Command(filepath.Join(repoRoot, "hack", "install-kustomize.sh"), dir)
		cmd.Env = append(os.Environ(), "KUSTOMIZE_VERSION="+kustomizeVersion)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			kustomizeErr = fmt.Errorf("hack/install-kustomize.sh: %v\n%s", err, stderr.String())
			return
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		kustomizePath = lines[len(lines)-1]
	})
	require.NoError(t, kustomizeErr, "standalone kustomize (set KUSTOMIZE or fix hack/install-kustomize.sh)")
	return kustomizePath
}

// kptBin returns kpt, or skips: kpt cannot be built from the module proxy,
// so machines without a preinstalled kpt cannot run these tests (this
// repository's CI has it, and fails instead: internal/testing/ownci).
func kptBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kpt")
	if err != nil {
		ownci.Skip(t, "kpt is not on PATH (it cannot be installed from the module proxy); skipping kpt test")
	}
	return p
}

type result struct {
	stdout, stderr string
	exit           int
}

// run executes a command and returns its output and exit code; it fails
// the test only when the command could not start at all.
func run(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	return runStdin(t, "", dir, env, name, args...)
}

// runStdin is run with stdin fed from a string.
func runStdin(t *testing.T, stdin, dir string, env []string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s (%.2fs)", filepath.Base(name), strings.Join(args, " "), time.Since(start).Seconds())
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.exit = exitErr.ExitCode()
	case err != nil:
		require.NoError(t, err, "starting %s %v\nstderr:\n%s", name, args, res.stderr)
	}
	return res
}

// mustRun is run that requires exit 0 and puts stderr in the failure.
func mustRun(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	res := run(t, dir, env, name, args...)
	require.Zero(t, res.exit, "%s %s failed\nstderr:\n%s\nstdout:\n%s", name, strings.Join(args, " "), res.stderr, res.stdout)
	return res
}

// copyDir copies a directory tree of regular files.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	require.NoError(t, err)
}

// readTree returns every regular file under dir by slash-separated
// relative path; comparing two of these shows exactly which file changed.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	require.NoError(t, err)
	return files
}

// requireSameTree compares two readTree results file by file, so a failure
// shows the one file that differs rather than the whole tree.
func requireSameTree(t *testing.T, want, got map[string]string) {
	t.Helper()
	require.Equal(t, keys(want), keys(got), "file sets differ")
	for _, name := range keys(want) {
		require.Equal(t, want[name], got[name], "%s differs", name)
	}
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// editFile applies a textual edit and fails if it changed nothing, so a
// test never runs silently against an unmodified input.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), old, "edit anchor missing in %s", path)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
}

// parseObjects reads a YAML stream or a ResourceList (unwrapped).
func parseObjects(t *testing.T, data string) []*yaml.RNode {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(data))
	require.NoError(t, err, "parsing output:\n%s", data)
	return nodes
}

// findObject returns the object with this identity, or nil.
func findObject(nodes []*yaml.RNode, apiVersion, kind, namespace, name string) *yaml.RNode {
	for _, n := range nodes {
		if n.GetApiVersion() == apiVersion && n.GetKind() == kind && n.GetNamespace() == namespace && n.GetName() == name {
			return n
		}
	}
	return nil
}

func requireObject(t *testing.T, nodes []*yaml.RNode, apiVersion, kind, namespace, name string) *yaml.RNode {
	t.Helper()
	n := findObject(nodes, apiVersion, kind, namespace, name)
	require.NotNil(t, n, "%s %s %s/%s missing; got %v", apiVersion, kind, namespace, name, identities(nodes))
	return n
}

func identities(nodes []*yaml.RNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("%s/%s %s/%s", n.GetApiVersion(), n.GetKind(), n.GetNamespace(), n.GetName()))
	}
	return out
}

// decodeStrict decodes into a typed API object and rejects unknown fields,
// so a generated object that the real Go type cannot hold fails here.
func decodeStrict(t *testing.T, n *yaml.RNode, into any) {
	t.Helper()
	s, err := n.String()
	require.NoError(t, err)
	require.NoError(t, sigsyaml.UnmarshalStrict([]byte(s), into), "decoding:\n%s", s)
}

// requireSchemaValid validates an object against the real schema of its
// kind: a built-in kind by strict decoding, a custom resource against the
// newest embedded release of its CRD (schemas/).
func requireSchemaValid(t *testing.T, n *yaml.RNode) {
	t.Helper()
	s, err := n.String()
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, sigsyaml.Unmarshal([]byte(s), &obj))
	require.Empty(t, schemacheck.Check(obj), "%s %s is not valid:\n%s", n.GetKind(), n.GetName(), s)
}

// orchestratorPrefixes are bookkeeping annotations kustomize and kpt add
// while a function runs; they must never reach the rendered output.
var orchestratorPrefixes = []string{
	"internal.config.kubernetes.io/",
	"config.kubernetes.io/index",
	"config.kubernetes.io/path",
	"config.k8s.io/id",
	"kustomize.config.k8s.io/",
}

func requireNoOrchestratorAnnotations(t *testing.T, nodes []*yaml.RNode) {
	t.Helper()
	for _, n := range nodes {
		for k := range n.GetAnnotations() {
			for _, p := range orchestratorPrefixes {
				require.False(t, strings.HasPrefix(k, p), "%s %s carries annotation %s", n.GetKind(), n.GetName(), k)
			}
		}
	}
}

// renderAnnotations are what every rendered ModelDeployment must carry.
func requireRenderedMD(t *testing.T, md *yaml.RNode, provider string) {
	t.Helper()
	a := md.GetAnnotations()
	require.Equal(t, "true", a["airunway.ai/reconcile-paused"], "annotations: %v", a)
	require.Equal(t, "vllm", a["render.airunway.ai/engine"], "annotations: %v", a)
	require.Equal(t, provider, a["render.airunway.ai/provider"], "annotations: %v", a)
	require.NotEmpty(t, a["render.airunway.ai/provider-reason"], "annotations: %v", a)
}

// badInput is an edit to one file of an example that the renderer must
// reject, and what its error must say (field path, wording, resource).
type badInput struct {
	name     string
	file     string
	old, new string
	want     []string
}

// badInputs apply to both the kustomize and the kpt example: each has a
// ModelDeployment with a top-level `spec:` and a `  resources:` block, and
// a capability file that declares the vllm provider.
var badInputs = []badInput{
	{
		name: "replicas above the limit",
		file: "modeldeployment.yaml",
		old:  "\n  resources:\n",
		new:  "\n  scaling:\n    replicas: 99\n  resources:\n",
		want: []string{"spec.scaling.replicas", "must", "ModelDeployment/inference/"},
	},
	{
		name: "unknown field",
		file: "modeldeployment.yaml",
		old:  "\nspec:\n",
		new:  "\nspec:\n  bogus: 1\n",
		want: []string{"spec.bogus", "unknown field", "ModelDeployment/inference/"},
	},
	{
		name: "unknown provider in the capability file",
		file: "capabilities.yaml",
		old:  "  - name: vllm\n",
		new:  "  - name: nope\n",
		want: []string{"spec.providers[0].name", "must be one of", "ClusterCapabilities/"},
	},
}
