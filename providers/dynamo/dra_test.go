package dynamo

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

func cpuPool() *hub.NodePool {
	return &hub.NodePool{Name: "cpu", Selector: map[string]string{"kubernetes.io/os": "linux"}}
}

func onPools(components map[string]*hub.NodePool) opt {
	return func(req *providers.Request) {
		for c, p := range components {
			req.Placement.Set(c, p)
		}
		req.Placement.SetCPU(cpuPool())
	}
}

func TestDRAWorkerClaimsThroughDynamoFields(t *testing.T) {
	spec := "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nresources: {gpu: {count: 4}, memory: 64Gi}\n"
	r := renderSpec(t, spec, withVersion("1.1.1", nil), onPools(map[string]*hub.NodePool{providers.ComponentMain: providertest.H100DRAPool()}))
	w := r.svc(t, ServiceWorker)
	require.NotNil(t, w.Resources.Limits)
	require.Equal(t, resourceItem{Memory: "64Gi"}, *w.Resources.Limits, "no gpu count: the operator would request nvidia.com/gpu")
	if w.Resources.Requests != nil {
		require.Empty(t, w.Resources.Requests.GPU)
	}
	require.Equal(t, []corev1.ResourceClaim{{Name: providers.GPUClaim}}, w.Resources.Claims)
	name := providers.ClaimTemplateName("test-model-vllmworker", &providers.DeviceRequest{DeviceClassName: "gpu.nvidia.com", Selectors: providertest.H100DRAPool().GPU.Selectors}, 4)
	require.Equal(t, []corev1.PodResourceClaim{{Name: providers.GPUClaim, ResourceClaimTemplateName: &name}}, w.ExtraPodSpec.ResourceClaims)
	require.Contains(t, w.ExtraPodSpec.MainContainer.Args, "--tensor-parallel-size", "the renderer, not the operator, sets the parallelism")

	f := r.svc(t, ServiceFrontend)
	require.Empty(t, f.ExtraPodSpec.ResourceClaims, "the frontend stays on CPU")
	require.Nil(t, f.Resources.Claims)

	tmpl := r.other(t, "ResourceClaimTemplate", name)
	require.EqualValues(t, 4, dig(tmpl, "spec", "spec", "devices", "requests", 0, "exactly", "count"))
	require.Equal(t, "gpu.nvidia.com", dig(tmpl, "spec", "spec", "devices", "requests", 0, "exactly", "deviceClassName"))
}

func TestDRAGPUTypeDropped(t *testing.T) {
	pool := providertest.H100DRAPool()
	pool.GPU.ResourceName = "amd.com/gpu"
	spec := "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nresources: {gpu: {count: 2, type: amd.com/gpu}}\n"
	r := renderSpec(t, spec, withVersion("1.1.1", nil), onPools(map[string]*hub.NodePool{providers.ComponentMain: pool}))
	w := r.svc(t, ServiceWorker)
	require.Nil(t, w.Resources.Limits, "gpu and gpuType leave; nothing else was a limit")
	if w.Resources.Requests != nil {
		require.Empty(t, w.Resources.Requests.GPU+w.Resources.Requests.GPUType)
	}
	require.Len(t, w.Resources.Claims, 1)
}

func TestDRADisaggregatedAndGateway(t *testing.T) {
	spec := "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nserving: {mode: disaggregated}\n" +
		"scaling: {prefill: {replicas: 2, gpu: {count: 1}}, decode: {replicas: 1, gpu: {count: 2}}}\n"
	r := renderSpec(t, spec, withGateway(t), onPools(map[string]*hub.NodePool{providers.ComponentPrefill: providertest.H100DRAPool(), providers.ComponentDecode: providertest.H100Pool()}))
	require.Len(t, r.svc(t, ServicePrefillWorker).ExtraPodSpec.ResourceClaims, 1)
	d := r.svc(t, ServiceDecodeWorker)
	require.Empty(t, d.ExtraPodSpec.ResourceClaims, "decode is on a device-plugin pool")
	require.Equal(t, "2", d.Resources.Limits.GPU)
	require.Empty(t, r.svc(t, ServiceEpp).ExtraPodSpec.ResourceClaims)
	var templates int
	for _, o := range r.others {
		if o["kind"] == "ResourceClaimTemplate" {
			templates++
		}
	}
	require.Equal(t, 1, templates)
}

// A pool without deviceClassName renders what it rendered before.
func TestDRANonDRAPoolUnchanged(t *testing.T) {
	spec := "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nresources: {gpu: {count: 4}}\n"
	r := renderSpec(t, spec, withVersion("1.1.1", nil), onPools(map[string]*hub.NodePool{providers.ComponentMain: providertest.H100Pool()}))
	w := r.svc(t, ServiceWorker)
	require.Equal(t, "4", w.Resources.Limits.GPU)
	require.Equal(t, "4", w.Resources.Requests.GPU)
	require.Nil(t, w.Resources.Claims)
	require.Nil(t, w.ExtraPodSpec.ResourceClaims)
	_, has := r.obj["spec"].(map[string]any)["services"].(map[string]any)[ServiceWorker].(map[string]any)["resources"].(map[string]any)["claims"]
	require.False(t, has)
	for _, o := range r.others {
		require.NotEqual(t, "ResourceClaimTemplate", o["kind"])
	}
}

func TestDRAMultinodeByRelease(t *testing.T) {
	spec := "model: {id: m}\nprovider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}\nengine: {type: vllm}\nresources: {gpu: {count: 8}}\n"
	for _, v := range []string{"1.1.1", "1.2.0", "1.3.0"} {
		req := request(t, "", spec, withVersion(v, nil), withEngine(hub.EngineVLLM), onPools(map[string]*hub.NodePool{providers.ComponentMain: providertest.H100DRAPool()}))
		errs := Provider{}.Check(req).Errors()
		require.Len(t, errs, 1, v)
		require.Equal(t, "spec.provider.overrides.spec.services.VllmWorker.multinode.nodeCount", errs[0].Field)
		require.Contains(t, errs[0].Message, "Dynamo "+v+" sizes a vLLM worker across nodes from `resources.limits.gpu` alone")
		require.Contains(t, errs[0].Message, "Dynamo 1.4.0 runs it")
		require.Contains(t, errs[0].Message, `node pool "h100"`)
	}
	req := request(t, "", spec, withVersion("1.4.0", nil), withEngine(hub.EngineVLLM), onPools(map[string]*hub.NodePool{providers.ComponentMain: providertest.H100DRAPool()}))
	require.Empty(t, Provider{}.Check(req).Errors())
	r := render(t, req)
	w := r.obj["spec"].(map[string]any)["services"].(map[string]any)[ServiceWorker].(map[string]any)
	require.EqualValues(t, 2, dig(w, "multinode", "nodeCount"))
	require.Equal(t, "gpu", dig(w, "resources", "claims", 0, "name"))
	require.Nil(t, dig(w, "resources", "limits", "gpu"))

	// Each pod of the multinode worker claims the service's GPUs: the plan
	// sees the claim on each of the two pods.
	groups, ok, err := Provider{}.PodGroups(&unstructured.Unstructured{Object: r.obj})
	require.NoError(t, err)
	require.True(t, ok)
	for _, g := range groups {
		if g.Component != ServiceWorker {
			continue
		}
		require.EqualValues(t, 2, g.Pods)
		require.Len(t, g.Spec.ResourceClaims, 1)
		require.Equal(t, []corev1.ResourceClaim{{Name: providers.GPUClaim}}, g.Spec.Containers[0].Resources.Claims)
		require.NotContains(t, g.Spec.Containers[0].Resources.Limits, corev1.ResourceName("nvidia.com/gpu"))
	}

	// SGLang's launcher never reads the count; before 1.3 the
	// LeaderWorkerSet path refused a worker without it.
	sglang := "model: {id: m}\nprovider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}\nengine: {type: sglang}\nresources: {gpu: {count: 8}}\n"
	req = request(t, "", sglang, withVersion("1.2.0", nil), withEngine(hub.EngineSGLang), onPools(map[string]*hub.NodePool{providers.ComponentMain: providertest.H100DRAPool()}))
	errs := Provider{}.Check(req).Errors()
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Message, "LeaderWorkerSet path")
	require.Contains(t, errs[0].Message, "Dynamo 1.3.0 runs it")
	req = request(t, "", sglang, withVersion("1.3.0", nil), withEngine(hub.EngineSGLang), onPools(map[string]*hub.NodePool{providers.ComponentMain: providertest.H100DRAPool()}))
	require.Empty(t, Provider{}.Check(req).Errors())

	// A plain pool is fine on 1.1.1.
	req = request(t, "", spec, withVersion("1.1.1", nil), withEngine(hub.EngineVLLM), onPools(map[string]*hub.NodePool{providers.ComponentMain: providertest.H100Pool()}))
	require.Empty(t, Provider{}.Check(req).Errors())
}
