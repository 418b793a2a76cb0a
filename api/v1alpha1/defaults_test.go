package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/airunway-render/airunway-render/api/hub"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// Each case decodes a spec, applies DefaultModelDeployment and compares the
// whole resulting spec, so a default that appears where it should not fails
// the case as much as a missing one.
func TestDefaultModelDeployment(t *testing.T) {
	for _, tc := range []struct {
		name        string
		meta        string
		spec        string
		want        string // the full defaulted spec, flow YAML
		gpuDefaults bool   // DefaultModelDeployment's return value
	}{
		// CRD defaults apply only where the parent object exists.
		{
			name: "minimal spec",
			spec: `{model: {id: m}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "engine absent keeps engine fields absent",
			spec: `{model: {id: m}, resources: {gpu: {count: 1}}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 1}, resources: {gpu: {count: 1, type: nvidia.com/gpu}}}`,
		},
		{
			name: "empty engine gets the engine CRD defaults",
			spec: `{model: {id: m}, engine: {}}`,
			want: `{model: {id: m, source: huggingface}, engine: {enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "explicit engine booleans are kept",
			spec: `{model: {id: m}, engine: {type: llamacpp, enablePrefixCaching: false, enforceEager: true, trustRemoteCode: true}}`,
			want: `{model: {id: m, source: huggingface}, engine: {type: llamacpp, enablePrefixCaching: false, enforceEager: true, trustRemoteCode: true}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "scaling present without replicas",
			spec: `{model: {id: m}, scaling: {}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "explicit zero replicas kept",
			spec: `{model: {id: m}, scaling: {replicas: 0}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 0}}`,
		},
		{
			name: "empty serving object",
			spec: `{model: {id: m}, serving: {}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "custom source kept",
			spec: `{model: {source: custom}}`,
			want: `{model: {source: custom}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "resources without gpu get no gpu",
			spec: `{model: {id: m}, resources: {cpu: "4"}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 1}, resources: {cpu: "4"}}`,
		},
		{
			name: "resources.gpu without count or type",
			spec: `{model: {id: m}, resources: {gpu: {}}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 1}, resources: {gpu: {count: 0, type: nvidia.com/gpu}}}`,
		},
		{
			name: "custom gpu type kept",
			spec: `{model: {id: m}, resources: {gpu: {count: 2, type: amd.com/gpu}}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: aggregated}, scaling: {replicas: 1}, resources: {gpu: {count: 2, type: amd.com/gpu}}}`,
		},
		{
			name: "prefill and decode defaults",
			spec: `{model: {id: m}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {}}}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: disaggregated}, scaling: {replicas: 1, prefill: {replicas: 1, gpu: {count: 1, type: nvidia.com/gpu}}, decode: {replicas: 1, gpu: {count: 0, type: nvidia.com/gpu}}}}`,
		},
		{
			name: "prefill without gpu gets no gpu",
			spec: `{model: {id: m}, serving: {mode: disaggregated}, scaling: {prefill: {}, decode: {replicas: 3}}}`,
			want: `{model: {id: m, source: huggingface}, serving: {mode: disaggregated}, scaling: {replicas: 1, prefill: {replicas: 1}, decode: {replicas: 3}}}`,
		},
		{
			name: "disaggregated without scaling gets no scaling",
			spec: `{model: {id: m}, engine: {type: vllm}, serving: {mode: disaggregated}}`,
			want: `{model: {id: m, source: huggingface}, engine: {type: vllm, enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: disaggregated}}`,
		},

		// Upstream §8 item 37: the webhook's GPU default.
		{
			name:        "item 37: vllm without resources gets one GPU",
			spec:        `{model: {id: m}, engine: {type: vllm}}`,
			want:        `{model: {id: m, source: huggingface}, engine: {type: vllm, enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: aggregated}, scaling: {replicas: 1}, resources: {gpu: {count: 1, type: nvidia.com/gpu}}}`,
			gpuDefaults: true,
		},
		{
			name:        "item 37: sglang with engine.image gets one GPU",
			spec:        `{model: {id: m}, engine: {type: sglang, image: "x:1"}}`,
			want:        `{model: {id: m, source: huggingface}, engine: {type: sglang, image: "x:1", enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: aggregated}, scaling: {replicas: 1}, resources: {gpu: {count: 1, type: nvidia.com/gpu}}}`,
			gpuDefaults: true,
		},
		{
			name: "item 37: legacy spec.image suppresses the GPU default",
			spec: `{model: {id: m}, image: "custom:1", engine: {type: vllm}}`,
			want: `{model: {id: m, source: huggingface}, image: "custom:1", engine: {type: vllm, enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "item 37: llamacpp gets no GPU",
			spec: `{model: {id: m}, engine: {type: llamacpp}}`,
			want: `{model: {id: m, source: huggingface}, engine: {type: llamacpp, enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "item 37: no engine gets no GPU",
			spec: `{model: {id: m}, engine: {image: "x:1"}}`,
			want: `{model: {id: m, source: huggingface}, engine: {image: "x:1", enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "item 37: resources present (even empty) suppresses the GPU default",
			spec: `{model: {id: m}, engine: {type: vllm}, resources: {}}`,
			want: `{model: {id: m, source: huggingface}, engine: {type: vllm, enablePrefixCaching: true, enforceEager: false, trustRemoteCode: false}, serving: {mode: aggregated}, scaling: {replicas: 1}, resources: {}}`,
		},

		// Upstream §8 item 36: volume defaults.
		{
			name: "item 36: volume defaults",
			spec: `{model: {id: m, storage: {volumes: [` +
				`{name: plain, claimName: pvc, mountPath: /data}, ` +
				`{name: mc, purpose: modelCache, size: 100Gi}, ` +
				`{name: cc, purpose: compilationCache, claimName: cc-pvc}, ` +
				`{name: own, purpose: modelCache, mountPath: /weights, claimName: test-model-own, size: 1Gi, accessMode: ReadWriteOnce, storageClassName: ""}` +
				`]}}}`,
			want: `{model: {id: m, source: huggingface, storage: {volumes: [` +
				`{name: plain, claimName: pvc, mountPath: /data, purpose: custom, readOnly: false}, ` +
				`{name: mc, purpose: modelCache, size: 100Gi, mountPath: /model-cache, claimName: test-model-mc, accessMode: ReadWriteMany, readOnly: false}, ` +
				`{name: cc, purpose: compilationCache, claimName: cc-pvc, mountPath: /compilation-cache, readOnly: false}, ` +
				`{name: own, purpose: modelCache, mountPath: /weights, claimName: test-model-own, size: 1Gi, accessMode: ReadWriteOnce, storageClassName: "", readOnly: false}` +
				`]}}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "item 36: claim name uses metadata.name",
			meta: `{name: llama}`,
			spec: `{model: {id: m, storage: {volumes: [{name: data, size: 5Gi, mountPath: /data}]}}}`,
			want: `{model: {id: m, source: huggingface, storage: {volumes: [{name: data, size: 5Gi, mountPath: /data, purpose: custom, readOnly: false, claimName: llama-data, accessMode: ReadWriteMany}]}}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
		{
			name: "item 36: no size leaves accessMode and claimName empty",
			spec: `{model: {id: m, storage: {volumes: [{name: mc, purpose: modelCache}]}}}`,
			want: `{model: {id: m, source: huggingface, storage: {volumes: [{name: mc, purpose: modelCache, mountPath: /model-cache, readOnly: false}]}}, serving: {mode: aggregated}, scaling: {replicas: 1}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := decodeYAML(t, mdDoc(tc.meta, tc.spec))
			require.Equal(t, tc.gpuDefaults, DefaultModelDeployment(md))
			requireSpecJSON(t, tc.want, &md.Spec)

			// Defaulting is idempotent: a second pass changes nothing and
			// does not claim to have defaulted the GPU again.
			require.False(t, DefaultModelDeployment(md), "second pass defaulted the GPU again")
			requireSpecJSON(t, tc.want, &md.Spec)
		})
	}
}

func requireSpecJSON(t *testing.T, wantYAML string, spec *ModelDeploymentSpec) {
	t.Helper()
	want, err := yaml.YAMLToJSON([]byte(wantYAML))
	require.NoError(t, err)
	got, err := json.Marshal(spec)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
}

func TestStorageVolumeHelpers(t *testing.T) {
	md := decodeYAML(t, mdDoc("", `{model: {id: m, storage: {volumes: [{name: a, claimName: mine, mountPath: /a}, {name: b, size: 10Gi, mountPath: /b}, {name: c, size: 1073741824, mountPath: /c}]}}}`))
	vols := md.Spec.Model.Storage.Volumes

	// Before defaulting (webhook bypassed) the managed name is derived.
	require.Equal(t, "mine", vols[0].ResolvedClaimName(md.Name))
	require.Equal(t, "test-model-b", vols[1].ResolvedClaimName(md.Name))
	require.False(t, vols[0].IsManaged())
	require.True(t, vols[1].IsManaged())
	require.Equal(t, "", vols[0].SizeString())
	require.Equal(t, "10Gi", vols[1].SizeString())
	require.Equal(t, "1073741824", vols[2].SizeString())
}

func TestSpecAccessors(t *testing.T) {
	md := decodeYAML(t, mdDoc("", `{model: {id: m}}`))
	s := &hubOf(t, md).Spec
	require.Equal(t, hub.ModeAggregated, s.Mode())
	require.Equal(t, int32(1), s.Replicas())
	require.Equal(t, int32(0), s.GPUCount())
	require.Equal(t, "", s.EngineType())
	require.Equal(t, "", s.ProviderName())
	require.Equal(t, "", s.EngineImage())
	var nilComponent *ComponentScalingSpec
	require.Equal(t, int32(1), nilComponent.ReplicaCount())
	require.Equal(t, int32(0), nilComponent.GPUCount())

	md = decodeYAML(t, mdDoc("", `{model: {id: m}, image: legacy, engine: {type: sglang, image: new}, provider: {name: dynamo}, serving: {mode: disaggregated}, scaling: {replicas: 3, prefill: {replicas: 2, gpu: {count: 4}}}, resources: {gpu: {count: 2}}}`))
	s = &hubOf(t, md).Spec
	require.Equal(t, hub.ModeDisaggregated, s.Mode())
	require.Equal(t, int32(3), s.Replicas())
	require.Equal(t, int32(2), s.GPUCount())
	require.Equal(t, hub.EngineSGLang, s.EngineType())
	require.Equal(t, "dynamo", s.ProviderName())
	require.Equal(t, "new", s.EngineImage(), "engine.image wins over the legacy spec.image")
	require.Equal(t, int32(2), s.Scaling.Prefill.ReplicaCount())
	require.Equal(t, int32(4), s.Scaling.Prefill.GPUCount())

	md = decodeYAML(t, mdDoc("", `{model: {id: m}, image: legacy}`))
	require.Equal(t, "legacy", hubOf(t, md).Spec.EngineImage())
}

// hubOf converts md to the hub, where the spec's accessors are.
func hubOf(t *testing.T, md *ModelDeployment) *hub.ModelDeployment {
	t.Helper()
	h, _ := md.ConvertToHub()
	return h
}
