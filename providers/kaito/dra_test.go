package kaito

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

func draPool() *hub.NodePool { return providertest.DRAPool("l4", "NVIDIA L4", 1) }

func on(pool *hub.NodePool) option {
	return func(r *providers.Request) { r.Placement.Set(providers.ComponentMain, pool) }
}

const (
	draPresetSpec   = "model: {id: Qwen/Qwen3-8B}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\n"
	draLlamaCppSpec = "model: {id: bartowski/Llama-3.2-3B-Instruct-GGUF}\nengine: {type: llamacpp, image: llama:v1}\nresources: {gpu: {count: 1}, memory: 16Gi}\n"
)

func TestDRAPresetRefused(t *testing.T) {
	for _, v := range []string{"0.6.2", "0.8.1", "0.10.0", "0.12.0"} {
		req := request(t, draPresetSpec, at(v), on(draPool()))
		errs := Provider{}.Check(req).Errors()
		require.Len(t, errs, 1, v)
		require.Equal(t, "spec.resources.gpu.count", errs[0].Field)
		require.Contains(t, errs[0].Message, `node pool "l4", which claims its GPUs as DRA devices (DeviceClass "gpu.nvidia.com")`)
		require.Contains(t, errs[0].Message, "KAITO "+v+" creates the model pods of a preset itself and requests nvidia.com/gpu")
		require.Contains(t, errs[0].Message, "use a provider that writes its own pods' resource claims (docs/placement.md#gpus-as-dra-devices)")
	}
}

func TestDRALlamaCppTemplateClaims(t *testing.T) {
	req := request(t, draLlamaCppSpec, at("0.12.0"), on(draPool()))
	require.Empty(t, Provider{}.Check(req).Errors())
	objs, l := Provider{}.Render(req)
	require.False(t, l.HasErrors(), "%v", l)
	require.Len(t, objs, 2)
	spec := objs[0]["inference"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)
	require.NotContains(t, c, "limits", "no nvidia.com/gpu limit")
	require.Equal(t, []any{map[string]any{"name": providers.GPUClaim}}, c["claims"])
	name := providers.ClaimTemplateName(req.MD.Name, req.Placement.For(providers.ComponentMain).Devices, 1)
	require.Equal(t, []any{map[string]any{"name": providers.GPUClaim, "resourceClaimTemplateName": name}}, spec["resourceClaims"])
	require.Equal(t, "ResourceClaimTemplate", objs[1]["kind"])
	require.Equal(t, name, objs[1]["metadata"].(map[string]any)["name"])
}

func TestDRALlamaCppTemplateRefused(t *testing.T) {
	cases := map[string][]option{
		"KAITO before 0.8 provisions its own nodes":                {at("0.6.2")},
		"node auto-provisioning waits for nvidia.com/gpu capacity": {at("0.12.0"), nap("Standard_NC24ads_A100_v4", "Standard_D8s_v5")},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			req := request(t, draLlamaCppSpec, append(opts, on(draPool()))...)
			errs := Provider{}.Check(req).Errors()
			require.Len(t, errs, 1)
			require.Equal(t, "spec.resources.gpu.count", errs[0].Field)
			require.Contains(t, errs[0].Message, "nvidia.com/gpu capacity")
		})
	}
	// llama.cpp on CPU nodes of any pool is not affected.
	req := request(t, "model: {id: m}\nengine: {type: llamacpp, image: llama:v1}\n", at("0.6.2"), on(draPool()))
	require.Empty(t, Provider{}.Check(req).Errors())
}

// A pool without deviceClassName renders what it rendered before.
func TestDRANonDRAPoolUnchanged(t *testing.T) {
	pool := draPool()
	pool.GPU.DeviceClassName, pool.GPU.Selectors = "", nil
	obj, _ := render(t, draLlamaCppSpec, at("0.12.0"), on(pool))
	spec := obj["inference"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	require.NotContains(t, spec, "resourceClaims")
	c := spec["containers"].([]any)[0].(map[string]any)["resources"].(map[string]any)
	require.Equal(t, map[string]any{string(corev1.ResourceName("nvidia.com/gpu")): "1"}, c["limits"])
	require.NotContains(t, c, "claims")
	_, _ = render(t, draPresetSpec, at("0.10.0"), on(pool))
}
