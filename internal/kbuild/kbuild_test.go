package kbuild_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/fn"
	"github.com/airunway-render/airunway-render/internal/kbuild"
)

// asFunction makes this test binary the KRM function when kustomize runs
// it: the environment is inherited by the function's process, which
// kustomize starts without arguments (go test always passes some, to the
// tests and to fuzzing workers alike).
const asFunction = "KBUILD_TEST_AS_FUNCTION"

func TestMain(m *testing.M) {
	if os.Getenv(asFunction) == "1" && len(os.Args) == 1 {
		os.Exit(fn.Run(os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(asFunction) == "1" && len(os.Args) == 2 && os.Args[1] == "migrate" {
		os.Exit(fn.RunMigrate(os.Stdin, os.Stdout, os.Stderr, ""))
	}
	os.Exit(m.Run())
}

var repo = filepath.Join("..", "..")

func build(t *testing.T, dir string, root string) (string, error) {
	t.Helper()
	t.Setenv(asFunction, "1")
	self, err := os.Executable()
	require.NoError(t, err)
	res, err := kbuild.Build(dir, kbuild.Options{Function: self, Root: root})
	return string(res.YAML), err
}

// TestProdOverlay: the prod overlay's patch reaches the renderer, which
// renders for prod's capability file.
func TestProdOverlay(t *testing.T) {
	out, err := build(t, filepath.Join(repo, "examples/kustomize/clusters/prod"), repo)
	require.NoError(t, err)
	require.Contains(t, out, "kind: DynamoGraphDeployment")
	require.Contains(t, out, "render.airunway.ai/node-pool: a100")
	// The overlay's patch: two replicas of qwen3-0-6b.
	md := out[strings.Index(out, "  name: qwen3-0-6b\n"):]
	md = md[:strings.Index(md, "\n---\n")]
	require.Contains(t, md, "replicas: 2")
}

// writeTree writes files (name -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

const model = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: m
  namespace: inference
spec:
  model: {id: Qwen/Qwen3-0.6B}
  engine: {type: vllm}
  resources: {gpu: {count: 1}}
`

func overlay(declaration string) map[string]string {
	return map[string]string{
		"base/kustomization.yaml":    "resources: [m.yaml]\n",
		"base/m.yaml":                model,
		"app/kustomization.yaml":     "resources: [../base]\ntransformers: [fn.yaml]\n",
		"app/fn.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: render\n  annotations:\n    config.kubernetes.io/function: |\n" + declaration,
		"app/capabilities.unused":    "",
		"outside/kustomization.yaml": "resources: [m.yaml]\n",
		"outside/m.yaml":             model,
	}
}

// TestDeclarationsRunThisBinary: an exec path and an image named
// airunway-render both run as the given executable, with the same output.
func TestDeclarationsRunThisBinary(t *testing.T) {
	var outs []string
	for _, decl := range []string{
		"      exec:\n        path: ../../../bin/airunway-render\n",
		"      container:\n        image: ghcr.io/airunway-render/airunway-render:v0.1.0\n",
		"      container:\n        image: registry.example.com/mirror/airunway-render@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
	} {
		dir := t.TempDir()
		writeTree(t, dir, overlay(decl))
		out, err := build(t, filepath.Join(dir, "app"), dir)
		require.NoError(t, err, decl)
		require.Contains(t, out, "kind: DynamoGraphDeployment", "rendered by the function (the embedded default picks Dynamo)")
		outs = append(outs, out)
	}
	require.Equal(t, outs[0], outs[1])
	require.Equal(t, outs[0], outs[2])
}

// TestFunctionArgs: the arguments Build is given reach the function (with
// `migrate`, the models come out unrendered), and those a declaration in
// Git names never do.
func TestFunctionArgs(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, overlay("      exec:\n        path: airunway-render\n        args: [\"--evil\"]\n"))
	t.Setenv(asFunction, "1")
	self, err := os.Executable()
	require.NoError(t, err)
	res, err := kbuild.Build(filepath.Join(dir, "app"), kbuild.Options{Function: self, FunctionArgs: []string{"migrate"}, Root: dir})
	require.NoError(t, err)
	require.Contains(t, string(res.YAML), "kind: ModelDeployment")
	require.NotContains(t, string(res.YAML), "kind: DynamoGraphDeployment", "migrate renders nothing")
	out, err := build(t, filepath.Join(dir, "app"), dir)
	require.NoError(t, err, "the declaration's own --evil is dropped")
	require.Contains(t, out, "kind: DynamoGraphDeployment")
}

// TestOtherFunctionsRefused: a kustomization that declares another
// program is not run.
func TestOtherFunctionsRefused(t *testing.T) {
	for decl, says := range map[string]string{
		"      exec:\n        path: /bin/sh\n":                       `exec "/bin/sh"`,
		"      container:\n        image: example.com/other-fn:v1\n": `image "example.com/other-fn:v1"`,
		"      exec:\n        path: ./airunway-render-helper\n":      `exec "./airunway-render-helper"`,
	} {
		dir := t.TempDir()
		writeTree(t, dir, overlay(decl))
		out, err := build(t, filepath.Join(dir, "app"), dir)
		require.Error(t, err, decl)
		require.Empty(t, out)
		require.Contains(t, err.Error(), `ConfigMap "render" declares the function `+says)
		require.Contains(t, err.Error(), "build runs only airunway-render")
	}
}

// TestConfinedToRoot: with a root, a kustomization cannot read a file or
// a base outside it.
func TestConfinedToRoot(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, overlay("      exec:\n        path: airunway-render\n"))
	repoDir := filepath.Join(dir, "app")
	writeTree(t, repoDir, map[string]string{"escape/kustomization.yaml": "resources: [../../outside]\n"})
	_, err := build(t, filepath.Join(repoDir, "escape"), repoDir)
	require.Error(t, err)
	require.Contains(t, err.Error(), "is outside the repository")

	// A symbolic link out of the root is followed before the check.
	require.NoError(t, os.Symlink(filepath.Join(dir, "outside"), filepath.Join(repoDir, "link")))
	writeTree(t, repoDir, map[string]string{"viaLink/kustomization.yaml": "resources: [../link]\n"})
	_, err = build(t, filepath.Join(repoDir, "viaLink"), repoDir)
	require.Error(t, err)
	require.Contains(t, err.Error(), "is outside the repository")

	// With the whole directory as the root, the same base builds.
	out, err := build(t, filepath.Join(repoDir, "escape"), dir)
	require.NoError(t, err)
	require.Contains(t, out, "kind: ModelDeployment")
}

// TestRemoteRefused: a confined build fetches nothing: a URL or a remote
// repository in a kustomization is refused before kustomize loads it.
func TestRemoteRefused(t *testing.T) {
	for _, ref := range []string{"https://example.com/x.yaml", "github.com/example/models//base?ref=v1", "git@github.com:example/models.git", "ssh://git@example.com/models.git"} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"app/kustomization.yaml": "resources:\n- " + ref + "\n"})
		_, err := build(t, filepath.Join(dir, "app"), dir)
		require.Error(t, err, ref)
		require.Contains(t, err.Error(), "`resources[0]` is \""+ref+"\", a remote reference")
	}
	// A local directory whose name has a dot is not remote.
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"app/kustomization.yaml":                "resources:\n- models.v1/base\n",
		"app/models.v1/base/kustomization.yaml": "resources: [m.yaml]\n",
		"app/models.v1/base/m.yaml":             model,
	})
	out, err := build(t, filepath.Join(dir, "app"), dir)
	require.NoError(t, err)
	require.Contains(t, out, "kind: ModelDeployment")
}

// TestUnreadableDeclarationRefused: a file that names the function
// annotation but is not YAML is refused, and nothing runs.
func TestUnreadableDeclarationRefused(t *testing.T) {
	dir := t.TempDir()
	files := overlay("      exec:\n        path: airunway-render\n")
	files["app/fn.yaml"] = "metadata:\n  annotations:\n    config.kubernetes.io/function: [unclosed\n"
	writeTree(t, dir, files)
	_, err := build(t, filepath.Join(dir, "app"), dir)
	require.Error(t, err)
	require.Contains(t, err.Error(), "MalformedYAMLError")
}

// TestFileSystemRoot: the file system's root is a root like any other
// (build's default outside a Git working tree).
func TestFileSystemRoot(t *testing.T) {
	out, err := build(t, filepath.Join(repo, "examples/kustomize/clusters/dev"), string(filepath.Separator))
	require.NoError(t, err)
	require.Contains(t, out, "kind: Deployment")
}
