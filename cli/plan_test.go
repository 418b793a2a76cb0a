package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The plan of the kustomize example for each cluster, in every format,
// held to cli/testdata/plan/<cluster>.<format> (-update rewrites them).
func TestPlanGolden(t *testing.T) {
	for _, cluster := range []string{"dev", "prod"} {
		caps := "../examples/kustomize/clusters/" + cluster + "/capabilities.yaml"
		for _, format := range planFormats {
			t.Run(cluster+"/"+format, func(t *testing.T) {
				out, stderr, code := run(t, "", "plan", "-f", "../examples/kustomize/base", "--capabilities", caps, "-o", format)
				require.Equal(t, 0, code, stderr)
				golden := filepath.Join("testdata", "plan", cluster+"."+format)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
					require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "go test ./cli -run TestPlanGolden -update")
				require.Equal(t, string(want), out)
				if cluster == "prod" && format == "table" {
					doc, err := os.ReadFile("../docs/plan.md")
					require.NoError(t, err)
					require.Contains(t, string(doc), out, "docs/plan.md shows this plan; paste the new one")
				}
			})
		}
	}
}

// The JSON has what a pipeline reads, and the exit status says whether
// it fits: 3 when a pool is short, with the plan still printed.
func TestPlanJSONAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	caps := filepath.Join(dir, "caps.yaml")
	require.NoError(t, os.WriteFile(caps, []byte(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: small}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: h100
    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    gpu: {perNode: 8}
    nodes: {count: 1}
`), 0o644))
	models := filepath.Join(dir, "models.yaml")
	require.NoError(t, os.WriteFile(models, []byte(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: big, namespace: ml}
spec:
  model: {id: meta-llama/Llama-3.3-70B-Instruct}
  secrets: {huggingFaceToken: hf-token}
  engine: {type: vllm}
  resources: {gpu: {count: 8}}
  scaling: {replicas: 3}
`), 0o644))
	out, stderr, code := run(t, "", "plan", "-f", models, "--capabilities", caps, "-o", "json")
	require.Equal(t, exitShort, code, stderr)
	var p struct {
		Fits  bool
		Pools []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.False(t, p.Fits)
	require.Len(t, p.Pools, 1)
	for _, key := range []string{"name", "pods", "gpusRequested", "nodesNeeded", "nodesAvailable", "fits"} {
		require.Contains(t, p.Pools[0], key)
	}
	require.Equal(t, 3.0, p.Pools[0]["nodesNeeded"])
	require.Equal(t, 1.0, p.Pools[0]["nodesAvailable"])
	require.Equal(t, 2.0, p.Pools[0]["pendingPods"])

	out, _, code = run(t, "", "plan", "-f", models, "--capabilities", caps)
	require.Equal(t, exitShort, code)
	require.Contains(t, out, "no: short 2 node(s), 2 pod(s) pending")
	require.Contains(t, out, "Plan: does NOT fit.")
}

func TestPlanErrors(t *testing.T) {
	_, stderr, code := run(t, "", "plan", "-f", "../examples/kustomize/base")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "`--capabilities` must name the cluster's capability file")

	_, stderr, code = run(t, "", "plan", "-f", "../examples/kustomize/base", "--capabilities", "../examples/kustomize/clusters/dev/capabilities.yaml", "-o", "yaml")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "`-o` must be one of table, markdown, json, got \"yaml\"")

	// An input error: nothing on stdout, exit 1.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: x}\nspec: {engine: {type: vllm}}\n"), 0o644))
	out, stderr, code := run(t, "", "plan", "-f", bad, "--capabilities", "../examples/kustomize/clusters/dev/capabilities.yaml")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, stderr, "spec.model")

	// A capability file without pools has nothing to plan against.
	nopools := filepath.Join(dir, "caps.yaml")
	require.NoError(t, os.WriteFile(nopools, []byte("apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: x}\nspec: {providers: [{name: vllm}]}\n"), 0o644))
	out, stderr, code = run(t, "", "plan", "-f", "../examples/vllm-basic", "--capabilities", nopools)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.True(t, strings.Contains(stderr, "declares no node pools"), stderr)
}

// planCaps is diffCaps with the pool's size and price.
func planCaps(nodes int) string {
	return diffCaps("a100") + fmt.Sprintf("    nodes: {count: %d}\n    pricePerNodeHour: {amount: 10, currency: USD}\n", nodes)
}

// plan --base on a real repository with two commits: the second adds a
// model and doubles another; the diff names both, with the GPUs, nodes and
// cost they add; a pool that holds the pods but not their rolling update
// exits 4, one too small for the pods 3.
func TestPlanBase(t *testing.T) {
	r := newDiffTestRepo(t)
	r.commit("base", map[string]string{
		"clusters/prod/capabilities.yaml": planCaps(3),
		"models/qwen/model.yaml":          diffModel("qwen", 1, 2),
	})
	r.commit("more", map[string]string{
		"models/qwen/model.yaml":  diffModel("qwen", 2, 2),
		"models/llama/model.yaml": diffModel("llama", 1, 8),
	})
	args := []string{"plan", "-C", r.dir, "--base", "HEAD~1", "--capabilities", "clusters/prod/capabilities.yaml", "models"}
	out, stderr, code := run(t, "", args...)
	require.Equal(t, 0, code, stderr)
	want := `POOL  GPUS          NODES NEEDED  COST/MONTH                         FITS  MODELS CHANGED
gpu   2 → 12 (+10)  1 → 2 (+1)    7300.00 → 14600.00 (+7300.00 USD)  yes   +ml/llama (1 pod, 8 GPU), ml/qwen (1 → 2 pod, 2 → 4 GPU)

Against HEAD~1: nodes in use cost 7300.00 → 14600.00 (+7300.00 USD) a month; every pool holds its pods.
`
	require.Equal(t, want, out)

	out, _, code = run(t, "", append(args, "-o", "markdown")...)
	require.Equal(t, 0, code)
	require.Contains(t, out, "#### GPU plan against `HEAD~1`\n\n| POOL | GPUS |")
	require.Contains(t, out, "| gpu | 2 → 12 (+10) | 1 → 2 (+1) |")

	out, _, code = run(t, "", append(args, "-o", "json")...)
	require.Equal(t, 0, code)
	var d struct {
		After struct{ CostPerMonth float64 }
		Pools []struct {
			Name   string
			Models []struct{ Name string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.Equal(t, 14600.0, d.After.CostPerMonth)
	require.Len(t, d.Pools[0].Models, 2)

	// Two nodes hold the 12 GPUs, but not a rollout's surge pods (llama's
	// second 8-GPU pod, one more qwen pod): the next rollout would stall.
	r.write(map[string]string{"clusters/prod/capabilities.yaml": planCaps(2)})
	out, _, code = run(t, "", args...)
	require.Equal(t, exitRolloutShort, code, out)
	require.Contains(t, out, "  **no** (rollout stalls)  ")
	require.Contains(t, out, "every pool holds its pods, but NOT their rolling update")
	out, _, code = run(t, "", "plan", "--capabilities", filepath.Join(r.dir, "clusters/prod/capabilities.yaml"), filepath.Join(r.dir, "models"))
	require.Equal(t, exitRolloutShort, code, out)
	require.Contains(t, out, "no: a rolling update stalls, short 1 node(s)")
	require.Contains(t, out, "(stalls: short 1 node(s))")

	// The same change against a one-node pool: it does not fit.
	r.write(map[string]string{"clusters/prod/capabilities.yaml": planCaps(1)})
	out, _, code = run(t, "", args...)
	require.Equal(t, exitShort, code)
	require.Contains(t, out, "the change does NOT fit")

	// No change: said so, exit 0.
	r.write(map[string]string{"clusters/prod/capabilities.yaml": planCaps(3)})
	out, _, code = run(t, "", "plan", "-C", r.dir, "--base", "HEAD", "--capabilities", "clusters/prod/capabilities.yaml", "models")
	require.Equal(t, 0, code)
	require.Equal(t, "POOL  GPUS  NODES NEEDED  COST/MONTH  FITS  MODELS CHANGED\n\nNo change to any pool's pods, GPUs, nodes or cost against HEAD.\n", out)
}

// The pull request that first declares a cluster's pools compares against
// an empty plan (with a note), not an error; pods that fit no pool show in
// the diff's summary and fail it.
func TestPlanBaseWithoutPoolsAndUnplacedPods(t *testing.T) {
	r := newDiffTestRepo(t)
	noPools := strings.SplitN(planCaps(1), "  nodePools:", 2)[0]
	r.commit("base", map[string]string{
		"clusters/prod/capabilities.yaml": noPools,
		"models/qwen/model.yaml":          diffModel("qwen", 1, 2),
	})
	r.write(map[string]string{"clusters/prod/capabilities.yaml": planCaps(1)})
	args := []string{"plan", "-C", r.dir, "--base", "HEAD", "--capabilities", "clusters/prod/capabilities.yaml", "models"}
	out, stderr, code := run(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "declares no node pools: nothing to plan there")
	require.Contains(t, out, "gpu (new pool)")

	// A Dynamo model on a cluster without a CPU pool: its frontend has no
	// node selector, and the GPU pool, untainted, takes it (issue 35).
	withDynamo := strings.Replace(planCaps(1), "  - name: vllm\n", "  - name: dynamo\n    version: \"1.1.1\"\n  - name: vllm\n", 1)
	r.commit("pools", map[string]string{"clusters/prod/capabilities.yaml": withDynamo})
	r.write(map[string]string{"models/graph/model.yaml": strings.Replace(diffModel("graph", 1, 1), "name: vllm", "name: dynamo", 1)})
	out, stderr, code = run(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "+ml/graph (2 pod, 1 GPU)", "the worker and the frontend")
	require.Contains(t, out, "every pool holds its pods")
	require.NotContains(t, out, "fit no pool")

	// Tainted, the pool keeps the frontend off: the diff says so and fails.
	r.write(map[string]string{"clusters/prod/capabilities.yaml": strings.Replace(withDynamo, "    gpu:\n", "    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n    gpu:\n", 1)})
	out, stderr, code = run(t, "", args...)
	require.Equal(t, exitShort, code, stderr)
	require.Contains(t, out, "1 pod(s) fit no pool (0 before)")
	require.Contains(t, out, "the change does NOT fit")
}

// l4OnlyCaps is issue 35's cluster: untainted L4 nodes and no pool
// without GPUs; taints is the pool's taints line, if any.
func l4OnlyCaps(taints string) string {
	return `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: l4only}
spec:
  providers:
  - {name: kuberay, version: "1.4.2"}
  - {name: vllm}
  nodePools:
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
` + taints + `    gpu: {resourceName: nvidia.com/gpu, product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
    nodes: {count: 4}
`
}

const rayModel = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: m, namespace: inference}
spec:
  model: {id: Qwen/Qwen3-0.6B}
  provider: {name: kuberay}
  resources: {gpu: {count: 1}}
`

// Issue 35: a KubeRay head has no node selector on a cluster without a
// CPU pool; the untainted L4 nodes hold it, so the plan fits (exit 0) and
// warns that a CPU-only pod lands on a GPU pool, a warning the usual
// flags silence or make fatal. Tainted, the pool keeps it off: exit 3,
// and the plan says what to add.
func TestPlanPodWithoutSelector(t *testing.T) {
	dir := t.TempDir()
	caps, models := filepath.Join(dir, "caps.yaml"), filepath.Join(dir, "md.yaml")
	require.NoError(t, os.WriteFile(caps, []byte(l4OnlyCaps("")), 0o644))
	require.NoError(t, os.WriteFile(models, []byte(rayModel), 0o644))
	args := []string{"plan", "-f", models, "--capabilities", caps}
	warning := "[warning cpu-on-gpu-pool] ModelDeployment/inference/m: 1 pod(s) of RayService/m head request no GPUs and select no pool: " +
		"planned on GPU pool \"l4\", as no pool without GPUs takes them; add one to the capability file (`spec.nodePools`) to keep them off GPU nodes"

	out, stderr, code := run(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "Plan: every pool holds its pods.\n"+warning+"\n")
	require.Regexp(t, `l4 \(1 GPU/node\) +2 +1 +1 +4 +yes`, out, "the worker and the head on the pool, on one node")

	out, _, code = run(t, "", append(args, "-o", "json")...)
	require.Equal(t, 0, code)
	var p struct {
		Fits     bool
		Floating []struct {
			Object, Component, Pool string
			CPUOnGPUPool            bool
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &p))
	require.True(t, p.Fits)
	require.Len(t, p.Floating, 1)
	require.Equal(t, "l4", p.Floating[0].Pool)
	require.True(t, p.Floating[0].CPUOnGPUPool)

	requireCPUOnGPUPoolFlags(t, args)

	require.NoError(t, os.WriteFile(caps, []byte(l4OnlyCaps("    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n")), 0o644))
	out, stderr, code = run(t, "", args...)
	require.Equal(t, exitShort, code, stderr)
	require.Contains(t, out, "Plan: does NOT fit.\nUnplaced: 1 pod(s) of RayService/m head (model inference/m): it selects no pool (no node selector), and none takes it: "+
		"pool \"l4\" has taint \"nvidia.com/gpu=present:NoSchedule\", which it does not tolerate; add a pool without GPUs that takes it to the capability file (`spec.nodePools`), "+
		"or a toleration of \"nvidia.com/gpu=present:NoSchedule\" to its pod template (`spec.overrides`)\n")
}

// plan --base with issue 35's cluster: the pull request that adds a
// KubeRay model fits, its head on the L4 pool beside the worker.
func TestPlanBasePodWithoutSelector(t *testing.T) {
	r := newDiffTestRepo(t)
	r.commit("base", map[string]string{"clusters/l4/capabilities.yaml": l4OnlyCaps(""), "models/README": "models\n"})
	r.write(map[string]string{"models/m.yaml": rayModel})
	args := []string{"plan", "-C", r.dir, "--base", "HEAD", "--capabilities", "clusters/l4/capabilities.yaml", "models"}
	out, stderr, code := run(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "+inference/m (2 pod, 1 GPU)")
	require.Contains(t, out, "Against HEAD: every pool holds its pods.\n[warning cpu-on-gpu-pool] ModelDeployment/inference/m: 1 pod(s) of RayService/m head request no GPUs")
	requireCPUOnGPUPoolFlags(t, args)
}

// requireCPUOnGPUPoolFlags: the plan's cpu-on-gpu-pool warning of issue
// 35's Ray head is silenced by --ignore-warnings and fails the plan, with
// nothing on stdout, under --warnings-as-errors.
func requireCPUOnGPUPoolFlags(t *testing.T, args []string) {
	t.Helper()
	out, _, code := run(t, "", append(args, "--ignore-warnings", "cpu-on-gpu-pool")...)
	require.Equal(t, 0, code)
	require.NotContains(t, out, "cpu-on-gpu-pool")
	out, stderr, code := run(t, "", append(args, "--warnings-as-errors")...)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, stderr, "[error cpu-on-gpu-pool] ModelDeployment/inference/m: 1 pod(s) of RayService/m head")
}
