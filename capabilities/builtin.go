package capabilities

import (
	"github.com/airunway-render/airunway-render/api/hub"
)

// Builtin is what the renderer knows about a provider before reading any
// capability file: its upstream registration (engines and CEL selection
// rules) and the operator releases it can render for.
type Builtin struct {
	Name string
	// Versions is nil for providers without an operator (plain Kubernetes
	// workloads), whose capability entry must not carry a version.
	Versions *hub.VersionRange
	// DefaultVersion is what upstream AI Runway pins and what the embedded
	// default capability file declares.
	DefaultVersion string
	// NewestVersion is the newest operator release a golden case renders
	// for (TestNewestVersionIsTested): what a capability file that names
	// no release gets, with a warning.
	NewestVersion string
	// Renders describes the objects the provider produces, for docs/capability-file.md
	// and `airunway-render version`.
	Renders string
	// KubeFeatures names the Kubernetes features (package kubefeatures)
	// the provider's objects use, so the matrix can say which Kubernetes
	// releases accept them. A golden test holds it true and tight.
	KubeFeatures []string
	// Engines are what the provider's renderer can produce: a capability
	// file may narrow them for its cluster, never widen them, and the
	// render engine refuses a model outside them in Refusals' words.
	Engines []hub.EngineCapability
	Rules   []hub.SelectionRule
	// NodeAutoProvisioning: the operator provisions nodes itself, so a
	// capability file may declare `nodeAutoProvisioning` for it.
	NodeAutoProvisioning bool
	// Refusals words what the provider refuses, as upstream's provider
	// controller does (its validateCompatibility).
	Refusals Refusals
}

// Refusals are message templates for a model outside a provider's built-in
// Engines. They may use {provider}, {engine} (the model's), {engines} (the
// provider's, comma-separated), {mode}, {modeEngines} (the engines serving
// the mode, joined with "and"), {field} (the GPU count that must be set)
// and {count} (that field without `spec.`). An empty template falls back
// to the wording of the capability-file compatibility check.
type Refusals struct {
	// Engine: the provider does not run the engine.
	Engine string
	// EngineAdvice adds advice for a particular engine, after "; ".
	EngineAdvice map[string]string
	// Mode: the engine does not run the serving mode.
	Mode string
	// GPU: the engine runs on GPUs only, and the model requests none.
	GPU string
}

var (
	aggregated   = []string{hub.ModeAggregated}
	aggAndDisagg = []string{hub.ModeAggregated, hub.ModeDisaggregated}
	// The API formats upstream's providers declare per engine (main after
	// v0.7.0, #317): the engine's most, except KubeRay's vLLM, whose Ray
	// Serve OpenAI app answers Chat Completions only.
	allFormats    = hub.EngineAPIFormats[hub.EngineVLLM]
	sglangFormats = hub.EngineAPIFormats[hub.EngineSGLang]
	trtllmFormats = hub.EngineAPIFormats[hub.EngineTRTLLM]
	chatOnly      = []string{hub.APIFormatOpenAIChat}
	dynamoGateway = &hub.GatewayCapabilities{ManagesInferencePool: true, InferencePoolNamePattern: "{name}-pool", InferencePoolNamespace: "{namespace}"}
)

// llmdEndpointPickerConfig is the plugin configuration the llm-d provider
// registers for its endpoint picker: prefix-cache aware scoring behind a
// decode filter, one scheduling profile.
const llmdEndpointPickerConfig = `apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: prefix-cache-scorer
- type: decode-filter
- type: max-score-picker
- type: single-profile-handler
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: decode-filter
  - pluginRef: max-score-picker
  - pluginRef: prefix-cache-scorer
    weight: 2
`

// Builtins lists the five providers in name order. The engines and rules
// reproduce the upstream InferenceProviderConfig registrations; their
// priorities decide auto-selection exactly as upstream does.
var Builtins = []Builtin{
	{
		Name: hub.ProviderDynamo, Versions: ptr(hub.MustVersionRange("1.1.0", "1.6.0")), DefaultVersion: "1.1.1", NewestVersion: "1.1.1",
		Renders: "nvidia.com/v1alpha1 DynamoGraphDeployment (+ v1 PersistentVolumeClaim, batch/v1 Job for managed storage; a nvidia.com/v1alpha1 DynamoModel per LoRA adapter), or in intent mode (Dynamo 1.5+) a nvidia.com/v1beta1 DynamoGraphDeploymentRequest",
		Engines: []hub.EngineCapability{
			{Name: hub.EngineVLLM, ServingModes: aggAndDisagg, APIFormats: allFormats, GPUSupport: true, Gateway: dynamoGateway},
			{Name: hub.EngineSGLang, ServingModes: aggAndDisagg, APIFormats: sglangFormats, GPUSupport: true, Gateway: dynamoGateway},
			{Name: hub.EngineTRTLLM, ServingModes: aggregated, APIFormats: trtllmFormats, GPUSupport: true, Gateway: dynamoGateway},
		},
		Rules: []hub.SelectionRule{
			{Condition: "spec.engine.type == 'trtllm'", Priority: 100},
			{Condition: "spec.engine.type == 'sglang'", Priority: 100},
			{Condition: "has(spec.serving) && spec.serving.mode == 'disaggregated'", Priority: 90},
			{Condition: "has(spec.resources.gpu) && spec.resources.gpu.count > 0 && spec.engine.type == 'vllm'", Priority: 50},
		},
		Refusals: Refusals{
			Engine:       "Dynamo does not support {engine} engine (the dynamo provider supports {engines})",
			EngineAdvice: map[string]string{hub.EngineLlamaCpp: "use the kaito provider for llama.cpp"},
			Mode:         "provider dynamo does not support {mode} mode for engine {engine} ({mode} serving is supported for {modeEngines})",
			GPU:          "Dynamo requires GPU (set {count} > 0): the dynamo provider runs every engine on GPUs",
		},
	},
	{
		Name: hub.ProviderKAITO, Versions: ptr(hub.MustVersionRange("0.6.0", "0.13.0")), DefaultVersion: "0.10.0", NewestVersion: "0.12.0",
		Renders: "kaito.sh/v1beta1 Workspace, or InferenceSet (0.11+: chosen, autoscaled or zero replicas) + v1 Service", NodeAutoProvisioning: true,
		Engines: []hub.EngineCapability{
			{Name: hub.EngineVLLM, ServingModes: aggregated, APIFormats: allFormats, GPUSupport: true},
			{Name: hub.EngineLlamaCpp, ServingModes: aggregated, APIFormats: chatOnly, GPUSupport: true, CPUSupport: true, Gateway: &hub.GatewayCapabilities{IgnoresServedName: true}},
		},
		Rules: []hub.SelectionRule{
			{Condition: "!has(spec.resources.gpu) || spec.resources.gpu.count == 0", Priority: 100},
			{Condition: "spec.engine.type == 'llamacpp'", Priority: 100},
		},
		Refusals: Refusals{
			Engine: "KAITO does not support {engine} engine: the kaito provider serves vllm (KAITO presets) and llamacpp (a pod template running your image)",
			Mode:   "KAITO does not support {mode} serving mode; use `spec.serving.mode: aggregated`, or a provider that serves prefill/decode",
			GPU:    "KAITO runs the {engine} engine on GPUs only (set {count} > 0): its presets need GPU nodes; llamacpp is the engine for CPU nodes",
		},
	},
	{
		Name: hub.ProviderKubeRay, Versions: ptr(hub.MustVersionRange("1.3.0", "1.8.0")), DefaultVersion: "1.3.0", NewestVersion: "1.7.0",
		Renders: "ray.io/v1 RayService",
		Engines: []hub.EngineCapability{
			{Name: hub.EngineVLLM, ServingModes: aggAndDisagg, APIFormats: chatOnly, GPUSupport: true},
		},
		Rules: []hub.SelectionRule{
			{Condition: "has(spec.resources.gpu) && spec.resources.gpu.count > 1 && spec.engine.type == 'vllm'", Priority: 80},
		},
		Refusals: Refusals{
			Engine: "KubeRay only supports {engines} engine, got {engine}",
			GPU:    "KubeRay requires GPU (set {count} > 0)",
		},
	},
	{
		Name: hub.ProviderLLMD, Versions: ptr(hub.MustVersionRange("0.6.0", "0.11.0")), DefaultVersion: "0.6.0", NewestVersion: "0.10.0",
		Renders: "apps/v1 Deployment + v1 Service", KubeFeatures: []string{"startupProbe"},
		Engines: []hub.EngineCapability{
			{Name: hub.EngineVLLM, ServingModes: aggAndDisagg, APIFormats: allFormats, GPUSupport: true, Gateway: &hub.GatewayCapabilities{EndpointPicker: &hub.EndpointPicker{
				Image: "ghcr.io/llm-d/llm-d-inference-scheduler:v0.6.0", ConfigData: llmdEndpointPickerConfig,
			}}},
		},
		Refusals: Refusals{
			Engine: "the llmd provider (llm-d) only supports the \"{engines}\" engine, got \"{engine}\"",
			GPU:    "the llmd provider requires GPU resources (`{field}` > 0)",
		},
	},
	{
		Name: hub.ProviderVLLM, Renders: "apps/v1 Deployment + v1 Service", KubeFeatures: []string{"startupProbe"},
		Engines: []hub.EngineCapability{
			{Name: hub.EngineVLLM, ServingModes: aggregated, APIFormats: allFormats, GPUSupport: true},
		},
		Refusals: Refusals{
			Engine: "the vllm provider only supports the \"{engines}\" engine, got \"{engine}\"",
			Mode:   "the vllm provider does not support {mode} serving mode; use `spec.serving.mode: aggregated` or another provider",
			GPU:    "the vllm provider requires GPU resources (`{field}` > 0)",
		},
	},
}

// BuiltinFor returns the built-in description of a provider, nil when the
// name is unknown.
func BuiltinFor(name string) *Builtin {
	for i := range Builtins {
		if Builtins[i].Name == name {
			return &Builtins[i]
		}
	}
	return nil
}

// ProviderNames lists the known provider names in order.
func ProviderNames() []string {
	names := make([]string, len(Builtins))
	for i, b := range Builtins {
		names[i] = b.Name
	}
	return names
}

func ptr[T any](v T) *T { return &v }
