package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// plan's memory table: one replica's need against its GPUs, from the
// renderer's estimate, or why it was not checked.
func TestPlanMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	known := write("known.yaml", diffModel("qwen", 1, 1))
	unknown := write("unknown.yaml", strings.Replace(diffModel("house", 1, 1), "Qwen/Qwen3-0.6B", "example-org/house-model", 1))
	withMemory := write("caps.yaml", diffCaps("a100"))
	withoutMemory := write("nomem.yaml", strings.Replace(diffCaps("a100"), "      memoryMiB: 81920\n", "", 1))
	for _, c := range []struct {
		name   string
		caps   string
		models []string
		want   []string
	}{
		{"fits", withMemory, []string{known},
			[]string{"Memory per replica:\nMODEL    POOL  GPUS/REPLICA  NEEDED MIB  AVAILABLE MIB  HEADROOM  KV TOKENS  CONCURRENCY    FIT  SOURCE\nml/qwen  gpu   1             8,145       73,098         88%       634,832    15.49× 40,960  yes  catalog\n"}},
		{"unknown model", withMemory, []string{unknown},
			[]string{"ml/house  gpu   1             -           -              -         -          -            - (unknown model: no facts about it (docs/will-it-run.md))  -"}},
		{"pool without memoryMiB", withoutMemory, []string{known},
			[]string{`ml/qwen  gpu   1             -           -              -         -          -            - (pool "gpu" states no gpu.memoryMiB)  -`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"plan", "--capabilities", c.caps, "--ignore-warnings", "unknown-model"}
			for _, m := range c.models {
				args = append(args, "-f", m)
			}
			out, stderr, code := run(t, "", args...)
			require.Equal(t, 0, code, stderr)
			for _, w := range c.want {
				require.Contains(t, out, w)
			}
			out, stderr, code = run(t, "", append(args, "-o", "markdown")...)
			require.Equal(t, 0, code, stderr)
			require.Contains(t, out, "**Memory per replica**\n\n| MODEL | POOL | GPUS/REPLICA | NEEDED MIB | AVAILABLE MIB | HEADROOM | KV TOKENS | CONCURRENCY | FIT | SOURCE |\n")
		})
	}

	out, stderr, code := run(t, "", "plan", "--capabilities", withMemory, "-f", known, "-o", "json")
	require.Equal(t, 0, code, stderr)
	var p struct{ Memory []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.Len(t, p.Memory, 1)
	// The GPU (no product) is assumed at its label less 700 MiB; vLLM
	// v0.11.0 runs by v0.11.1's rules.
	require.Equal(t, map[string]any{"namespace": "ml", "name": "qwen", "modelId": "Qwen/Qwen3-0.6B", "pool": "gpu", "gpusPerReplica": 1.0,
		"neededMiB": 8145.0, "availableMiB": 73098.0, "headroomPercent": 88.0, "source": "catalog", "status": "fits",
		"engine": "vLLM v0.11–v0.15", "kvCacheTokens": 634832.0, "maxConcurrency": 15.49, "contextLength": 40960.0,
		"perGPU": map[string]any{"totalMiB": 81220.0, "usableMiB": 73098.0, "weightsMiB": 1137.0, "nonTorchMiB": 256.0,
			"activationMiB": 2270.0, "cudaGraphMiB": 860.0, "kvCacheMiB": 69435.0}}, p.Memory[0])
	pg := p.Memory[0]["perGPU"].(map[string]any)
	require.Equal(t, pg["usableMiB"].(float64)-pg["weightsMiB"].(float64)-pg["nonTorchMiB"].(float64)-pg["activationMiB"].(float64), pg["kvCacheMiB"], "vLLM's KV cache: what the usable share leaves")
}

// plan --base shows a model whose fit changed: here the pool's GPUs
// shrink from 80 GiB to 8,100 MiB, and Qwen3-0.6B becomes a tight fit
// (its KV cache holds one 40,960-token sequence by less than the
// estimate's error).
func TestPlanBaseMemory(t *testing.T) {
	r := newDiffTestRepo(t)
	r.commit("base", map[string]string{
		"clusters/prod/capabilities.yaml": planCaps(2),
		"models/qwen/model.yaml":          diffModel("qwen", 1, 1),
	})
	r.write(map[string]string{"clusters/prod/capabilities.yaml": strings.Replace(planCaps(2), "memoryMiB: 81920", "memoryMiB: 8100", 1)})
	args := []string{"plan", "-C", r.dir, "--base", "HEAD", "--capabilities", "clusters/prod/capabilities.yaml", "--ignore-warnings", "idle-gpus,tight-fit", "models"}
	out, stderr, code := run(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, `POOL  GPUS  NODES NEEDED  COST/MONTH  FITS  MODELS CHANGED

Memory per replica, changed:
MODEL    POOL  GPUS/REPLICA  NEEDED MIB     AVAILABLE MIB   HEADROOM  KV TOKENS         CONCURRENCY                   FIT
ml/qwen  gpu   1             8,145 → 6,479  73,098 → 6,660  88% → 2%  634,832 → 42,960  15.49× 40,960 → 1.04× 40,960  yes → tight

Against HEAD: nodes in use cost 7300.00 USD a month; every pool holds its pods.
`, out)

	out, _, code = run(t, "", append(args, "-o", "markdown")...)
	require.Equal(t, 0, code)
	require.Contains(t, out, "**Memory per replica, changed**\n\n| MODEL | POOL |")
	require.Contains(t, out, "| ml/qwen | gpu | 1 | 8,145 → 6,479 | 73,098 → 6,660 | 88% → 2% | 634,832 → 42,960 | 15.49× 40,960 → 1.04× 40,960 | yes → tight |")

	out, _, code = run(t, "", append(args, "-o", "json")...)
	require.Equal(t, 0, code)
	var d struct {
		Memory []struct {
			Name          string
			Before, After struct{ Status string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.Len(t, d.Memory, 1)
	require.Equal(t, "fits", d.Memory[0].Before.Status)
	require.Equal(t, "tight", d.Memory[0].After.Status)
}
