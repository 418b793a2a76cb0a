package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
)

const (
	gpuSpec    = "model: {id: m}\nresources: {gpu: {count: 1}}"
	noGPUSpec  = "model: {id: m}\nresources: {cpu: \"4\"}"
	disaggSpec = "model: {id: m}\nserving: {mode: disaggregated}\nscaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}"
)

// TestEligibility holds every provider's refusals of what its renderer
// cannot produce to the words of its upstream controller
// (providers/<name>/controller_test.go in kaito-project/airunway; the item numbers
// are those of our upstream checklist, as in the provider tests), now that
// they are derived from the catalogue.
func TestEligibility(t *testing.T) {
	type problem struct{ field, message string }
	for _, tc := range []struct {
		name, provider, meta, spec, engine string
		want                               []problem
	}{
		{name: "item 95: llamacpp", provider: "dynamo", spec: gpuSpec, engine: "llamacpp", want: []problem{{"spec.engine.type",
			"Dynamo does not support llamacpp engine (the dynamo provider supports vllm, sglang, trtllm); use the kaito provider for llama.cpp"}}},
		{name: "an engine no provider runs", provider: "dynamo", spec: gpuSpec, engine: "tgi", want: []problem{{"spec.engine.type",
			"Dynamo does not support tgi engine (the dynamo provider supports vllm, sglang, trtllm)"}}},
		{name: "item 95: no GPU", provider: "dynamo", spec: noGPUSpec, engine: "vllm", want: []problem{{"spec.resources.gpu.count",
			"Dynamo requires GPU (set resources.gpu.count > 0): the dynamo provider runs every engine on GPUs"}}},
		{name: "trtllm disaggregated", provider: "dynamo", spec: disaggSpec, engine: "trtllm", want: []problem{{"spec.serving.mode",
			"provider dynamo does not support disaggregated mode for engine trtllm (disaggregated serving is supported for vllm and sglang)"}}},
		{name: "item 95: disaggregated with GPUs", provider: "dynamo", spec: disaggSpec, engine: "vllm"},
		{name: "the mocker needs no GPU", provider: "dynamo", meta: "{name: m, namespace: default, annotations: {airunway.ai/dynamo-test-backend: mocker}}",
			spec: "model: {id: m}\nprovider: {name: dynamo}\nresources: {cpu: \"1\"}", engine: "vllm"},

		{name: "item 63: sglang", provider: "kaito", spec: noGPUSpec, engine: "sglang", want: []problem{{"spec.engine.type",
			"KAITO does not support sglang engine: the kaito provider serves vllm (KAITO presets) and llamacpp (a pod template running your image)"}}},
		{name: "item 73: disaggregated", provider: "kaito", spec: disaggSpec, engine: "vllm", want: []problem{{"spec.serving.mode",
			"KAITO does not support disaggregated serving mode; use `spec.serving.mode: aggregated`, or a provider that serves prefill/decode"}}},
		{name: "llamacpp runs on CPU nodes", provider: "kaito", spec: noGPUSpec, engine: "llamacpp"},
		{name: "a KAITO preset needs GPUs", provider: "kaito", spec: noGPUSpec, engine: "vllm", want: []problem{{"spec.resources.gpu.count",
			"KAITO runs the vllm engine on GPUs only (set resources.gpu.count > 0): its presets need GPU nodes; llamacpp is the engine for CPU nodes"}}},

		{name: "item 107: sglang", provider: "kuberay", spec: gpuSpec, engine: "sglang", want: []problem{{"spec.engine.type", "KubeRay only supports vllm engine, got sglang"}}},
		{name: "item 107: no GPU", provider: "kuberay", spec: noGPUSpec, engine: "vllm", want: []problem{{"spec.resources.gpu.count", "KubeRay requires GPU (set resources.gpu.count > 0)"}}},
		{name: "item 107: every problem", provider: "kuberay", spec: noGPUSpec, engine: "trtllm", want: []problem{
			{"spec.engine.type", "KubeRay only supports vllm engine, got trtllm"},
			{"spec.resources.gpu.count", "KubeRay requires GPU (set resources.gpu.count > 0)"}}},
		{name: "disaggregated", provider: "kuberay", spec: disaggSpec, engine: "vllm"},

		{name: "item 119: sglang", provider: "llmd", spec: gpuSpec, engine: "sglang", want: []problem{{"spec.engine.type", `the llmd provider (llm-d) only supports the "vllm" engine, got "sglang"`}}},
		{name: "llm-d without GPU", provider: "llmd", spec: noGPUSpec, engine: "vllm", want: []problem{{"spec.resources.gpu.count", "the llmd provider requires GPU resources (`spec.resources.gpu.count` > 0)"}}},

		{name: "item 134: sglang", provider: "vllm", spec: gpuSpec, engine: "sglang", want: []problem{{"spec.engine.type", `the vllm provider only supports the "vllm" engine, got "sglang"`}}},
		{name: "item 134: no GPU", provider: "vllm", spec: noGPUSpec, engine: "vllm", want: []problem{{"spec.resources.gpu.count", "the vllm provider requires GPU resources (`spec.resources.gpu.count` > 0)"}}},
		{name: "item 134: disaggregated", provider: "vllm", spec: disaggSpec, engine: "vllm", want: []problem{{"spec.serving.mode",
			"the vllm provider does not support disaggregated serving mode; use `spec.serving.mode: aggregated` or another provider"}}},
	} {
		t.Run(tc.provider+"/"+tc.name, func(t *testing.T) {
			md := providertest.Valid(t, tc.meta, tc.spec)
			var got []problem
			for _, p := range checkEligible(capabilities.BuiltinFor(tc.provider), md, tc.engine).Sorted() {
				require.Equal(t, diag.Error, p.Severity)
				got = append(got, problem{p.Field, p.Message})
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestEligibilityOfComponents: a disaggregated model whose components
// have no GPUs is refused per component. Validation refuses it first, so
// the check is run on a model that skipped validation.
func TestEligibilityOfComponents(t *testing.T) {
	md := providertest.Decode(t, "", "model: {id: m}\nserving: {mode: disaggregated}\nscaling: {prefill: {replicas: 1}, decode: {gpu: {count: 0}}}")
	l := checkEligible(capabilities.BuiltinFor(hub.ProviderKubeRay), md, hub.EngineVLLM).Sorted()
	require.Len(t, l, 2)
	require.Equal(t, "spec.scaling.decode.gpu.count", l[0].Field)
	require.Equal(t, "KubeRay requires GPU (set scaling.decode.gpu.count > 0)", l[0].Message)
	require.Equal(t, "spec.scaling.prefill.gpu.count", l[1].Field)
}

// TestEligibilityFallbackWords: a provider without its own words is
// refused in the wording of the capability-file compatibility check.
func TestEligibilityFallbackWords(t *testing.T) {
	b := &capabilities.Builtin{Name: "future", Engines: []hub.EngineCapability{{Name: hub.EngineVLLM, ServingModes: []string{hub.ModeAggregated}, GPUSupport: true}}}
	var got []string
	for _, spec := range []string{gpuSpec, disaggSpec, noGPUSpec} {
		for _, p := range checkEligible(b, providertest.Valid(t, "", spec), hub.EngineSGLang) {
			got = append(got, p.Field+": "+p.Message)
		}
	}
	require.Equal(t, []string{
		"spec.engine.type: provider future does not support engine sglang (it supports: vllm)",
		"spec.engine.type: provider future does not support engine sglang (it supports: vllm)",
		"spec.serving.mode: provider future does not support disaggregated mode for engine sglang",
		"spec.engine.type: provider future does not support engine sglang (it supports: vllm)",
		"spec.resources.gpu.count: sglang engine on provider future requires GPU (set resources.gpu.count > 0)",
	}, got)
}

// TestRefusalTemplatesAreFilled keeps the catalogue's templates to the
// placeholders checkEligible knows.
func TestRefusalTemplatesAreFilled(t *testing.T) {
	for _, b := range capabilities.Builtins {
		for _, engine := range append([]string{"tgi"}, hub.Engines...) {
			for _, spec := range []string{noGPUSpec, disaggSpec} {
				for _, p := range checkEligible(&b, providertest.Decode(t, "", spec), engine) {
					require.NotContains(t, p.Message, "{", "%s: %s", b.Name, p.Message)
					require.NotContains(t, p.Message, "}", "%s: %s", b.Name, p.Message)
				}
			}
		}
		require.True(t, strings.Contains(b.Refusals.Engine, "{engine}"), "%s's engine refusal must name the engine", b.Name)
	}
}
