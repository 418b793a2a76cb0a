package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// --model-dir ID=DIR: the facts of a model the catalog does not know come
// from its own config.json, offline; a model directory of a 70B model
// makes one L4 too small, whatever the id says.
func TestRenderModelDir(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile("../hack/derive-model-catalog/sources/meta-llama--Meta-Llama-3.1-70B_config.json")
	require.NoError(t, err)
	weights := filepath.Join(dir, "weights")
	require.NoError(t, os.Mkdir(weights, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(weights, "config.json"), cfg, 0o644))
	caps, model := filepath.Join(dir, "caps.yaml"), filepath.Join(dir, "md.yaml")
	require.NoError(t, os.WriteFile(caps, []byte(l4OnlyCaps("")), 0o644))
	require.NoError(t, os.WriteFile(model, []byte(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: m, namespace: inference}
spec:
  model: {id: my-org/house-model}
  engine: {type: vllm, contextLength: 8192}
  resources: {gpu: {count: 1}}
`), 0o644))

	// Without the directory: not checked, and a warning says so.
	_, stderr, code := run(t, "", "render", "-f", model, "--capabilities", caps)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "[warning unknown-model]")

	_, stderr, code = run(t, "", "render", "-f", model, "--capabilities", caps, "--model-dir", "my-org/house-model="+weights)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, `my-org/house-model does not fit 1 GPU of pool "l4"`)
	require.Contains(t, stderr, "the model directory "+weights)

	_, stderr, code = run(t, "", "render", "-f", model, "--capabilities", caps, "--model-dir", weights)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "want ID=DIR")
	_, stderr, code = run(t, "", "render", "-f", model, "--capabilities", caps, "--model-dir", "x="+dir)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "config.json")
}
