package plan_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/plan"
	"github.com/airunway-render/airunway-render/render"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// resolve reads a capability file.
func resolve(t *testing.T, text string) *capabilities.Resolved {
	t.Helper()
	node, err := yaml.Parse(text)
	require.NoError(t, err)
	caps, problems := capabilities.ResolveNode(node)
	require.False(t, problems.HasErrors(), "%v", problems)
	return caps
}

// renderItems renders models for caps, failing on any error.
func renderItems(t *testing.T, caps *capabilities.Resolved, models string) []*yaml.RNode {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(models)}).Read()
	require.NoError(t, err)
	res := render.Render(items, render.Options{Capabilities: caps})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	return res.Items
}

func compute(t *testing.T, capsText, models string) *plan.Plan {
	t.Helper()
	caps := resolve(t, capsText)
	p, err := plan.Compute(renderItems(t, caps, models), caps)
	require.NoError(t, err)
	return p
}

func pool(t *testing.T, p *plan.Plan, name string) plan.Pool {
	t.Helper()
	for _, pl := range p.Pools {
		if pl.Name == name {
			return pl
		}
	}
	t.Fatalf("no pool %q in the plan", name)
	return plan.Pool{}
}

const eightGPUCluster = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: test}
spec:
  providers:
  - {name: vllm}
  - {name: dynamo, version: "1.1.1"}
  - {name: kuberay, version: "1.3.0"}
  - {name: kaito, version: "0.10.0"}
  nodePools:
  - name: h100
    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {product: NVIDIA-H100-80GB-HBM3, perNode: 8}
    nodes: {count: %d}
    pricePerNodeHour: {amount: 98.32, currency: USD}
  - name: cpu
    selector: {node.kubernetes.io/pool: cpu}
    capacity: {cpu: "16", memory: 64Gi}
    nodes: {min: 1, max: 3}
`

func model(name, provider string, gpus, replicas int, extra string) string {
	return fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: %s, namespace: ml}
spec:
  model: {id: Qwen/Qwen3-8B}
  provider: {name: %s%s}
  engine: {type: vllm, contextLength: 8192}
  resources: {gpu: {count: %d}}
  scaling: {replicas: %d}
`, name, provider, extra, gpus, replicas)
}

// A pod never spans nodes: two 4-GPU and one 8-GPU pod need two 8-GPU
// nodes only when the 4s share one; three 5-GPU pods need three.
func TestPackingNeverSplitsAPod(t *testing.T) {
	for _, tc := range []struct {
		name    string
		models  string
		nodes   int32
		idle    int64
		pending int32
		count   int
	}{
		{"4+4 share a node, 8 takes one", model("a", "vllm", 4, 2, "") + "---\n" + model("b", "vllm", 8, 1, ""), 2, 0, 0, 2},
		{"5-GPU pods one per node", model("a", "vllm", 5, 3, ""), 3, 9, 1, 2},
		{"1-GPU pods fill a node", model("a", "vllm", 1, 8, ""), 1, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compute(t, fmt.Sprintf(eightGPUCluster, tc.count), tc.models)
			h := pool(t, p, "h100")
			require.Equal(t, tc.nodes, *h.NodesNeeded)
			require.Equal(t, tc.idle, h.IdleGPUs)
			require.Equal(t, tc.pending, h.PendingPods)
			require.Equal(t, tc.pending == 0, h.Fits)
			require.Equal(t, max(0, tc.nodes-int32(tc.count)), h.ShortNodes)
		})
	}
}

func TestDeploymentSurgeIsAQuarterRoundedUp(t *testing.T) {
	p := compute(t, fmt.Sprintf(eightGPUCluster, 4), model("a", "vllm", 2, 5, ""))
	h := pool(t, p, "h100")
	require.Equal(t, int32(5), h.Pods)
	require.Equal(t, int32(2), h.Rollout.Pods, "ceil(25%% of 5)")
	require.Equal(t, int64(4), h.Rollout.GPUs)
	// 5×2 GPUs on two nodes (8+2), the surge's 4 more fit beside them.
	require.Equal(t, int32(2), *h.NodesNeeded)
	require.Equal(t, int32(0), h.Rollout.Nodes)
}

// A rollout over the pool's size stalls only where the workload may not
// take an old pod down first: a Deployment of fewer than 4 replicas at
// the defaults (maxUnavailable 25% rounds down to 0) must surge; one of 4
// takes a pod down and puts the new one in its place.
func TestRolloutStallsOnlyWhereItMustSurge(t *testing.T) {
	for _, tc := range []struct {
		name           string
		gpus, replicas int
		nodes          int
		fits, proceeds bool
		short          int32
	}{
		// 3×8 GPUs on 3 nodes; the surge pod needs a fourth.
		{"3 replicas must surge", 8, 3, 3, false, false, 1},
		{"3 replicas, room for the surge", 8, 3, 4, true, true, 0},
		// 4×8 on 4 nodes: maxUnavailable 1, the surge pod replaces one.
		{"4 replicas replace in place", 8, 4, 4, false, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compute(t, fmt.Sprintf(eightGPUCluster, tc.nodes), model("a", "vllm", tc.gpus, tc.replicas, ""))
			h := pool(t, p, "h100")
			require.True(t, h.Fits)
			require.Equal(t, tc.fits, h.Rollout.Fits, "the whole peak")
			require.Equal(t, tc.proceeds, h.Rollout.Proceeds)
			require.Equal(t, tc.short, h.Rollout.ShortNodes)
			require.Equal(t, tc.proceeds, p.RolloutsProceed)
		})
	}
}

// A RayService upgrade builds its second cluster before it deletes the
// first: with no room beside the first, the upgrade stalls.
func TestKubeRayUpgradeMustSurge(t *testing.T) {
	p := compute(t, fmt.Sprintf(eightGPUCluster, 1), model("ray", "kuberay", 8, 1, ""))
	h := pool(t, p, "h100")
	require.True(t, h.Fits)
	require.False(t, h.Rollout.Proceeds)
	require.Equal(t, int32(1), h.Rollout.ShortNodes)
}

// Dynamo gives every pod of a multinode service the service's GPUs:
// replicas × nodeCount pods, no surge; its frontend goes to the CPU pool.
func TestDynamoMultinodePods(t *testing.T) {
	md := model("big", "dynamo", 8, 2, `, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}`)
	p := compute(t, fmt.Sprintf(eightGPUCluster, 4), md)
	h := pool(t, p, "h100")
	require.Equal(t, int32(4), h.Pods)
	require.Equal(t, int32(0), h.Rollout.Pods)
	cpu := pool(t, p, "cpu")
	require.Equal(t, int32(1), cpu.Pods, "the frontend")
	require.True(t, cpu.Autoscaled)
	require.Equal(t, int32(1), *cpu.NodesNeeded)
}

// A RayService upgrade starts a second cluster: the surge is all of it.
func TestKubeRaySurgeIsTheWholeCluster(t *testing.T) {
	p := compute(t, fmt.Sprintf(eightGPUCluster, 4), model("ray", "kuberay", 2, 3, ""))
	h := pool(t, p, "h100")
	require.Equal(t, int32(3), h.Pods)
	require.Equal(t, h.Pods, h.Rollout.Pods)
	cpu := pool(t, p, "cpu")
	require.Equal(t, int32(1), cpu.Pods, "the head")
	require.Equal(t, int32(1), cpu.Rollout.Pods)
}

// A KAITO preset's pods take whole nodes, and the plan says what it
// assumed.
func TestKAITOPresetTakesWholeNodes(t *testing.T) {
	p := compute(t, fmt.Sprintf(eightGPUCluster, 4), model("ws", "kaito", 1, 2, ""))
	h := pool(t, p, "h100")
	require.Equal(t, int32(2), h.Pods)
	require.Equal(t, int64(16), h.GPUsRequested)
	require.Equal(t, int32(2), *h.NodesNeeded)
	require.Len(t, p.Notes, 1)
	require.Contains(t, p.Notes[0], "node estimator")
}

func TestCostIsNodesNeededForAMonth(t *testing.T) {
	p := compute(t, fmt.Sprintf(eightGPUCluster, 4), model("a", "vllm", 8, 2, ""))
	h := pool(t, p, "h100")
	require.Equal(t, 2*98.32*730, *h.CostPerMonth)
	require.Equal(t, 4*98.32*730, *h.PoolCostPerMonth, "a fixed pool costs its count")
	require.Equal(t, "USD", p.Currency)
	require.Equal(t, *h.CostPerMonth, *p.CostPerMonth)
}

// Short at count: exit 3 territory.
func TestShortPoolDoesNotFit(t *testing.T) {
	p := compute(t, fmt.Sprintf(eightGPUCluster, 1), model("a", "vllm", 8, 3, ""))
	h := pool(t, p, "h100")
	require.False(t, h.Fits)
	require.False(t, p.Fits)
	require.Equal(t, int32(2), h.ShortNodes)
	require.Equal(t, int32(2), h.PendingPods)
}

// Every golden rendering (golden/testdata/*/expected.yaml) planned
// against its own capability file, one line per pool: pods, GPUs, nodes
// and rollout of every provider's objects in every shape the goldens
// hold, held to testdata/golden-cases.golden (-update rewrites it).
func TestPlanOfEveryGoldenRendering(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "golden", "testdata", "*", "expected.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	var b strings.Builder
	for _, expected := range dirs {
		dir := filepath.Dir(expected)
		data, err := os.ReadFile(expected)
		require.NoError(t, err)
		items, err := (&kio.ByteReader{Reader: bytes.NewReader(data)}).Read()
		require.NoError(t, err, dir)
		if len(items) == 0 {
			continue // an error case: nothing rendered
		}
		caps := capabilities.Default()
		for _, n := range items {
			if n.GetKind() == "ClusterCapabilities" {
				c, problems := capabilities.ResolveNode(n)
				if problems.HasErrors() {
					c = nil // an error case: nothing was rendered
				}
				caps = c
			}
		}
		if caps == nil {
			continue
		}
		if cfgs, _ := filepath.Glob(filepath.Join(dir, "functionConfig", "*.yaml")); len(cfgs) == 1 {
			text, err := os.ReadFile(cfgs[0])
			require.NoError(t, err)
			if node, err := yaml.Parse(string(text)); err == nil && node.GetKind() == "ClusterCapabilities" {
				if _, problems := capabilities.ResolveNode(node); problems.HasErrors() {
					continue // an error case: the capability file is refused
				}
				caps = resolve(t, string(text))
			}
		}
		fmt.Fprintf(&b, "%s:\n", filepath.Base(dir))
		p, err := plan.Compute(items, caps)
		if errors.Is(err, plan.ErrNoPools) {
			b.WriteString("  (the capability file declares no node pools)\n")
			continue
		}
		require.NoError(t, err, dir)
		for _, pl := range p.Pools {
			if pl.Pods == 0 {
				continue
			}
			fmt.Fprintf(&b, "  %-8s pods=%d gpus=%d nodes=%s idle=%d rollout=+%dpods/+%dgpus/+%dnodes\n",
				pl.Name, pl.Pods, pl.GPUsRequested, orUnknown(pl.NodesNeeded), pl.IdleGPUs, pl.Rollout.Pods, pl.Rollout.GPUs, pl.Rollout.Nodes)
		}
		for _, g := range p.Unplaced {
			fmt.Fprintf(&b, "  unplaced %s %s: %d pods: %s\n", g.Object, g.Component, g.Pods, g.Reason)
		}
	}
	golden := filepath.Join("testdata", "golden-cases.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./plan -update")
	require.Equal(t, string(want), b.String())
}

func orUnknown(v *int32) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprint(*v)
}

// A pod larger than any node of its pool never schedules: the pool does
// not fit, whatever its size (here a Dynamo frontend's 2 cpu on 1-cpu
// CPU nodes).
func TestPodLargerThanANodeDoesNotFit(t *testing.T) {
	caps := strings.Replace(fmt.Sprintf(eightGPUCluster, 4), `capacity: {cpu: "16", memory: 64Gi}`, `capacity: {cpu: "1", memory: 2Gi}`, 1)
	p := compute(t, caps, model("big", "dynamo", 8, 1, ""))
	cpu := pool(t, p, "cpu")
	require.Equal(t, int32(1), cpu.PodsLargerThanANode)
	require.Equal(t, int32(1), cpu.PendingPods)
	require.False(t, cpu.Fits)
	require.False(t, p.Fits)
}

// The total is the sum of the pools' costs as printed, each rounded to
// cents first.
func TestTotalCostIsTheSumOfRoundedPoolCosts(t *testing.T) {
	var pools strings.Builder
	for _, name := range []string{"a", "b", "c"} {
		fmt.Fprintf(&pools, "  - {name: %s, selector: {pool: %s}, gpu: {perNode: 1}, nodes: {count: 1}, pricePerNodeHour: {amount: 1.00001, currency: USD}}\n", name, name)
	}
	caps := "apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: t}\nspec:\n  providers: [{name: vllm}]\n  nodePools:\n" + pools.String()
	var models []string
	for _, name := range []string{"a", "b", "c"} {
		models = append(models, strings.Replace(model(name, "vllm", 1, 1, ""), "  scaling:", "  nodeSelector: {pool: "+name+"}\n  scaling:", 1))
	}
	p := compute(t, caps, strings.Join(models, "---\n"))
	for _, pl := range p.Pools {
		require.Equal(t, 730.01, *pl.CostPerMonth)
	}
	require.Equal(t, 2190.03, *p.CostPerMonth)
}

// An autoscaled workload is planned at its peak: the KEDA-scaled vLLM
// Deployment (rendered without replicas) at its maxReplicaCount, the
// HPA-scaled llm-d decode Deployment at its maxReplicas beside prefill's
// fixed count, each with a note giving the range.
func TestAutoscaledPlannedAtPeak(t *testing.T) {
	for _, tc := range []struct {
		goldenCase string
		pods       int32
		note       string
	}{
		{"v1alpha2-vllm-autoscaling-keda", 4, `Deployment/qwen (model "qwen"): autoscaled between 0 and 4 replicas; planned at 4, its peak`},
		{"v1alpha2-llmd-autoscaling-hpa", 2 + 6, `Deployment/qwen3-8b-decode (model "qwen3-8b"): autoscaled between 1 and 6 replicas; planned at 6, its peak`},
	} {
		t.Run(tc.goldenCase, func(t *testing.T) {
			dir := filepath.Join("..", "golden", "testdata", tc.goldenCase)
			data, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			require.NoError(t, err)
			items, err := (&kio.ByteReader{Reader: bytes.NewReader(data)}).Read()
			require.NoError(t, err)
			text, err := os.ReadFile(filepath.Join(dir, "functionConfig", "capabilities.yaml"))
			require.NoError(t, err)
			p, err := plan.Compute(items, resolve(t, string(text)))
			require.NoError(t, err)
			var pods int32
			for _, pl := range p.Pools {
				pods += pl.Pods
			}
			require.Equal(t, tc.pods, pods)
			require.Contains(t, p.Notes, tc.note)
		})
	}
}
