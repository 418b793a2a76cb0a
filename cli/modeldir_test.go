package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// --model-dir ID=DIR: the facts of a model the catalog does not know come
// from its own config.json, offline; a model directory of a 70B model
// makes one L4 too small, whatever the id says.
func TestRenderModelDir(t *testing.T) {
	dir, weights, caps, model := modelDirFixture(t, "meta-llama--Meta-Llama-3.1-70B_config.json", "")

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

// plan and preview take --model-dir as render does: the memory table's
// source is model-dir, and a preview of an upgrade holds the model's own
// facts to the GPUs before and after.
func TestPlanAndPreviewModelDir(t *testing.T) {
	dir, weights, caps, model := modelDirFixture(t, "Qwen--Qwen3-0.6B_config.json", "  provider: {name: vllm}\n")
	flag := "my-org/house-model=" + weights

	out, stderr, code := run(t, "", "plan", "-f", model, "--capabilities", caps)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "inference/m  l4    1             -           -              -         -          -            - (unknown model")
	out, stderr, code = run(t, "", "plan", "-f", model, "--capabilities", caps, "--model-dir", flag)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "inference/m  l4    1             2,857       20,754         86%       171,824    20.97× 8,192  yes  model-dir\n")

	// Smaller GPUs after the upgrade: the model's own facts say it still
	// fits, tighter.
	smaller := filepath.Join(dir, "smaller.yaml")
	require.NoError(t, os.WriteFile(smaller, []byte(strings.Replace(l4OnlyCaps(""), "memoryMiB: 23034", "memoryMiB: 6000", 1)), 0o644))
	out, stderr, code = run(t, "", "preview", "--from", caps, "--to", smaller, "-f", model, "--model-dir", flag)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "note: ModelDeployment/inference/m: a tighter fit (fits → fits): one replica of my-org/house-model on 1 GPU of pool \"l4\" needs 2,857 MiB and gets 20,754 → 4,876 MiB (headroom 86% → 41%, model facts from the model-dir); its KV cache holds 171,824 → 26,656 tokens")
	require.Contains(t, out, "model facts from the model-dir")

	_, stderr, code = run(t, "", "preview", "--from", caps, "--to", smaller, "-f", model, "--model-dir", weights)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "want ID=DIR")
	_, stderr, code = run(t, "", "plan", "-f", model, "--capabilities", caps, "--model-dir", weights)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "want ID=DIR")
}

// modelDirFixture lays out, in a temporary dir, a model directory holding
// the catalog source config (a file of hack/derive-model-catalog/sources),
// issue 35's L4-only capability file, and a model the catalog does not
// know, my-org/house-model, with extraSpec added to its spec.
func modelDirFixture(t *testing.T, config, extraSpec string) (dir, weights, caps, model string) {
	t.Helper()
	dir = t.TempDir()
	cfg, err := os.ReadFile("../hack/derive-model-catalog/sources/" + config)
	require.NoError(t, err)
	weights = filepath.Join(dir, "weights")
	require.NoError(t, os.Mkdir(weights, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(weights, "config.json"), cfg, 0o644))
	caps, model = filepath.Join(dir, "caps.yaml"), filepath.Join(dir, "md.yaml")
	require.NoError(t, os.WriteFile(caps, []byte(l4OnlyCaps("")), 0o644))
	require.NoError(t, os.WriteFile(model, []byte(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: m, namespace: inference}
spec:
  model: {id: my-org/house-model}
`+extraSpec+`  engine: {type: vllm, contextLength: 8192}
  resources: {gpu: {count: 1}}
`), 0o644))
	return dir, weights, caps, model
}
