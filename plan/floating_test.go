package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/plan"
)

// l4OnlyCluster is issue 35's cluster: L4 nodes without taints and no
// pool without GPUs; providers whose rendering leaves some pod without a
// node selector there, and a gateway, whose endpoint picker has none
// either. %s is the pool's taints line, if any.
const l4OnlyCluster = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: l4only}
spec:
  providers:
  - {name: kuberay, version: "1.4.2"}
  - {name: dynamo, version: "1.1.1"}
  - {name: vllm}
  gateway:
    inferencePoolVersion: inference.networking.k8s.io/v1
    inferenceExtensionVersion: v1.5.0
    gatewayAPIVersion: v1.5.1
    channel: standard
    parentRef: {name: inference-gateway, namespace: gateway-system}
  nodePools:
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
%s    gpu: {resourceName: nvidia.com/gpu, product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
    nodes: {count: 4}
`

const l4Taint = "    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n"

// Issue 35: a pod without a node selector (a KubeRay head, a Dynamo
// frontend, an endpoint picker) on a cluster without a CPU pool goes where
// the scheduler puts it, the untainted L4 nodes: the plan fits, counts it
// on the pool, and says that it is a CPU-only pod on a GPU pool.
func TestPodsWithoutSelectorGoOnAnUntaintedGPUPool(t *testing.T) {
	for _, tc := range []struct {
		provider string
		floating []string // object and component of each pod group without a pool
	}{
		{"kuberay", []string{"RayService/m head", "Deployment/m-epp "}},
		{"dynamo", []string{"DynamoGraphDeployment/m Epp"}},
		{"vllm", []string{"Deployment/m-epp "}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			p := compute(t, fmt.Sprintf(l4OnlyCluster, ""), model("m", tc.provider, 1, 1, ""))
			require.Empty(t, p.Unplaced)
			require.True(t, p.Fits)
			var got []string
			for _, g := range p.Floating {
				require.Equal(t, "l4", g.Pool, g.Object)
				require.True(t, g.CPUOnGPUPool, g.Object)
				require.Equal(t, int32(1), g.Pods)
				got = append(got, g.Object+" "+g.Component)
			}
			require.ElementsMatch(t, tc.floating, got)
			l4 := pool(t, p, "l4")
			require.Equal(t, int32(1+len(tc.floating)), l4.Pods, "the GPU pods and the pods without a selector")
			require.Equal(t, int64(1), l4.GPUsRequested)
			require.Equal(t, int32(1), *l4.NodesNeeded, "the pool's nodes have no declared cpu or memory: they share the worker's node")
		})
	}
}

// A Dynamo frontend (no gateway: the frontend routes) without a CPU pool.
func TestDynamoFrontendWithoutCPUPool(t *testing.T) {
	caps := strings.Replace(fmt.Sprintf(l4OnlyCluster, ""), "  gateway:", "  ignored:", 1)
	caps = caps[:strings.Index(caps, "  ignored:")] + caps[strings.Index(caps, "  nodePools:"):]
	p := compute(t, caps, model("m", "dynamo", 1, 1, ""))
	require.True(t, p.Fits, "%+v", p.Unplaced)
	require.Len(t, p.Floating, 1)
	require.Equal(t, "Frontend", p.Floating[0].Component)
	require.Equal(t, "l4", p.Floating[0].Pool)
}

// When every pool is tainted against them, the pods without a selector
// stay unplaced, the plan does not fit, and the reason says which taint
// keeps them off and what to add.
func TestPodsWithoutSelectorUnplacedWhenEveryPoolIsTainted(t *testing.T) {
	p := compute(t, fmt.Sprintf(l4OnlyCluster, l4Taint), model("m", "kuberay", 1, 1, ""))
	require.False(t, p.Fits)
	require.Empty(t, p.Floating)
	require.Len(t, p.Unplaced, 2, "the head and the endpoint picker")
	for _, g := range p.Unplaced {
		require.Equal(t, `it selects no pool (no node selector), and none takes it: pool "l4" has taint "nvidia.com/gpu=present:NoSchedule", which it does not tolerate; `+
			"add a pool without GPUs that takes it to the capability file (`spec.nodePools`), "+
			`or a toleration of "nvidia.com/gpu=present:NoSchedule" to its pod template (`+"`spec.overrides`)", g.Reason)
	}
	require.Equal(t, int32(1), pool(t, p, "l4").Pods, "the worker, which tolerates the taint")
}

// helperCluster has pools of every kind a pod without a selector may meet;
// %s is more pools.
const helperCluster = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: helpers}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: h100
    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    gpu: {product: NVIDIA-H100-80GB-HBM3, perNode: 8}
    nodes: {count: 2}
    pricePerNodeHour: {amount: 98.32, currency: USD}
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
    gpu: {product: NVIDIA-L4, perNode: 1}
    capacity: {cpu: "8", memory: 32Gi}
    nodes: {count: 1}
    pricePerNodeHour: {amount: 0.80, currency: USD}
  - name: infra
    selector: {pool: infra}
    taints: [{key: dedicated, value: infra, effect: NoSchedule}]
    capacity: {cpu: "16", memory: 64Gi}
    nodes: {count: 3}
%s`

// helper is a rendered Deployment of model m: replicas pods of cpu with
// the pod spec lines given (a nodeSelector, tolerations, GPUs).
func helper(name string, replicas int, cpu, spec string) *yaml.RNode {
	return yaml.MustParse(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  namespace: ml
  annotations: {%s: m}
spec:
  replicas: %d
  strategy: {type: Recreate}
  template:
    spec:
      containers:
      - name: c
        image: helper
        resources:
          requests: {cpu: %q}
%s`, name, hub.AnnotationGeneratedFrom, replicas, cpu, spec))
}

func planItems(t *testing.T, capsText string, items ...*yaml.RNode) *plan.Plan {
	t.Helper()
	p, err := plan.Compute(items, resolve(t, capsText))
	require.NoError(t, err)
	return p
}

// floatingPools is where each floating group went, as "object:pool×pods".
func floatingPools(p *plan.Plan) []string {
	var out []string
	for _, g := range p.Floating {
		out = append(out, fmt.Sprintf("%s:%s×%d", g.Object, g.Pool, g.Pods))
	}
	return out
}

// The order of the pools that take a pod without a selector: a pool
// without GPUs (the tainted one does not take it), then one without a
// PreferNoSchedule taint it does not tolerate, then the cheapest node,
// then the fewest GPUs per node, then the file's order.
func TestPoolsWithoutGPUsThenCheapestTakePodsWithoutSelector(t *testing.T) {
	for _, tc := range []struct {
		name, pools string
		want        string
	}{
		{"no pool without GPUs takes it: the cheapest GPU node", "", "Deployment/epp:l4×1"},
		{"a pool without GPUs", "  - {name: cpu, selector: {pool: cpu}, capacity: {cpu: \"4\"}, nodes: {count: 1}}\n", "Deployment/epp:cpu×1"},
		{"one the pod does not have to avoid", "  - {name: soft, selector: {pool: soft}, taints: [{key: spot, effect: PreferNoSchedule}]}\n  - {name: cpu, selector: {pool: cpu}}\n", "Deployment/epp:cpu×1"},
		{"the cheaper of two", "  - {name: a, selector: {pool: a}, pricePerNodeHour: {amount: 0.5, currency: USD}}\n  - {name: b, selector: {pool: b}, pricePerNodeHour: {amount: 0.2, currency: USD}}\n", "Deployment/epp:b×1"},
		{"the first of two alike", "  - {name: a, selector: {pool: a}}\n  - {name: b, selector: {pool: b}}\n", "Deployment/epp:a×1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planItems(t, fmt.Sprintf(helperCluster, tc.pools), helper("epp", 1, "1", ""))
			require.True(t, p.Fits, "%+v", p.Unplaced)
			require.Equal(t, []string{tc.want}, floatingPools(p))
			require.Equal(t, strings.HasPrefix(tc.want, "Deployment/epp:l4"), p.Floating[0].CPUOnGPUPool)
		})
	}
}

// Pods without a selector go where there is room: what the first pool
// does not hold goes to the next, and what no pool holds stays unplaced,
// with the pools that are full and what to add.
func TestPodsWithoutSelectorFillPoolsInTurn(t *testing.T) {
	cpu := "  - {name: cpu, selector: {pool: cpu}, capacity: {cpu: \"4\"}, nodes: {count: 1}}\n"
	p := planItems(t, fmt.Sprintf(helperCluster, cpu), helper("epp", 4, "2", ""))
	require.True(t, p.Fits, "%+v", p.Unplaced)
	require.Equal(t, []string{"Deployment/epp:cpu×2", "Deployment/epp:l4×2"}, floatingPools(p), "two on the CPU node, two on the L4 node (8 cpu), none on the dearer H100s")
	require.Equal(t, int32(1), *pool(t, p, "l4").NodesNeeded)

	// The H100 nodes declare no cpu: the plan cannot tell that they are
	// full, and holds a seventh pod there.
	p = planItems(t, fmt.Sprintf(helperCluster, cpu), helper("epp", 7, "2", ""))
	require.True(t, p.Fits, "%+v", p.Unplaced)
	require.Equal(t, []string{"Deployment/epp:cpu×2", "Deployment/epp:l4×4", "Deployment/epp:h100×1"}, floatingPools(p))

	// Without the untainted H100 pool, the seventh pod has nowhere to go.
	noH100 := strings.Replace(fmt.Sprintf(helperCluster, cpu), "    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n", "    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n", 1)
	p = planItems(t, noH100, helper("epp", 7, "2", ""))
	require.False(t, p.Fits)
	require.Len(t, p.Unplaced, 1)
	require.Equal(t, int32(1), p.Unplaced[0].Pods)
	require.Contains(t, p.Unplaced[0].Reason, `pool "cpu" has no room for more on its 1 node; pool "l4" has no room for more on its 1 node`)
	require.Contains(t, p.Unplaced[0].Reason, "or more `nodes` to pool \"cpu\" or \"l4\"")
	require.Contains(t, p.Unplaced[0].Reason, `pool "infra" has taint "dedicated=infra:NoSchedule", which it does not tolerate`)
}

// A pod larger than every node that would take it stays unplaced: no
// number of nodes holds it.
func TestPodWithoutSelectorLargerThanEveryNode(t *testing.T) {
	tainted := strings.Replace(fmt.Sprintf(helperCluster, ""), "    gpu: {product: NVIDIA-H100-80GB-HBM3, perNode: 8}\n", "    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n    gpu: {product: NVIDIA-H100-80GB-HBM3, perNode: 8}\n", 1)
	p := planItems(t, tainted, helper("big", 1, "12", ""))
	require.False(t, p.Fits)
	require.Len(t, p.Unplaced, 1)
	require.Contains(t, p.Unplaced[0].Reason, `pool "l4" has nodes smaller than one pod`)
}

// A pod that requests GPUs without selecting a pool goes only to a pool
// with its GPU resource, and is no CPU pod on a GPU pool.
func TestPodWithoutSelectorRequestingGPUs(t *testing.T) {
	cpu := "  - {name: cpu, selector: {pool: cpu}}\n"
	p := planItems(t, fmt.Sprintf(helperCluster, cpu), helper("gpu", 1, "1", "          limits: {nvidia.com/gpu: 1}\n"))
	require.True(t, p.Fits, "%+v", p.Unplaced)
	require.Equal(t, []string{"Deployment/gpu:l4×1"}, floatingPools(p))
	require.False(t, p.Floating[0].CPUOnGPUPool)

	p = planItems(t, fmt.Sprintf(helperCluster, cpu), helper("amd", 1, "1", "          limits: {amd.com/gpu: 1}\n"))
	require.False(t, p.Fits)
	require.Contains(t, p.Unplaced[0].Reason, `pool "l4" has no amd.com/gpu`)
	require.Contains(t, p.Unplaced[0].Reason, "add a pool with the GPUs it requests")
}

// Node labels that some pools' selectors hold (but that contain no
// pool's selector) may land on any of those pools; labels no pool is
// known to carry stay unplaced, as before: the plan cannot tell which
// nodes have them.
func TestPodSelectingLabelsOfSeveralPools(t *testing.T) {
	linux := "  - {name: cpu-a, selector: {kubernetes.io/os: linux, pool: a}, taints: [{key: team, value: a, effect: NoSchedule}]}\n  - {name: cpu-b, selector: {kubernetes.io/os: linux, pool: b}}\n"
	p := planItems(t, fmt.Sprintf(helperCluster, linux), helper("os", 1, "1", "      nodeSelector: {kubernetes.io/os: linux}\n"))
	require.True(t, p.Fits, "%+v", p.Unplaced)
	require.Equal(t, []string{"Deployment/os:cpu-b×1"}, floatingPools(p))

	p = planItems(t, fmt.Sprintf(helperCluster, linux), helper("zone", 1, "1", "      nodeSelector: {topology.kubernetes.io/zone: eastus-1}\n"))
	require.False(t, p.Fits)
	require.Empty(t, p.Floating)
	require.Contains(t, p.Unplaced[0].Reason, "it selects no pool (node labels topology.kubernetes.io/zone=eastus-1), and none takes it: "+
		"pool \"h100\" is not known to carry its node labels topology.kubernetes.io/zone=eastus-1 (the pool's `selector` is nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3)")
}
