package render

import (
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/providers/builtin"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// threePools is the cluster of the issue: H100 nodes with 8 GPUs, L4
// nodes with one, CPU nodes; GPU nodes tainted.
const threePools = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: three-pools}
spec:
  providers:
  - {name: dynamo, version: "1.1.1"}
  - {name: kaito, version: "0.10.0"}
  - {name: kuberay, version: "1.3.0"}
  - {name: llmd, version: "0.6.0"}
  - {name: vllm}
  nodePools:
  - name: h100
    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, perNode: 8}
    capacity: {cpu: "192", memory: 2000Gi}
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
    capacity: {cpu: "16", memory: 64Gi}
  - name: cpu
    selector: {kubernetes.io/os: linux, node.kubernetes.io/pool: cpu}
`

func resolved(t *testing.T, doc string) *capabilities.Resolved {
	t.Helper()
	r, problems := capabilities.ResolveNode(kyaml.MustParse(doc))
	require.False(t, problems.HasErrors(), "%v", problems)
	return r
}

func placeSpec(t *testing.T, caps *capabilities.Resolved, provider, spec string) (*providers.Placement, diag.List) {
	t.Helper()
	var l diag.List
	md := modelDeployment(t, spec)
	return place(md, caps, builtin.ByName()[provider], &l), l
}

func TestPlacementPicksTheSmallestFittingPool(t *testing.T) {
	caps := resolved(t, threePools)
	cases := []struct {
		name, provider, spec string
		pools                map[string]string
		warning              string
	}{
		{name: "1 GPU goes to the 1-GPU L4 pool, not to an H100 node", provider: "vllm", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", pools: map[string]string{"": "l4"}},
		{name: "4 GPUs go to H100", provider: "vllm", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 4}}", pools: map[string]string{"": "h100"}},
		{name: "2 GPUs on H100 leave most of the node idle", provider: "kuberay", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}", pools: map[string]string{"": "h100"}, warning: `1 pod of 2 GPUs uses 2 of the 8 GPUs of the 1 node of pool "h100" they need: more than half stays idle`},
		{name: "four 2-GPU replicas fill an H100 node: no warning", provider: "kuberay", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}\nscaling: {replicas: 4}", pools: map[string]string{"": "h100"}},
		{name: "two 2-GPU replicas use half of the node: no warning", provider: "kuberay", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}\nscaling: {replicas: 2}", pools: map[string]string{"": "h100"}},
		{name: "five 2-GPU replicas need two nodes and leave 6 GPUs idle: no warning", provider: "kuberay", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}\nscaling: {replicas: 5}", pools: map[string]string{"": "h100"}},
		{name: "one 2-GPU replica too few: warning counts replicas", provider: "kuberay", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}\nscaling: {replicas: 1}", pools: map[string]string{"": "h100"}, warning: "1 pod of 2 GPUs uses 2 of the 8 GPUs"},
		{name: "zero replicas: nothing runs, nothing idles", provider: "kuberay", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}\nscaling: {replicas: 0}", pools: map[string]string{"": "h100"}},
		{name: "CPU-only goes to the CPU pool", provider: "kaito", spec: "model: {id: m}\nengine: {type: llamacpp}\nimage: img\nresources: {cpu: \"4\"}", pools: map[string]string{"": "cpu"}},
		{name: "memory beyond an L4 node goes to H100", provider: "vllm", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}, memory: 128Gi}", pools: map[string]string{"": "h100"}, warning: "more than half"},
		{name: "nodeSelector picks among agreeing pools", provider: "vllm", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\nnodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}", pools: map[string]string{"": "h100"}, warning: "more than half"},
		{name: "disaggregated components are placed separately", provider: "llmd", spec: "model: {id: m}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 4}}}", pools: map[string]string{"prefill": "l4", "decode": "h100"}},
		{name: "dynamo multinode puts 8 GPUs on each of 2 H100 nodes", provider: "dynamo", spec: "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 8}}\nprovider: {overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}", pools: map[string]string{"": "h100"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl, l := placeSpec(t, caps, tc.provider, tc.spec)
			require.NotNil(t, pl, "%v", l)
			require.False(t, l.HasErrors(), "%v", l)
			got := map[string]string{}
			for c, p := range pl.Components {
				got[c] = p.Pool
			}
			require.Equal(t, tc.pools, got)
			if tc.warning == "" {
				require.Empty(t, l)
			} else {
				require.Len(t, l, 1)
				require.Equal(t, diag.Warning, l[0].Severity)
				require.Contains(t, l[0].Message, tc.warning)
				require.Equal(t, tc.pools[""], l[0].Pool, "the warning is the pool's (summed up per pool)")
			}
			require.Equal(t, "cpu", pl.CPU.Pool, "helper pods go to the CPU pool")
		})
	}
}

func TestPlacementRendersSelectorsAndTolerations(t *testing.T) {
	pl, l := placeSpec(t, resolved(t, threePools), "vllm", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\nnodeSelector: {topology.kubernetes.io/zone: eastus-1}\ntolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]")
	require.False(t, l.HasErrors())
	main := pl.For(providers.ComponentMain)
	require.Equal(t, map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4", "topology.kubernetes.io/zone": "eastus-1"}, main.NodeSelector)
	require.Equal(t, []corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule},
		{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpEqual, Value: "present", Effect: corev1.TaintEffectNoSchedule},
	}, main.Tolerations)
	require.Equal(t, "nvidia.com/gpu", main.GPUResource)
	require.Equal(t, map[string]string{"kubernetes.io/os": "linux", "node.kubernetes.io/pool": "cpu"}, pl.ForCPU().NodeSelector, "the user's nodeSelector aims at model servers, not at helper pods")
	require.Equal(t, "l4", pl.Annotation)
	require.Equal(t, "1 nvidia.com/gpu per pod fits pool l4, the smallest of 2 fitting pools", pl.Reason)

	// A toleration the user already has is not repeated.
	pl, _ = placeSpec(t, resolved(t, threePools), "vllm", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\ntolerations: [{key: nvidia.com/gpu, operator: Exists}]")
	require.Len(t, pl.For(providers.ComponentMain).Tolerations, 1)
}

func TestPlacementErrorsListEveryPool(t *testing.T) {
	caps := resolved(t, threePools)
	cases := []struct{ name, spec, field string }{
		{"more GPUs than any node has", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 16}}", "spec.resources"},
		{"a GPU type no pool offers", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1, type: amd.com/gpu}}", "spec.resources"},
		{"a nodeSelector no pool agrees with", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\nnodeSelector: {nvidia.com/gpu.product: NVIDIA-A100}", "spec.resources"},
		{"disaggregated decode too large", "model: {id: m}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 9}}}", "spec.scaling.decode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl, l := placeSpec(t, caps, "llmd", tc.spec)
			require.Nil(t, pl)
			errs := l.Errors()
			require.Len(t, errs, 1, "%v", l)
			require.Equal(t, tc.field, errs[0].Field)
			for _, pool := range []string{`pool "h100"`, `pool "l4"`, `pool "cpu"`} {
				require.Contains(t, errs[0].Message, pool, "every pool is listed with its reason")
			}
		})
	}
	_, l := placeSpec(t, caps, "llmd", cases[0].spec)
	require.Contains(t, l[0].Message, `pool "h100" has 8 GPUs per node, fewer than the 16 one pod needs; pool "l4" has 1 GPUs per node, fewer than the 16 one pod needs; pool "cpu" has no GPUs`)
}

// Dynamo's `gpu` is per node: a multinode worker of 16 GPUs needs 16 on
// each node, which no pool has, rather than 8 on each of two.
func TestDynamoMultinodeNeedsItsGPUsOnEachNode(t *testing.T) {
	pl, l := placeSpec(t, resolved(t, threePools), "dynamo", "model: {id: m}\nengine: {type: vllm}\nresources: {gpu: {count: 16}}\nprovider: {overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}")
	require.Nil(t, pl)
	require.Len(t, l.Errors(), 1, "%v", l)
	require.Contains(t, l.Errors()[0].Message, "no node pool fits 16 nvidia.com/gpu per pod on each of 2 nodes")
	require.Contains(t, l.Errors()[0].Message, `pool "h100" has 8 GPUs per node, fewer than the 16 one pod needs`)
}

func TestPlacementWithoutPools(t *testing.T) {
	caps := resolved(t, threePools[:strings.Index(threePools, "  nodePools:")])
	pl, l := placeSpec(t, caps, "vllm", "model: {id: m}\nengine: {type: vllm}\nnodeSelector: {a: b}")
	require.Empty(t, l)
	require.Empty(t, pl.Components, "no pools, no placement")
	require.Equal(t, map[string]string{"a": "b"}, pl.For(providers.ComponentMain).NodeSelector, "the user's own scheduling is kept")
	require.Nil(t, pl.CPU)
	require.Empty(t, pl.Annotation)
}

func TestCPUWorkloadWithoutCPUPool(t *testing.T) {
	doc := strings.Replace(threePools, "  - name: cpu\n    selector: {kubernetes.io/os: linux, node.kubernetes.io/pool: cpu}\n", "", 1)
	pl, l := placeSpec(t, resolved(t, doc), "kaito", "model: {id: m}\nengine: {type: llamacpp}\nimage: img\nresources: {cpu: \"4\"}")
	require.Equal(t, "l4", pl.For(providers.ComponentMain).Pool)
	require.Len(t, l, 1)
	require.Contains(t, l[0].Message, `placed on GPU pool "l4" because the capability file declares no pool without GPUs`)
}
