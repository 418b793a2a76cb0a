package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBuildWithoutTheRenderer: a kustomization that declares no
// airunway-render builds as kustomize builds it, its ModelDeployments
// unrendered, but not in silence (issue 35: exit 0, nothing on stderr):
// a warning names them and how to declare the renderer; the warning flags
// silence it or make it fatal, and a model under a misspelled group fails
// the build as it fails render.
func TestBuildWithoutTheRenderer(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [qwen.yaml]\n")
	writeFile(t, filepath.Join(dir, "qwen.yaml"), goodMD)

	out, stderr, code := run(t, "", "build", dir, "--root", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "kind: ModelDeployment")
	require.NotContains(t, out, "render.airunway.ai/", "unrendered")
	require.Equal(t, "[warning unrendered-models]: the kustomization declares no airunway-render function, so 1 ModelDeployment(s) come out unrendered: \"ml/qwen\"; list the renderer under `transformers:` of the overlay (as examples/kustomize/clusters/dev lists ../../render/exec), or render the output with `airunway-render render -f - --capabilities FILE`\n", stderr)

	out, stderr, code = run(t, "", "build", dir, "--root", dir, "--ignore-warnings", "unrendered-models")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.Contains(t, out, "kind: ModelDeployment")

	out, stderr, code = run(t, "", "build", dir, "--root", dir, "--warnings-as-errors")
	require.Equal(t, 1, code)
	require.Empty(t, out, "nothing is written")
	require.Contains(t, stderr, "[error unrendered-models]")

	writeFile(t, filepath.Join(dir, "qwen.yaml"), strings.Replace(goodMD, "airunway.ai/", "airunway.io/", 1))
	out, stderr, code = run(t, "", "build", dir, "--root", dir)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, stderr, `[error] airunway.io/v1alpha1/ModelDeployment/ml/qwen apiVersion: "airunway.io/v1alpha1" is not supported: the group is "airunway.io"`)
}

// TestBuildWithTheRendererSaysNothingMore: an overlay that runs the
// renderer gets no unrendered-models warning.
func TestBuildWithTheRendererSaysNothingMore(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "clusters", "dev")
	writeFile(t, filepath.Join(root, "apps", "qwen.yaml"), goodMD)
	writeFile(t, filepath.Join(root, "apps", "kustomization.yaml"), "resources: [qwen.yaml]\n")
	writeFile(t, filepath.Join(dir, "capabilities.yaml"), capsPinned)
	writeFile(t, filepath.Join(dir, "fn.yaml"), renderDeclaration)
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [../../apps, capabilities.yaml]\ntransformers: [fn.yaml]\n")
	t.Setenv(asFunction, "1")
	out, stderr, code := run(t, "", "build", dir, "--root", root)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "unrendered-models")
	require.Contains(t, out, "kind: Deployment")
}
