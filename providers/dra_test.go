package providers

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

func draPool() *hub.NodePool {
	return &hub.NodePool{Name: "h100", Selector: map[string]string{"nvidia.com/gpu.product": "H100"}, GPU: &hub.PoolGPU{
		DeviceClassName: "gpu.nvidia.com", Selectors: []string{`device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`}, PerNode: 8,
	}}
}

func gpuContainer(gpus int64) corev1.PodSpec {
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Resources: corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{"nvidia.com/gpu": q, corev1.ResourceMemory: resource.MustParse("64Gi")},
		Requests: corev1.ResourceList{"nvidia.com/gpu": q, corev1.ResourceCPU: resource.MustParse("4")},
	}}}}
}

func TestClaimGPUs(t *testing.T) {
	p := NewPlacement(&hub.ModelDeployment{})
	p.Set(ComponentMain, draPool())
	spec := gpuContainer(4)
	require.Equal(t, int32(4), p.For(ComponentMain).ClaimGPUs(&spec, 0, "llama"))
	c := spec.Containers[0]
	require.NotContains(t, c.Resources.Limits, corev1.ResourceName("nvidia.com/gpu"), "a DRA cluster has no extended resource to give")
	require.NotContains(t, c.Resources.Requests, corev1.ResourceName("nvidia.com/gpu"))
	require.Contains(t, c.Resources.Limits, corev1.ResourceMemory, "cpu and memory stay")
	require.Contains(t, c.Resources.Requests, corev1.ResourceCPU)
	require.Equal(t, []corev1.ResourceClaim{{Name: GPUClaim}}, c.Resources.Claims)
	require.Len(t, spec.ResourceClaims, 1)
	require.Equal(t, GPUClaim, spec.ResourceClaims[0].Name)
	require.Equal(t, ClaimTemplateName("llama", p.For(ComponentMain).Devices, 4), *spec.ResourceClaims[0].ResourceClaimTemplateName)
	require.Regexp(t, `^llama-gpu-[0-9a-f]{8}$`, *spec.ResourceClaims[0].ResourceClaimTemplateName)
}

func TestClaimGPUsLeavesOtherPodsAlone(t *testing.T) {
	extended := NewPlacement(&hub.ModelDeployment{})
	extended.Set(ComponentMain, &hub.NodePool{Name: "l4", GPU: &hub.PoolGPU{PerNode: 1}})
	dra := NewPlacement(&hub.ModelDeployment{})
	dra.Set(ComponentMain, draPool())
	for name, tc := range map[string]struct {
		pp        *PoolPlacement
		spec      corev1.PodSpec
		container int
	}{
		"an extended-resource pool": {extended.For(ComponentMain), gpuContainer(1), 0},
		"no pool declared":          {NewPlacement(&hub.ModelDeployment{}).For(ComponentMain), gpuContainer(1), 0},
		"a container without GPUs":  {dra.For(ComponentMain), corev1.PodSpec{Containers: []corev1.Container{{Name: "x"}}}, 0},
		"no such container":         {dra.For(ComponentMain), gpuContainer(1), 1},
	} {
		t.Run(name, func(t *testing.T) {
			before := tc.spec.DeepCopy()
			require.Zero(t, tc.pp.ClaimGPUs(&tc.spec, tc.container, "m"))
			require.Equal(t, before, &tc.spec)
		})
	}
	var nilPlacement *PoolPlacement
	spec := gpuContainer(1)
	require.Zero(t, nilPlacement.ClaimGPUs(&spec, 0, "m"))
}

func TestClaimTemplate(t *testing.T) {
	md := &hub.ModelDeployment{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "inference"}}
	p := NewPlacement(md)
	p.Set(ComponentMain, draPool())
	obj, err := ClaimTemplate(&Request{MD: md, Engine: hub.EngineVLLM}, "llama-decode", p.For(ComponentMain).Devices, 2)
	require.NoError(t, err)
	require.Equal(t, "resource.k8s.io/v1", obj["apiVersion"])
	require.Equal(t, "ResourceClaimTemplate", obj["kind"])
	meta := obj["metadata"].(map[string]any)
	require.Regexp(t, `^llama-decode-gpu-[0-9a-f]{8}$`, meta["name"])
	require.Equal(t, "inference", meta["namespace"])
	requests := obj["spec"].(map[string]any)["spec"].(map[string]any)["devices"].(map[string]any)["requests"].([]any)
	require.Len(t, requests, 1)
	exactly := requests[0].(map[string]any)["exactly"].(map[string]any)
	require.Equal(t, map[string]any{
		"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": float64(2),
		"selectors": []any{map[string]any{"cel": map[string]any{"expression": `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`}}},
	}, exactly)
}

func TestClaimTemplateName(t *testing.T) {
	d := &DeviceRequest{DeviceClassName: "gpu.nvidia.com", Selectors: []string{"a", "b"}}
	long := "a-model-deployment-whose-name-is-long-enough-to-need-a-hash-xx"
	name := ClaimTemplateName(long, d, 2)
	require.LessOrEqual(t, len(name), MaxDerivedName)
	require.Regexp(t, `-gpu-[0-9a-f]{8}$`, name)
	require.Equal(t, name, ClaimTemplateName(long, d, 2), "deterministic")
	// The API server refuses any change to a template's spec: every
	// change of what is claimed must change the name.
	seen := map[string]bool{}
	for _, tc := range []struct {
		d     *DeviceRequest
		count int32
	}{
		{d, 2}, {d, 4}, {&DeviceRequest{DeviceClassName: "gpu.example.com", Selectors: d.Selectors}, 2},
		{&DeviceRequest{DeviceClassName: d.DeviceClassName, Selectors: []string{"a"}}, 2},
		{&DeviceRequest{DeviceClassName: d.DeviceClassName, Selectors: []string{"b", "a"}}, 2},
		{&DeviceRequest{DeviceClassName: d.DeviceClassName, Selectors: []string{"a\x00b"}}, 2},
	} {
		n := ClaimTemplateName("m", tc.d, tc.count)
		require.False(t, seen[n], "%+v %d", tc.d, tc.count)
		seen[n] = true
	}
}
