package kuberay

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// renderAll renders req after a passing Check and returns the RayService,
// its typed view and the other objects.
func renderAll(t *testing.T, req *providers.Request) (providers.Object, *rayService, []providers.Object, diag.List) {
	t.Helper()
	require.Empty(t, Provider{}.Check(req).Errors())
	objs, l := Provider{}.Render(req)
	require.False(t, l.HasErrors(), "%v", l)
	data, err := json.Marshal(objs[0])
	require.NoError(t, err)
	var rs rayService
	require.NoError(t, json.Unmarshal(data, &rs))
	return objs[0], &rs, objs[1:], l
}

func TestDRAWorkersClaimGPUs(t *testing.T) {
	req := request(t, "llama", "1.7.0", base+"resources: {gpu: {count: 4}}")
	req.Placement.Set(providers.ComponentMain, providertest.H100DRAPool())
	_, rs, rest, _ := renderAll(t, req)

	wg := rs.Spec.RayClusterConfig.WorkerGroupSpecs[0]
	c := wg.Template.Spec.Containers[0]
	require.NotContains(t, c.Resources.Limits, corev1.ResourceName("nvidia.com/gpu"), "no extended resource on a DRA pool")
	require.NotContains(t, c.Resources.Requests, corev1.ResourceName("nvidia.com/gpu"))
	require.Equal(t, []corev1.ResourceClaim{{Name: providers.GPUClaim}}, c.Resources.Claims)
	name := providers.ClaimTemplateName("llama-gpu-workers", req.Placement.For(providers.ComponentMain).Devices, 4)
	require.Equal(t, []corev1.PodResourceClaim{{Name: providers.GPUClaim, ResourceClaimTemplateName: &name}}, wg.Template.Spec.ResourceClaims)
	require.Equal(t, map[string]string{"num-gpus": "4"}, wg.RayStartParams, "Ray is told the claimed GPUs")
	require.Equal(t, map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, wg.Template.Spec.NodeSelector)

	// The replica's placement group still keeps its 4 GPUs on the worker,
	// and the worker offers the replica actor its CPU.
	cpu := c.Resources.Requests[corev1.ResourceCPU]
	require.GreaterOrEqual(t, cpu.Value(), int64(replicaActorCPUs))
	require.Contains(t, rs.Spec.ServeConfigV2, "strategy: STRICT_PACK")

	hg := rs.Spec.RayClusterConfig.HeadGroupSpec.Template.Spec
	require.Empty(t, hg.ResourceClaims, "the head stays on CPU")
	require.Empty(t, hg.Containers[0].Resources.Claims)

	require.Len(t, rest, 1)
	tmpl := rest[0]
	require.Equal(t, "ResourceClaimTemplate", tmpl["kind"])
	require.Equal(t, name, tmpl["metadata"].(map[string]any)["name"])
	req0 := tmpl["spec"].(map[string]any)["spec"].(map[string]any)["devices"].(map[string]any)["requests"].([]any)[0].(map[string]any)
	exactly := req0["exactly"].(map[string]any)
	require.Equal(t, "gpu.nvidia.com", exactly["deviceClassName"])
	require.EqualValues(t, 4, exactly["count"])
}

func TestDRADisaggregatedPerGroup(t *testing.T) {
	req := request(t, "m", "1.7.0", "model: {id: m}\nengine: {type: vllm}\nserving: {mode: disaggregated}\n"+
		"scaling: {prefill: {replicas: 2, gpu: {count: 1}}, decode: {replicas: 1, gpu: {count: 2}}}")
	req.Placement.Set(providers.ComponentPrefill, providertest.H100DRAPool())
	req.Placement.Set(providers.ComponentDecode, providertest.H100Pool())
	_, rs, rest, _ := renderAll(t, req)
	groups := rs.Spec.RayClusterConfig.WorkerGroupSpecs
	require.Equal(t, PrefillGroup, groups[0].GroupName)
	require.Equal(t, map[string]string{"num-gpus": "1"}, groups[0].RayStartParams)
	require.Len(t, groups[0].Template.Spec.ResourceClaims, 1)
	require.Equal(t, map[string]string{}, groups[1].RayStartParams, "the decode group is on a device-plugin pool")
	require.Empty(t, groups[1].Template.Spec.ResourceClaims)
	require.Equal(t, "2", limit(groups[1].Template.Spec.Containers[0], "nvidia.com/gpu"))
	require.Len(t, rest, 1, "one template, for the prefill group")
}

// A pool without deviceClassName renders what it rendered before DRA
// pools existed: the extended resource, no claim, no num-gpus, one object.
func TestDRANonDRAPoolUnchanged(t *testing.T) {
	req := request(t, "llama", "1.7.0", base+"resources: {gpu: {count: 4}}")
	req.Placement.Set(providers.ComponentMain, providertest.H100Pool())
	obj, rs, rest, _ := renderAll(t, req)
	require.Empty(t, rest)
	wg := rs.Spec.RayClusterConfig.WorkerGroupSpecs[0]
	require.Equal(t, map[string]string{}, wg.RayStartParams)
	require.Empty(t, wg.Template.Spec.ResourceClaims)
	require.Equal(t, "4", limit(wg.Template.Spec.Containers[0], "nvidia.com/gpu"))

	plain := request(t, "llama", "1.7.0", base+"resources: {gpu: {count: 4}}")
	plain.Placement.Set(providers.ComponentMain, providertest.H100Pool())
	plain.Placement.Components[providers.ComponentMain].Devices = nil
	again, _, _, _ := renderAll(t, plain)
	require.Equal(t, obj, again)
}

func TestDRAUserNumGPUsWins(t *testing.T) {
	devices := &providers.DeviceRequest{DeviceClassName: "gpu.nvidia.com", Selectors: providertest.H100DRAPool().GPU.Selectors}
	claim := providers.ClaimTemplateName("llama-gpu-workers", devices, 4)
	// Overrides replace the list of groups whole, and may not set a
	// container's resources; a group that keeps the pod's claim is told
	// the claim's count unless it says otherwise.
	group := func(extra string) string {
		return "provider: {overrides: {spec: {rayClusterConfig: {workerGroupSpecs: [{groupName: gpu-workers, minReplicas: 1, maxReplicas: 1" + extra +
			", template: {spec: {resourceClaims: [{name: gpu, resourceClaimTemplateName: " + claim + "}], containers: [{name: ray-worker, image: i}]}}}]}}}}"
	}
	cases := []struct{ name, extra, want string }{
		{"user num-gpus wins", ", rayStartParams: {num-gpus: \"2\"}", "2"},
		{"a group replaced without num-gpus still gets the claim's count", ", rayStartParams: {}", "4"},
		{"a group without rayStartParams gets them", "", "4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, "llama", "1.7.0", base+"resources: {gpu: {count: 4}}\n"+group(tc.extra))
			req.Placement.Set(providers.ComponentMain, providertest.H100DRAPool())
			_, rs, _, _ := renderAll(t, req)
			require.Equal(t, tc.want, rs.Spec.RayClusterConfig.WorkerGroupSpecs[0].RayStartParams["num-gpus"])
		})
	}
}

func TestDRARefusedBefore131(t *testing.T) {
	for _, v := range []string{"1.3.0", "1.3"} {
		req := request(t, "llama", v, base+"resources: {gpu: {count: 4}}")
		req.Placement.Set(providers.ComponentMain, providertest.H100DRAPool())
		errs := Provider{}.Check(req).Errors()
		require.Len(t, errs, 1)
		require.Equal(t, "spec.resources.gpu.count", errs[0].Field)
		require.Contains(t, errs[0].Message, `node pool "h100"`)
		require.Contains(t, errs[0].Message, "KubeRay 1.3.0 cannot give its pods a resource claim")
		require.Contains(t, errs[0].Message, "declare KubeRay 1.3.1 or later")
	}
	for _, v := range []string{"1.3.1", "1.5.0", "1.7.0"} {
		req := request(t, "llama", v, base+"resources: {gpu: {count: 4}}")
		req.Placement.Set(providers.ComponentMain, providertest.H100DRAPool())
		require.Empty(t, Provider{}.Check(req).Errors(), v)
	}
	// A plain pool is fine on 1.3.0.
	req := request(t, "llama", "1.3.0", base+"resources: {gpu: {count: 4}}")
	req.Placement.Set(providers.ComponentMain, providertest.H100Pool())
	require.Empty(t, Provider{}.Check(req).Errors())
}
