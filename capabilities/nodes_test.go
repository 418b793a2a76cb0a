package capabilities

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resolveDoc(t *testing.T, spec string) *Resolved {
	t.Helper()
	c, problems := Decode([]byte(capsDoc(spec)))
	require.False(t, problems.HasErrors(), "%v", problems)
	r, problems := Resolve(c)
	require.False(t, problems.HasErrors(), "%v", problems)
	return r
}

func TestNodes(t *testing.T) {
	r := resolveDoc(t, `{providers: [{name: vllm}], nodePools: [
  {name: h100, selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}],
   gpu: {resourceName: nvidia.com/gpu, product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, perNode: 8}, capacity: {cpu: "192", memory: 2000Gi}, nodes: {count: 3}},
  {name: mi300x, selector: {amd.com/gpu.present: "true"}, gpu: {resourceName: amd.com/gpu}},
  {name: cpu, selector: {node.kubernetes.io/pool: cpu}, nodes: {count: 0}}]}`)
	nodes := r.Nodes()
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	require.Equal(t, []string{"h100-0", "h100-1", "h100-2", "mi300x-0", "mi300x-1"}, names, "count per pool, default 2, 0 is none")

	h := nodes[0]
	require.Equal(t, map[string]string{
		"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": "h100-0",
		"render.airunway.ai/node-pool": "h100",
		"nvidia.com/gpu.present":       "true", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559",
	}, h.Labels)
	require.Equal(t, []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}, h.Spec.Taints)
	require.True(t, resource.MustParse("8").Equal(h.Status.Allocatable["nvidia.com/gpu"]))
	require.True(t, resource.MustParse("192").Equal(h.Status.Allocatable[corev1.ResourceCPU]))
	require.True(t, resource.MustParse("2000Gi").Equal(h.Status.Allocatable[corev1.ResourceMemory]))
	require.Equal(t, "127.0.0.1", h.Status.Addresses[0].Address, "loopback: nothing dials off the machine")
	require.Equal(t, "fake", h.Annotations[KWOKAnnotation])

	m := nodes[3]
	require.Equal(t, "true", m.Labels["amd.com/gpu.present"])
	require.NotContains(t, m.Labels, "nvidia.com/gpu.present", "GFD labels only for NVIDIA GPUs")
	require.True(t, resource.MustParse("8").Equal(m.Status.Allocatable["amd.com/gpu"]), "unknown perNode: DefaultGPUsPerNode")
	require.True(t, resource.MustParse("96").Equal(m.Status.Allocatable[corev1.ResourceCPU]))

	require.Equal(t, nodes, r.Nodes(), "deterministic")
}

// The pool's selector wins over a generated label: placement goes by it.
func TestNodesSelectorWins(t *testing.T) {
	r := resolveDoc(t, `{providers: [{name: vllm}], nodePools: [{name: l4, selector: {nvidia.com/gpu.product: L4-custom, kubernetes.io/os: linux}, gpu: {product: NVIDIA-L4, perNode: 1}, nodes: {count: 1}}]}`)
	require.Equal(t, "L4-custom", r.Nodes()[0].Labels["nvidia.com/gpu.product"])
}

func TestNodesCountIsChecked(t *testing.T) {
	for _, count := range []string{"-1", "1001"} {
		c, problems := Decode([]byte(capsDoc(`{providers: [{name: vllm}], nodePools: [{name: l4, selector: {a: b}, nodes: {count: ` + count + `}}]}`)))
		require.False(t, problems.HasErrors())
		_, problems = Resolve(c)
		requireErrors(t, problems, e("spec.nodePools[0].nodes.count", "must be between 0 and 1000, got "+count))
	}
}

// nodes is a count or an autoscaled range, and a price has an amount and
// one currency for the whole file; each mistake names its field.
func TestPoolSizeAndPriceAreChecked(t *testing.T) {
	for _, tc := range []struct{ pools, field, message string }{
		{`[{name: a, selector: {a: b}, nodes: {count: 2, max: 3}}]`, "spec.nodePools[0].nodes", "must set either `count` (a fixed pool) or `min` and `max` (an autoscaled pool), not both"},
		{`[{name: a, selector: {a: b}, nodes: {min: 1}}]`, "spec.nodePools[0].nodes", "must set `count` (a fixed pool) or `max` (an autoscaled pool, with an optional `min`)"},
		{`[{name: a, selector: {a: b}, nodes: {min: 4, max: 2}}]`, "spec.nodePools[0].nodes.min", "must not be greater than `max` (2), got 4"},
		{`[{name: a, selector: {a: b}, nodes: {max: 1001}}]`, "spec.nodePools[0].nodes.max", "must be between 0 and 1000, got 1001"},
		{`[{name: a, selector: {a: b}, pricePerNodeHour: {amount: -1, currency: USD}}]`, "spec.nodePools[0].pricePerNodeHour.amount", "must be a number between 0 and 100000, got -1"},
		{`[{name: a, selector: {a: b}, pricePerNodeHour: {amount: 1, currency: usd}}]`, "spec.nodePools[0].pricePerNodeHour.currency", `"usd" is not an ISO 4217 currency code: must be three capital letters, e.g. "USD" or "EUR"`},
		{`[{name: a, selector: {a: b}, pricePerNodeHour: {amount: 1, currency: USD}}, {name: b, selector: {b: c}, pricePerNodeHour: {amount: 1, currency: EUR}}]`, "spec.nodePools[1].pricePerNodeHour.currency", `"EUR" differs from "USD" (pool "a"): every pool's price must use one currency, so that costs add up`},
	} {
		t.Run(tc.field, func(t *testing.T) {
			c, problems := Decode([]byte(capsDoc(`{providers: [{name: vllm}], nodePools: ` + tc.pools + `}`)))
			require.False(t, problems.HasErrors(), "%v", problems)
			_, problems = Resolve(c)
			requireErrors(t, problems, e(tc.field, tc.message))
		})
	}
	r := resolveDoc(t, `{providers: [{name: vllm}], nodePools: [{name: a, selector: {a: b}, gpu: {perNode: 1}, nodes: {min: 1, max: 3}, pricePerNodeHour: {amount: 2.5, currency: USD}}]}`)
	require.Len(t, r.Nodes(), 3, "an autoscaled pool is generated at its max")
	lo, hi, ok := r.NodePools[0].Nodes.Range()
	require.Equal(t, []any{int32(1), int32(3), true}, []any{lo, hi, ok})
}
