package main

import (
	"fmt"

	"github.com/airunway-render/airunway-render/api/hub"
)

// field is one row of the ModelDeployment field reference. Default and
// the CRD's constraints are read from the CRD schema; what the renderer
// adds on top is written here, next to the constant that enforces it. Which
// providers honour the field is never written down: the generator renders
// the model with and without set for each provider and reports what
// changed.
type field struct {
	path  string // under spec, `[]` for the items of a list
	about string
	// defaulted says what the renderer fills in beyond the CRD's default
	// (upstream's mutating webhook).
	defaulted string
	// limit says what the renderer's validation allows beyond the CRD
	// schema; over, when set, is a spec fragment past that limit, which
	// every provider must refuse or generation fails.
	limit string
	over  string
	// base is merged into the probe model before either render, so that
	// set is meaningful (a disaggregated model for the prefill fields);
	// set is merged on top for the second render. `null` removes a key.
	base, set string
}

// fields lists every field of upstream's ModelDeployment spec, in the
// CRD's order of sections. A test fails when the CRD has a field that is
// not here.
var fields = []field{
	{path: "model.id", about: "The model: a Hugging Face repository (`org/name`) for `source: huggingface`; free text for `custom`.",
		defaulted: "none; required unless `source: custom`", set: `{model: {id: Qwen/Qwen3-1.7B}}`},
	{path: "model.servedName", about: "The name clients send in requests (OpenAI `model`).",
		defaulted: "`model.id` as it is (KAITO: its own name, the id's lower-cased last segment or the preset's name)", set: `{model: {servedName: qwen-small}}`},
	{path: "model.source", about: "Where the weights come from: `huggingface`, or `custom` (the image brings them).",
		set: `{model: {source: custom}, engine: {image: "registry.example.com/team/server:v1"}}`},
	{path: "model.storage.volumes[]", about: "Persistent volumes mounted into the model server: an existing claim, or a managed one (with `size`) the renderer creates.",
		limit: fmt.Sprintf("at most %d volumes", hub.MaxVolumes), over: overVolumes(),
		set: `{model: {storage: {volumes: [{name: cache, claimName: model-cache, purpose: modelCache}]}}}`},
	{path: "model.storage.volumes[].name", about: "The volume's name in the pod, and of a managed claim (`<model>-<name>`).",
		base: `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /data}]}}}`,
		set:  `{model: {storage: {volumes: [{name: weights, claimName: model-cache, mountPath: /data}]}}}`},
	{path: "model.storage.volumes[].claimName", about: "An existing PersistentVolumeClaim to mount; unset with `size` means a managed claim.",
		defaulted: "`<model>-<name>` for a managed volume",
		base:      `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /data}]}}}`,
		set:       `{model: {storage: {volumes: [{name: cache, claimName: other-cache, mountPath: /data}]}}}`},
	{path: "model.storage.volumes[].mountPath", about: "Where the volume is mounted; absolute, not a system directory.",
		defaulted: "`/model-cache` for `modelCache`, `/compilation-cache` for `compilationCache`",
		base:      `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /data}]}}}`,
		set:       `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /weights}]}}}`},
	{path: "model.storage.volumes[].purpose", about: "`modelCache` (the engine downloads weights there), `compilationCache`, or `custom`.",
		base: `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /data}]}}}`,
		set:  `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /data, purpose: modelCache}]}}}`},
	{path: "model.storage.volumes[].readOnly", about: "Mount read-only.",
		base: `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /data}]}}}`,
		set:  `{model: {storage: {volumes: [{name: cache, claimName: model-cache, mountPath: /data, readOnly: true}]}}}`},
	{path: "model.storage.volumes[].size", about: "Makes the volume managed: the renderer creates a claim of this size.",
		base: `{model: {storage: {volumes: [{name: cache, claimName: probe-cache, mountPath: /data}]}}}`,
		set:  `{model: {storage: {volumes: [{name: cache, claimName: probe-cache, mountPath: /data, size: 100Gi}]}}}`},
	{path: "model.storage.volumes[].storageClassName", about: "Storage class of a managed claim.",
		base: `{model: {storage: {volumes: [{name: cache, mountPath: /data, size: 100Gi}]}}}`,
		set:  `{model: {storage: {volumes: [{name: cache, mountPath: /data, size: 100Gi, storageClassName: premium}]}}}`},
	{path: "model.storage.volumes[].accessMode", about: "Access mode of a managed claim.",
		defaulted: "`ReadWriteMany`",
		base:      `{model: {storage: {volumes: [{name: cache, mountPath: /data, size: 100Gi}]}}}`,
		set:       `{model: {storage: {volumes: [{name: cache, mountPath: /data, size: 100Gi, accessMode: ReadWriteOnce}]}}}`},
	{path: "provider.name", about: "Names the provider; unset, the capability file's selection rules choose (see [Providers](providers.md)). The columns of this table are this field."},
	{path: "provider.overrides", about: "Free-form object deep-merged into the rendered provider object; keys that would change identity or placement are refused.",
		set: `{provider: {overrides: {spec: {example: value}}}}`},
	{path: "engine.type", about: "The inference engine: `vllm`, `sglang`, `trtllm` or `llamacpp`.",
		defaulted: "chosen from the provider's engines (vllm > sglang > trtllm > llamacpp)", set: `{engine: {type: sglang}}`},
	{path: "engine.image", about: "The model server image; wins over the capability file's pin and the provider's default.",
		set: `{engine: {image: "registry.example.com/vllm/vllm-openai:v0.11.0"}}`},
	{path: "engine.contextLength", about: "Maximum context length (tokens) the engine serves.", set: `{engine: {contextLength: 8192}}`},
	{path: "engine.trustRemoteCode", about: "Let the engine run the model repository's own code.", set: `{engine: {trustRemoteCode: true}}`},
	{path: "engine.enablePrefixCaching", about: "Prefix (KV) caching.", set: `{engine: {enablePrefixCaching: false}}`},
	{path: "engine.enforceEager", about: "Eager mode, no CUDA graphs.", set: `{engine: {enforceEager: true}}`},
	{path: "engine.args", about: "Engine flags as `flag: value` (`max-num-seqs: \"64\"` becomes `--max-num-seqs=64`).",
		limit: "a value starts with `-` only if it is a number; no flag both here and in `extraArgs`", over: `{engine: {args: {max-num-seqs: "64"}, extraArgs: ["--max-num-seqs=32"]}}`,
		set: `{engine: {args: {max-num-seqs: "64"}}}`},
	{path: "engine.extraArgs[]", about: "Engine arguments appended as written.", set: `{engine: {extraArgs: ["--max-num-seqs=64"]}}`},
	{path: "serving.mode", about: "`aggregated`, or `disaggregated` (separate prefill and decode servers).",
		set: `{serving: {mode: disaggregated}, resources: null, scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}}`},
	{path: "scaling.replicas", about: "Model server replicas (aggregated).",
		limit: fmt.Sprintf("at most %d", hub.MaxReplicas), over: fmt.Sprintf(`{scaling: {replicas: %d}}`, hub.MaxReplicas+1),
		set: `{scaling: {replicas: 2}}`},
	{path: "scaling.prefill.replicas", about: "Prefill server replicas (disaggregated).",
		limit: fmt.Sprintf("at most %d", hub.MaxReplicas), over: `{scaling: {prefill: {replicas: 33}}}`, base: disaggregated,
		set: `{scaling: {prefill: {replicas: 2}}}`},
	{path: "scaling.prefill.gpu.count", about: "GPUs per prefill server.",
		limit: fmt.Sprintf("at most %d", hub.MaxGPUCount), over: `{scaling: {prefill: {gpu: {count: 65}}}}`, base: disaggregated,
		set: `{scaling: {prefill: {gpu: {count: 2}}}}`},
	{path: "scaling.prefill.gpu.type", about: "GPU resource name of the prefill servers.", base: disaggregated,
		set: `{scaling: {prefill: {gpu: {type: amd.com/gpu}}}}`},
	{path: "scaling.prefill.memory", about: "Memory request of a prefill server.", limit: "at most 4Ti", over: `{scaling: {prefill: {memory: 5Ti}}}`, base: disaggregated,
		set: `{scaling: {prefill: {memory: 64Gi}}}`},
	{path: "scaling.decode.replicas", about: "Decode server replicas (disaggregated).",
		limit: fmt.Sprintf("at most %d", hub.MaxReplicas), over: `{scaling: {decode: {replicas: 33}}}`, base: disaggregated,
		set: `{scaling: {decode: {replicas: 2}}}`},
	{path: "scaling.decode.gpu.count", about: "GPUs per decode server.",
		limit: fmt.Sprintf("at most %d", hub.MaxGPUCount), over: `{scaling: {decode: {gpu: {count: 65}}}}`, base: disaggregated,
		set: `{scaling: {decode: {gpu: {count: 2}}}}`},
	{path: "scaling.decode.gpu.type", about: "GPU resource name of the decode servers.", base: disaggregated,
		set: `{scaling: {decode: {gpu: {type: amd.com/gpu}}}}`},
	{path: "scaling.decode.memory", about: "Memory request of a decode server.", limit: "at most 4Ti", over: `{scaling: {decode: {memory: 5Ti}}}`, base: disaggregated,
		set: `{scaling: {decode: {memory: 64Gi}}}`},
	{path: "resources.gpu.count", about: "GPUs per model server (aggregated); it picks the node pool.",
		defaulted: "1 for a GPU engine when `resources` is unset",
		limit:     fmt.Sprintf("at most %d", hub.MaxGPUCount), over: fmt.Sprintf(`{resources: {gpu: {count: %d}}}`, hub.MaxGPUCount+1),
		set: `{resources: {gpu: {count: 2}}}`},
	{path: "resources.gpu.type", about: "GPU resource name requested; it must match a pool's `gpu.resourceName`.",
		set: `{resources: {gpu: {type: amd.com/gpu}}}`},
	{path: "resources.memory", about: "Memory request of a model server. Without it, every model server requests a default sized from its node pool ([placement](placement.md#cpu-and-memory-requests)).", limit: "at most 4Ti", over: `{resources: {memory: 5Ti}}`,
		set: `{resources: {memory: 32Gi}}`},
	{path: "resources.cpu", about: "CPU request of a model server. Without it, every model server requests a default sized from its node pool ([placement](placement.md#cpu-and-memory-requests)).", limit: "at most 512", over: `{resources: {cpu: "513"}}`,
		set: `{resources: {cpu: "8"}}`},
	{path: "image", about: "Deprecated: the image, before `engine.image` existed. Warns; `airunway-render migrate` moves it, or names the field to set first when creating `spec.engine` would switch on a default.",
		set: `{image: "registry.example.com/vllm/vllm-openai:v0.11.0"}`},
	{path: "env[]", about: "Environment variables of the model server container (Kubernetes `EnvVar`).",
		set: `{env: [{name: VLLM_LOGGING_LEVEL, value: DEBUG}]}`},
	{path: "podTemplate.metadata.labels", about: "Extra labels on the model server pods.",
		set: `{podTemplate: {metadata: {labels: {team: search}}}}`},
	{path: "podTemplate.metadata.annotations", about: "Extra annotations on the model server pods.",
		set: `{podTemplate: {metadata: {annotations: {example.com/owner: team-a}}}}`},
	{path: "secrets.huggingFaceToken", about: "A Secret (in the model's namespace) whose key `HF_TOKEN` holds the Hugging Face token; referenced by name only.",
		set: `{secrets: {huggingFaceToken: hf-token}}`},
	{path: "gateway.enabled", about: "`false` renders no gateway objects for this model even when the cluster has a gateway.",
		defaulted: "true when the capability file declares a gateway", set: `{gateway: {enabled: false}}`},
	{path: "gateway.modelName", about: "The model name the gateway routes on.", defaulted: "`model.servedName`",
		set: `{gateway: {modelName: qwen-chat}}`},
	{path: "gateway.httpRouteRef", about: "Use this existing HTTPRoute instead of rendering one.",
		set: `{gateway: {httpRouteRef: shared-route}}`},
	{path: "nodeSelector", about: "Extra node labels; merged with the chosen pool's selector (a conflicting key is an error).",
		set: `{nodeSelector: {example.com/zone: a}}`},
	{path: "tolerations[]", about: "Extra tolerations, besides the chosen pool's.",
		set: `{tolerations: [{key: example.com/dedicated, operator: Exists, effect: NoSchedule}]}`},
}

// disaggregated is the base of the prefill and decode rows.
const disaggregated = `{serving: {mode: disaggregated}, resources: null, scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}}`

// overVolumes is one volume more than the renderer allows.
func overVolumes() string {
	s := `{model: {storage: {volumes: [`
	for i := range hub.MaxVolumes + 1 {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("{name: v%d, claimName: c%d, mountPath: /v%d}", i, i, i)
	}
	return s + `]}}}`
}
