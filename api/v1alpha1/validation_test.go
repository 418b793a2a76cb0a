package v1alpha1

import (
	"fmt"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/api/hub"

	"github.com/stretchr/testify/require"
)

// validationCase runs one ModelDeployment through the real pipeline:
// YAML -> DecodeModelDeployment -> DefaultModelDeployment ->
// ValidateModelDeployment, and compares every reported problem.
type validationCase struct {
	name string
	meta string // flow-style metadata; defaultMeta when empty
	spec string // flow-style spec
	want []want // exactly these problems, nothing else
}

func runValidationCases(t *testing.T, cases []validationCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, tc := range cases {
		require.Falsef(t, seen[tc.name], "duplicate case name %q", tc.name)
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			md := decodeYAML(t, mdDoc(tc.meta, tc.spec))
			DefaultModelDeployment(md)
			requireProblems(t, validate(md), tc.want...)
		})
	}
}

const (
	mockerMeta    = `{name: test-model, namespace: default, annotations: {airunway.ai/dynamo-test-backend: mocker}}`
	disaggNoGPUs  = `serving: {mode: disaggregated}, scaling: {prefill: {replicas: 1}, decode: {replicas: 1}}`
	disaggWithGPU = `serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}`
)

// Upstream §8 items 1-4: spec.engine.args keys must not be repeated as
// flags in spec.engine.extraArgs.
func TestValidateArgsExtraArgs(t *testing.T) {
	runValidationCases(t, []validationCase{
		{
			name: "item 1: --key=value repeats an args key",
			spec: `{model: {id: m}, engine: {type: vllm, args: {tensor-parallel-size: "4"}, extraArgs: ["--tensor-parallel-size=2"]}}`,
			want: []want{e("spec.engine.extraArgs[0]", "spec.engine.args", "spec.engine.extraArgs", `"tensor-parallel-size"`)},
		},
		{
			name: "item 2: --key value repeats an args key",
			spec: `{model: {id: m}, engine: {type: vllm, args: {tensor-parallel-size: "4"}, extraArgs: ["--tensor-parallel-size", "2"]}}`,
			want: []want{e("spec.engine.extraArgs[0]", "spec.engine.args", "set it in only one of")},
		},
		{
			name: "item 3: token without dashes is not a flag",
			spec: `{model: {id: m}, engine: {type: vllm, args: {tensor-parallel-size: "4"}, extraArgs: ["tensor-parallel-size"]}}`,
		},
		{
			name: "item 4: different flags do not conflict",
			spec: `{model: {id: m}, engine: {type: vllm, args: {gpu-memory-utilization: "0.9"}, extraArgs: ["--enable-chunked-prefill", "--max-num-seqs=64"]}}`,
		},
		{
			name: "single dash is not a flag",
			spec: `{model: {id: m}, engine: {type: vllm, args: {tensor-parallel-size: "4"}, extraArgs: ["-tensor-parallel-size=2"]}}`,
		},
		{
			name: "three dashes is not a flag",
			spec: `{model: {id: m}, engine: {type: vllm, args: {tensor-parallel-size: "4"}, extraArgs: ["---tensor-parallel-size=2"]}}`,
		},
		{
			name: "flag value equal to an args key is not a conflict",
			spec: `{model: {id: m}, engine: {type: vllm, args: {served-model-name: x}, extraArgs: ["--tokenizer", "served-model-name"]}}`,
		},
		{
			name: "every conflicting flag is reported",
			spec: `{model: {id: m}, engine: {type: vllm, args: {tensor-parallel-size: "4", max-model-len: "4096"}, extraArgs: ["--max-model-len=8192", "--enforce-eager", "--tensor-parallel-size", "2"]}}`,
			want: []want{
				e("spec.engine.extraArgs[0]", `"max-model-len"`),
				e("spec.engine.extraArgs[2]", `"tensor-parallel-size"`),
			},
		},
	})
}

// Upstream §8 items 5-6 and the engine/serving enums.
func TestValidateImageAndEngine(t *testing.T) {
	runValidationCases(t, []validationCase{
		{
			name: "item 5: spec.image and engine.image differ",
			spec: `{model: {id: m}, image: "legacy:v1", engine: {type: vllm, image: "engine:v2"}}`,
			want: []want{e("spec.engine.image", "spec.image", `"engine:v2"`, `"legacy:v1"`, "must be equal")},
		},
		{
			// Upstream admits this silently (item 6); the renderer also
			// warns that the legacy field is deprecated.
			name: "item 6: spec.image equals engine.image, only the deprecation",
			spec: `{model: {id: m}, image: "same:v1", engine: {type: vllm, image: "same:v1"}}`,
			want: []want{w("spec.image", "is deprecated", "`spec.engine.image`", "`airunway-render migrate`")},
		},
		{
			name: "only legacy spec.image: deprecated, naming the replacement",
			spec: `{model: {id: m}, image: "legacy:v1", engine: {type: vllm}}`,
			want: []want{w("spec.image", "is deprecated", "`spec.engine.image`")},
		},
		{
			name: "unknown engine type",
			spec: `{model: {id: m}, engine: {type: tgi}}`,
			want: []want{e("spec.engine.type", `"tgi" is not supported`, `"vllm", "sglang", "trtllm", "llamacpp"`)},
		},
		{
			name: "unknown serving mode",
			spec: `{model: {id: m}, serving: {mode: hybrid}}`,
			want: []want{e("spec.serving.mode", `"hybrid" is not supported`, `"aggregated", "disaggregated"`)},
		},
		{
			name: "trustRemoteCode true warns",
			spec: `{model: {id: m}, engine: {type: vllm, trustRemoteCode: true}}`,
			want: []want{w("spec.engine.trustRemoteCode", "arbitrary code")},
		},
		{
			name: "contextLength with trtllm warns",
			spec: `{model: {id: m}, engine: {type: trtllm, contextLength: 4096}}`,
			want: []want{w("spec.engine.contextLength", `"trtllm"`)},
		},
		{
			name: "contextLength with vllm is fine",
			spec: `{model: {id: m}, engine: {type: vllm, contextLength: 4096}}`,
		},
	})
}

// Upstream §8 items 7-8 and the §1.1 metadata/model rows.
func TestValidateMetadataAndModel(t *testing.T) {
	runValidationCases(t, []validationCase{
		{
			name: "item 7: dotted name rejected",
			meta: `{name: qwen3-0.6b, namespace: default}`,
			spec: `{model: {id: m}}`,
			want: []want{e("metadata.name", "must not contain dots", `"qwen3-0-6b"`)},
		},
		{
			name: "item 7: dashed name admitted",
			meta: `{name: qwen3-0-6b, namespace: default}`,
			spec: `{model: {id: m}}`,
		},
		{
			name: "missing name",
			meta: `{namespace: default}`,
			spec: `{model: {id: m}}`,
			want: []want{e("metadata.name", "must be set")},
		},
		{
			name: "upper-case name",
			meta: `{name: Test-Model, namespace: default}`,
			spec: `{model: {id: m}}`,
			want: []want{e("metadata.name", "is not a valid name")},
		},
		{
			name: "invalid namespace",
			meta: `{name: test-model, namespace: Bad_NS}`,
			spec: `{model: {id: m}}`,
			want: []want{e("metadata.namespace", "is not a valid namespace")},
		},
		{
			name: "item 8: huggingface source without model.id",
			spec: `{model: {source: huggingface}}`,
			want: []want{e("spec.model.id", "model.id is required")},
		},
		{
			name: "item 8: defaulted source without model.id",
			spec: `{model: {servedName: chat}}`,
			want: []want{e("spec.model.id", "model.id is required", `"huggingface"`)},
		},
		{
			name: "custom source needs no model.id",
			spec: `{model: {source: custom}}`,
		},
		{
			name: "servedName with custom source warns",
			spec: `{model: {source: custom, servedName: chat}}`,
			want: []want{w("spec.model.servedName", "not applicable", `"custom"`)},
		},
		{
			name: "unknown model source",
			spec: `{model: {id: m, source: s3}}`,
			want: []want{e("spec.model.source", `"s3" is not supported`)},
		},
		{
			name: "env entry without name",
			spec: `{model: {id: m}, env: [{name: A, value: "1"}, {value: "2"}]}`,
			want: []want{e("spec.env[1].name", "must be set")},
		},
	})
}

// Upstream §8 items 17-20: disaggregated serving and the Dynamo mocker.
func TestValidateDisaggregated(t *testing.T) {
	runValidationCases(t, []validationCase{
		{
			name: "disaggregated with prefill/decode GPUs is valid",
			spec: `{model: {id: m}, engine: {type: vllm}, ` + disaggWithGPU + `}`,
		},
		{
			name: "item 17: resources.gpu together with prefill/decode",
			spec: `{model: {id: m}, engine: {type: vllm}, resources: {gpu: {count: 2}}, ` + disaggWithGPU + `}`,
			want: []want{e("spec.resources.gpu", "cannot specify both resources.gpu and scaling.prefill/decode")},
		},
		{
			name: "resources.gpu.count 0 is allowed in disaggregated mode",
			spec: `{model: {id: m}, engine: {type: vllm}, resources: {gpu: {count: 0}, memory: 16Gi}, ` + disaggWithGPU + `}`,
		},
		{
			name: "item 18: disaggregated without scaling",
			spec: `{model: {id: m}, engine: {type: vllm}, serving: {mode: disaggregated}}`,
			want: []want{e("spec.scaling", "disaggregated mode requires scaling.prefill and scaling.decode")},
		},
		{
			name: "item 18: disaggregated with prefill only",
			spec: `{model: {id: m}, engine: {type: vllm}, serving: {mode: disaggregated}, scaling: {replicas: 2, prefill: {gpu: {count: 1}}}}`,
			want: []want{e("spec.scaling", "requires scaling.prefill and scaling.decode")},
		},
		{
			name: "items 17+18: both reported",
			spec: `{model: {id: m}, engine: {type: vllm}, serving: {mode: disaggregated}, resources: {gpu: {count: 2}}}`,
			want: []want{
				e("spec.resources.gpu", "cannot specify both"),
				e("spec.scaling", "requires scaling.prefill and scaling.decode"),
			},
		},
		{
			name: "item 19: prefill and decode without GPUs",
			spec: `{model: {id: m}, engine: {type: vllm}, ` + disaggNoGPUs + `}`,
			want: []want{
				e("spec.scaling.prefill.gpu.count", "scaling.prefill.gpu.count > 0"),
				e("spec.scaling.decode.gpu.count", "scaling.decode.gpu.count > 0"),
			},
		},
		{
			name: "item 19: explicit zero GPU count on decode",
			spec: `{model: {id: m}, engine: {type: vllm}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 0}}}}`,
			want: []want{e("spec.scaling.decode.gpu.count", "scaling.decode.gpu.count > 0")},
		},
		{
			name: "item 19: mocker with provider dynamo waives the GPU rule",
			meta: mockerMeta,
			spec: `{model: {id: m}, provider: {name: dynamo}, engine: {type: vllm}, ` + disaggNoGPUs + `}`,
		},
		{
			name: "item 19: mocker annotation without provider dynamo",
			meta: mockerMeta,
			spec: `{model: {id: m}, engine: {type: vllm}, ` + disaggNoGPUs + `}`,
			want: []want{
				e("spec.scaling.prefill.gpu.count", "> 0"),
				e("spec.scaling.decode.gpu.count", "> 0"),
			},
		},
		{
			name: "item 19: mocker annotation with provider kaito",
			meta: mockerMeta,
			spec: `{model: {id: m}, provider: {name: kaito}, engine: {type: vllm}, ` + disaggNoGPUs + `}`,
			want: []want{
				e("spec.scaling.prefill.gpu.count", "> 0"),
				e("spec.scaling.decode.gpu.count", "> 0"),
			},
		},
		{
			name: "item 19: annotation value other than mocker",
			meta: `{name: test-model, namespace: default, annotations: {airunway.ai/dynamo-test-backend: "true"}}`,
			spec: `{model: {id: m}, provider: {name: dynamo}, engine: {type: vllm}, ` + disaggNoGPUs + `}`,
			want: []want{
				e("spec.scaling.prefill.gpu.count", "> 0"),
				e("spec.scaling.decode.gpu.count", "> 0"),
			},
		},
		{
			name: "mocker does not waive the prefill/decode requirement",
			meta: mockerMeta,
			spec: `{model: {id: m}, provider: {name: dynamo}, engine: {type: vllm}, serving: {mode: disaggregated}}`,
			want: []want{e("spec.scaling", "requires scaling.prefill and scaling.decode")},
		},
		{
			name: "item 20: mocker with sglang",
			meta: mockerMeta,
			spec: `{model: {id: m}, provider: {name: dynamo}, engine: {type: sglang}}`,
			want: []want{e("spec.engine.type", "Dynamo mocker mode only supports the vllm engine", `"sglang"`)},
		},
		{
			name: "item 20: mocker with trtllm in disaggregated mode",
			meta: mockerMeta,
			spec: `{model: {id: m}, provider: {name: dynamo}, engine: {type: trtllm}, ` + disaggNoGPUs + `}`,
			want: []want{e("spec.engine.type", "only supports the vllm engine")},
		},
		{
			name: "item 20: mocker with vllm aggregated",
			meta: mockerMeta,
			spec: `{model: {id: m}, provider: {name: dynamo}, engine: {type: vllm}}`,
		},
		{
			name: "item 20: mocker without an engine (auto-selected later)",
			meta: mockerMeta,
			spec: `{model: {id: m}, provider: {name: dynamo}}`,
		},
		{
			name: "item 20: sglang annotation without provider dynamo is not mocker",
			meta: mockerMeta,
			spec: `{model: {id: m}, engine: {type: sglang}}`,
		},
	})
}

// Upstream §8 items 24-26: sizing ceilings.
func TestValidateCeilings(t *testing.T) {
	runValidationCases(t, []validationCase{
		{
			name: "item 24: gpu.count 65",
			spec: `{model: {id: m}, resources: {gpu: {count: 65}}}`,
			want: []want{e("spec.resources.gpu.count", "less than or equal to 64", "65")},
		},
		{
			name: "item 24: gpu.count 8",
			spec: `{model: {id: m}, resources: {gpu: {count: 8}}}`,
		},
		{
			name: "item 24: gpu.count 64 is the ceiling",
			spec: `{model: {id: m}, resources: {gpu: {count: 64}}}`,
		},
		{
			name: "negative gpu.count",
			spec: `{model: {id: m}, resources: {gpu: {count: -1}}}`,
			want: []want{e("spec.resources.gpu.count", "greater than or equal to 0")},
		},
		{
			name: "item 25: scaling.replicas 33",
			spec: `{model: {id: m}, scaling: {replicas: 33}}`,
			want: []want{e("spec.scaling.replicas", "less than or equal to 32", "33")},
		},
		{
			name: "item 25: scaling.replicas 32",
			spec: `{model: {id: m}, scaling: {replicas: 32}}`,
		},
		{
			name: "item 25: scaling.replicas 0",
			spec: `{model: {id: m}, scaling: {replicas: 0}}`,
		},
		{
			name: "negative scaling.replicas",
			spec: `{model: {id: m}, scaling: {replicas: -2}}`,
			want: []want{e("spec.scaling.replicas", "greater than or equal to 0")},
		},
		{
			name: "item 26: cpu 1024",
			spec: `{model: {id: m}, resources: {cpu: "1024"}}`,
			want: []want{e("spec.resources.cpu", "exceeds the maximum of 512")},
		},
		{
			name: "item 26: cpu 4 and memory 256Gi",
			spec: `{model: {id: m}, resources: {cpu: "4", memory: 256Gi}}`,
		},
		{
			name: "item 26: cpu not a quantity",
			spec: `{model: {id: m}, resources: {cpu: notanumber}}`,
			want: []want{e("spec.resources.cpu", `"notanumber" is not a valid quantity`)},
		},
		{
			name: "negative cpu",
			spec: `{model: {id: m}, resources: {cpu: "-1"}}`,
			want: []want{e("spec.resources.cpu", "must not be negative")},
		},
		{
			name: "item 26: memory 8Ti",
			spec: `{model: {id: m}, resources: {memory: 8Ti}}`,
			want: []want{e("spec.resources.memory", "exceeds the maximum of 4Ti")},
		},
		{
			name: "item 26: memory 4Ti is the ceiling",
			spec: `{model: {id: m}, resources: {memory: 4Ti}}`,
		},
		{
			name: "item 26: prefill and decode memory 8Ti",
			spec: `{model: {id: m}, engine: {type: vllm}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 1}, memory: 8Ti}, decode: {gpu: {count: 1}, memory: 8Ti}}}`,
			want: []want{
				e("spec.scaling.prefill.memory", "exceeds the maximum of 4Ti"),
				e("spec.scaling.decode.memory", "exceeds the maximum of 4Ti"),
			},
		},
		{
			name: "prefill/decode replicas and gpu.count ceilings",
			spec: `{model: {id: m}, engine: {type: vllm}, serving: {mode: disaggregated}, scaling: {prefill: {replicas: 33, gpu: {count: 65}}, decode: {replicas: 40, gpu: {count: 1}}}}`,
			want: []want{
				e("spec.scaling.prefill.replicas", "less than or equal to 32"),
				e("spec.scaling.prefill.gpu.count", "less than or equal to 64"),
				e("spec.scaling.decode.replicas", "less than or equal to 32"),
			},
		},
		{
			name: "all ceilings reported together",
			spec: `{model: {id: m}, scaling: {replicas: 33}, resources: {gpu: {count: 65}, cpu: "1024", memory: 8Ti}}`,
			want: []want{
				e("spec.scaling.replicas", "32"),
				e("spec.resources.gpu.count", "64"),
				e("spec.resources.cpu", "512"),
				e("spec.resources.memory", "4Ti"),
			},
		},
	})
}

// Upstream §8 items 27-29: spec.provider.overrides bans.
func TestValidateOverrides(t *testing.T) {
	cases := []validationCase{
		{
			name: "item 27: securityContext inside a list",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {containers: [{securityContext: {runAsUser: 0}}]}}}`,
			want: []want{e("spec.provider.overrides.containers[0].securityContext", "forbidden", "security-sensitive")},
		},
		{
			name: "item 27: hostNetwork at the top",
			spec: `{model: {id: m}, provider: {name: kaito, overrides: {hostNetwork: true}}}`,
			want: []want{e("spec.provider.overrides.hostNetwork", `overriding "hostNetwork" is forbidden`)},
		},
		{
			name: "item 27: serviceAccountName deep in a pod template",
			spec: `{model: {id: m}, provider: {name: vllm, overrides: {spec: {template: {spec: {serviceAccountName: admin}}}}}}`,
			want: []want{e("spec.provider.overrides.spec.template.spec.serviceAccountName", "forbidden")},
		},
		{
			name: "item 27: forbidden key inside a forbidden key yields one error",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {securityContext: {hostNetwork: true, serviceAccountName: x, resources: {}}}}}`,
			want: []want{e("spec.provider.overrides.securityContext", "forbidden")},
		},
		{
			name: "item 27: security key inside a sizing key yields one error",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {resources: {limits: {cpu: "1"}, hostPID: true}}}}`,
			want: []want{e("spec.provider.overrides.resources", "use `spec.scaling` and `spec.resources`")},
		},
		{
			name: "item 28: frontend.replicas",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {frontend: {replicas: 33}}}}`,
			want: []want{e("spec.provider.overrides.frontend.replicas", `overriding "replicas" is forbidden`, "sizing")},
		},
		{
			name: "item 28: frontend.resources",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {frontend: {resources: {cpu: "4"}}}}}`,
			want: []want{e("spec.provider.overrides.frontend.resources", `overriding "resources" is forbidden`)},
		},
		{
			name: "item 28: replicas in a list element",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {services: [{name: a}, {replicas: 33}]}}}`,
			want: []want{e("spec.provider.overrides.services[1].replicas", "forbidden")},
		},
		{
			name: "every forbidden sibling is reported",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {hostPID: true, hostIPC: true, nodeName: n, labels: {team: ml}}}}`,
			want: []want{
				e("spec.provider.overrides.hostIPC", "forbidden"),
				e("spec.provider.overrides.hostPID", "forbidden"),
				e("spec.provider.overrides.nodeName", "forbidden"),
			},
		},
		{
			name: "item 29: list is not an object",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: [{}]}}`,
			want: []want{e("spec.provider.overrides", "must be a JSON object")},
		},
		{
			name: "item 29: string is not an object",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: "override"}}`,
			want: []want{e("spec.provider.overrides", "must be a JSON object")},
		},
		{
			name: "item 29: number is not an object",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: 42}}`,
			want: []want{e("spec.provider.overrides", "must be a JSON object")},
		},
		{
			name: "item 29: boolean is not an object",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: true}}`,
			want: []want{e("spec.provider.overrides", "must be a JSON object")},
		},
		{
			// The API server prunes a null in a non-nullable field, so a
			// manifest with `overrides: null` means "no overrides".
			name: "null overrides are absent",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: null}}`,
		},
		{
			name: "item 29: harmless overrides accepted",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {labels: {team: ml}}}}`,
		},
		{
			name: "empty object accepted",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {}}}`,
		},
		{
			name: "forbidden names as values are not keys",
			spec: `{model: {id: m}, provider: {name: dynamo, overrides: {args: [securityContext, replicas], note: hostNetwork}}}`,
		},
	}
	for _, k := range append(append([]string(nil), hub.SecurityOverrideKeys...), hub.SizingOverrideKeys...) {
		cases = append(cases, validationCase{
			name: "banned key " + k,
			spec: fmt.Sprintf(`{model: {id: m}, provider: {name: kuberay, overrides: {spec: {workers: [{%s: x}]}}}}`, k),
			want: []want{e("spec.provider.overrides.spec.workers[0]."+k, fmt.Sprintf("overriding %q is forbidden", k))},
		})
	}
	runValidationCases(t, cases)
}

// Invalid JSON can not come out of YAML, so it is injected after decoding.
// The message must not echo the payload (it may carry secrets).
func TestValidateOverridesInvalidJSONIsRedacted(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
	}{
		{"truncated object", `{"env":[{"name":"TOKEN","value":"s3cr3t"`},
		{"bare word", `s3cr3t`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := decodeYAML(t, mdDoc("", `{model: {id: m}, provider: {name: dynamo}}`))
			DefaultModelDeployment(md)
			md.Spec.Provider.Overrides = []byte(tc.raw)
			problems := validate(md)
			requireProblems(t, problems, e("spec.provider.overrides", "must be valid JSON", fmt.Sprintf("<redacted %d bytes>", len(tc.raw))))
			require.NotContains(t, problems[0].Message, "s3cr3t")
		})
	}
}

// Upstream §1.2 and §8 items 32-35: storage volumes.
func TestValidateStorage(t *testing.T) {
	vols := func(v string) string { return `{model: {id: m, storage: {volumes: [` + v + `]}}}` }
	long := strings.Repeat("a", 240)
	runValidationCases(t, []validationCase{
		{
			name: "managed modelCache with defaults is valid",
			spec: vols(`{name: cache, purpose: modelCache, size: 100Gi}`),
		},
		{
			name: "unmanaged custom volume is valid",
			spec: vols(`{name: data, claimName: my-pvc, mountPath: /data}`),
		},
		{
			name: "item 32: no size and no claimName",
			spec: vols(`{name: data, mountPath: /data}`),
			want: []want{e("spec.model.storage.volumes[0].claimName", "claimName is required when `size` is not set")},
		},
		{
			name: "item 32: size with readOnly",
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi, readOnly: true}`),
			want: []want{
				e("spec.model.storage.volumes[0].readOnly", "must not be read-only"),
				w("spec.model.storage.volumes[0].readOnly", "model download will be skipped"),
			},
		},
		{
			name: "item 32: size with a foreign claimName",
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi, claimName: other}`),
			want: []want{e("spec.model.storage.volumes[0].claimName", `"other" must be "test-model-cache"`)},
		},
		{
			name: "size with the derived claimName",
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi, claimName: test-model-cache}`),
		},
		{
			name: "item 32: accessMode without size",
			spec: vols(`{name: data, claimName: pvc, mountPath: /data, accessMode: ReadWriteOnce}`),
			want: []want{e("spec.model.storage.volumes[0].accessMode", "only be set together with `size`")},
		},
		{
			name: "item 32: storageClassName without size",
			spec: vols(`{name: data, claimName: pvc, mountPath: /data, storageClassName: fast}`),
			want: []want{e("spec.model.storage.volumes[0].storageClassName", "only be set together with `size`")},
		},
		{
			name: "item 32: empty storageClassName without size",
			spec: vols(`{name: data, claimName: pvc, mountPath: /data, storageClassName: ""}`),
			want: []want{e("spec.model.storage.volumes[0].storageClassName", "only be set together with `size`")},
		},
		{
			name: "item 32: size with empty storageClassName",
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi, storageClassName: ""}`),
		},
		{
			name: "unsupported accessMode",
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi, accessMode: ReadWriteSometimes}`),
			want: []want{e("spec.model.storage.volumes[0].accessMode", `"ReadWriteSometimes" is not supported`)},
		},
		{
			name: "size is not a quantity",
			spec: vols(`{name: cache, purpose: modelCache, size: lots}`),
			want: []want{e("spec.model.storage.volumes[0].size", `"lots" must be a positive quantity`)},
		},
		{
			name: "size zero",
			spec: vols(`{name: cache, purpose: modelCache, size: 0}`),
			want: []want{e("spec.model.storage.volumes[0].size", "positive quantity")},
		},
		{
			name: "size as an integer number of bytes",
			spec: vols(`{name: cache, purpose: modelCache, size: 1073741824}`),
		},
		{
			name: "invalid volume name",
			spec: vols(`{name: Cache_1, claimName: pvc, purpose: modelCache}`),
			want: []want{e("spec.model.storage.volumes[0].name", `"Cache_1" must be a DNS label`)},
		},
		{
			name: "unknown purpose",
			spec: vols(`{name: data, claimName: pvc, mountPath: /data, purpose: scratch}`),
			want: []want{e("spec.model.storage.volumes[0].purpose", `"scratch" is not supported`)},
		},
		{
			name: "item 33: duplicate names",
			spec: vols(`{name: data, claimName: a, mountPath: /a}, {name: data, claimName: b, mountPath: /b}`),
			want: []want{e("spec.model.storage.volumes[1].name", `"data" duplicates`, "volumes[0].name")},
		},
		{
			name: "item 33: duplicate mountPaths",
			spec: vols(`{name: a, claimName: a, mountPath: /data}, {name: b, claimName: b, mountPath: /data}`),
			want: []want{e("spec.model.storage.volumes[1].mountPath", `"/data" duplicates`)},
		},
		{
			name: "item 33: duplicate claimNames",
			spec: vols(`{name: a, claimName: shared, mountPath: /a}, {name: b, claimName: shared, mountPath: /b}`),
			want: []want{e("spec.model.storage.volumes[1].claimName", `"shared" duplicates`)},
		},
		{
			name: "item 33: unmanaged claimName equal to a managed volume's PVC",
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi}, {name: b, claimName: test-model-cache, mountPath: /b}`),
			want: []want{e("spec.model.storage.volumes[1].claimName", `"test-model-cache" duplicates`)},
		},
		{
			name: "item 33: relative mountPath",
			spec: vols(`{name: data, claimName: pvc, mountPath: data}`),
			want: []want{e("spec.model.storage.volumes[0].mountPath", `"data" must be an absolute path`)},
		},
		{
			name: "item 33: custom purpose without mountPath",
			spec: vols(`{name: data, claimName: pvc}`),
			want: []want{e("spec.model.storage.volumes[0].mountPath", "mountPath is required when purpose is \"custom\"")},
		},
		{
			name: "item 33: two modelCache volumes",
			spec: vols(`{name: a, claimName: a, purpose: modelCache, mountPath: /a}, {name: b, claimName: b, purpose: modelCache, mountPath: /b}`),
			want: []want{e("spec.model.storage.volumes[1].purpose", `only one volume may have purpose "modelCache"`)},
		},
		{
			name: "item 33: two modelCache volumes on the default mountPath",
			spec: vols(`{name: a, claimName: a, purpose: modelCache}, {name: b, claimName: b, purpose: modelCache}`),
			want: []want{
				e("spec.model.storage.volumes[1].purpose", "only one volume"),
				e("spec.model.storage.volumes[1].mountPath", `"/model-cache" duplicates`),
			},
		},
		{
			name: "two compilationCache volumes",
			spec: vols(`{name: a, claimName: a, purpose: compilationCache, mountPath: /a}, {name: b, claimName: b, purpose: compilationCache, mountPath: /b}`),
			want: []want{e("spec.model.storage.volumes[1].purpose", `"compilationCache"`)},
		},
		{
			name: "two custom volumes are fine",
			spec: vols(`{name: a, claimName: a, mountPath: /a}, {name: b, claimName: b, mountPath: /b}`),
		},
		{
			name: "item 33: mountPath /etc",
			spec: vols(`{name: data, claimName: pvc, mountPath: /etc}`),
			want: []want{e("spec.model.storage.volumes[0].mountPath", `"/etc" must not be /etc or below it`)},
		},
		{
			name: "item 33: mountPath under /proc",
			spec: vols(`{name: data, claimName: pvc, mountPath: /proc/x}`),
			want: []want{e("spec.model.storage.volumes[0].mountPath", "must not be /proc")},
		},
		{
			name: "mountPath under /var/run",
			spec: vols(`{name: data, claimName: pvc, mountPath: /var/run/secrets}`),
			want: []want{e("spec.model.storage.volumes[0].mountPath", "must not be /var/run")},
		},
		{
			name: "mountPath escaping into /sys via ..",
			spec: vols(`{name: data, claimName: pvc, mountPath: /data/../sys/fs}`),
			want: []want{e("spec.model.storage.volumes[0].mountPath", "must not be /sys")},
		},
		{
			name: "mountPath sharing a prefix with /dev is fine",
			spec: vols(`{name: data, claimName: pvc, mountPath: /devices}`),
		},
		{
			name: "more than 8 volumes",
			spec: vols(`{name: v0, claimName: c0, mountPath: /0}, {name: v1, claimName: c1, mountPath: /1}, {name: v2, claimName: c2, mountPath: /2}, {name: v3, claimName: c3, mountPath: /3}, {name: v4, claimName: c4, mountPath: /4}, {name: v5, claimName: c5, mountPath: /5}, {name: v6, claimName: c6, mountPath: /6}, {name: v7, claimName: c7, mountPath: /7}, {name: v8, claimName: c8, mountPath: /8}`),
			want: []want{e("spec.model.storage.volumes", "at most 8 items, got 9")},
		},
		{
			// Our metadata.name is a DNS label (at most 63 characters; it is
			// used as a label value), so upstream's 253-character rules only
			// ever fire together with the name rule.
			name: "item 34: derived claim name and download job name too long",
			meta: fmt.Sprintf(`{name: %s, namespace: default}`, strings.Repeat("a", 250)),
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi}`),
			want: []want{
				e("metadata.name", "is not a valid name", "63"),
				e("spec.model.storage.volumes[0].claimName", "longer than 253 characters"),
			},
		},
		{
			// Upstream also refuses a download Job name past 253 characters;
			// ours is shortened with a hash past 63 (providers.DerivedName),
			// so only the name's own limit is left.
			name: "item 34: a long name with a managed modelCache",
			meta: fmt.Sprintf(`{name: %s, namespace: default}`, long),
			spec: vols(`{name: cache, purpose: modelCache, size: 10Gi}`),
			want: []want{
				e("metadata.name", "is not a valid name"),
			},
		},
		{
			name: "item 34: download job rule ignores managed custom volumes",
			meta: fmt.Sprintf(`{name: %s, namespace: default}`, long),
			spec: vols(`{name: cache, mountPath: /data, size: 10Gi}`),
			want: []want{e("metadata.name", "is not a valid name")},
		},
		{
			name: "item 34: download job rule ignores unmanaged modelCache",
			meta: fmt.Sprintf(`{name: %s, namespace: default}`, long),
			spec: vols(`{name: cache, purpose: modelCache, claimName: pvc}`),
			want: []want{e("metadata.name", "is not a valid name")},
		},
		{
			name: "item 35: readOnly compilationCache warns",
			spec: vols(`{name: cc, claimName: pvc, purpose: compilationCache, readOnly: true}`),
			want: []want{w("spec.model.storage.volumes[0].readOnly", "compilation cache")},
		},
		{
			name: "item 35: readOnly modelCache with huggingface warns",
			spec: vols(`{name: mc, claimName: pvc, purpose: modelCache, readOnly: true}`),
			want: []want{w("spec.model.storage.volumes[0].readOnly", "model download will be skipped")},
		},
		{
			name: "readOnly modelCache with custom source is silent",
			spec: `{model: {source: custom, storage: {volumes: [{name: mc, claimName: pvc, purpose: modelCache, readOnly: true}]}}}`,
		},
		{
			name: "every volume problem is reported",
			spec: vols(`{name: a, mountPath: rel}, {name: b, size: 1Gi, readOnly: true, claimName: x, mountPath: /etc/b}`),
			want: []want{
				e("spec.model.storage.volumes[0].claimName", "claimName is required"),
				e("spec.model.storage.volumes[0].mountPath", "absolute path"),
				e("spec.model.storage.volumes[1].readOnly", "must not be read-only"),
				e("spec.model.storage.volumes[1].claimName", `must be "test-model-b"`),
				e("spec.model.storage.volumes[1].mountPath", "must not be /etc"),
			},
		},
	})
}

// A ModelDeployment with several unrelated mistakes gets all of them in one
// run.
func TestValidateReportsEveryProblem(t *testing.T) {
	runValidationCases(t, []validationCase{
		{
			name: "four rules at once",
			meta: `{name: qwen3-0.6b, namespace: default}`,
			spec: `{model: {source: huggingface}, resources: {gpu: {count: 65}}, provider: {name: dynamo, overrides: {hostNetwork: true}}}`,
			want: []want{
				e("metadata.name", "must not contain dots"),
				e("spec.model.id", "model.id is required"),
				e("spec.resources.gpu.count", "64"),
				e("spec.provider.overrides.hostNetwork", "forbidden"),
			},
		},
		{
			name: "errors and warnings together",
			spec: `{model: {id: m}, image: a, engine: {type: trtllm, image: b, contextLength: 1024, trustRemoteCode: true, args: {x: "1"}, extraArgs: ["--x"]}, scaling: {replicas: 40}}`,
			want: []want{
				e("spec.engine.image", "must be equal"),
				e("spec.engine.extraArgs[0]", `"x"`),
				e("spec.scaling.replicas", "32"),
				w("spec.engine.contextLength", "trtllm"),
				w("spec.engine.trustRemoteCode", "arbitrary code"),
			},
		},
	})
}

func TestFlagKey(t *testing.T) {
	for _, tc := range []struct {
		token string
		key   string
		ok    bool
	}{
		{"--tensor-parallel-size", "tensor-parallel-size", true},
		{"--tensor-parallel-size=2", "tensor-parallel-size", true},
		{"--a=b=c", "a", true},
		{"--x", "x", true},
		{"--", "", false},
		{"---x", "", false},
		{"-x", "", false},
		{"x", "", false},
		{"--=v", "", false},
	} {
		t.Run(tc.token, func(t *testing.T) {
			key, ok := hub.FlagKey(tc.token)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.key, key)
		})
	}
}
