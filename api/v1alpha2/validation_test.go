package v1alpha2

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

// TestValidateV1alpha2Fields runs each model through the pipeline (strict
// decoding, conversion, defaults, hub validation) and requires exactly the
// errors listed, by field and a phrase of the message.
func TestValidateV1alpha2Fields(t *testing.T) {
	adapters := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{name: a%d, source: 'hf://o/r%d'},", i, i)
		}
		return "[" + strings.TrimSuffix(b.String(), ",") + "]"
	}
	for _, tc := range []struct {
		name, spec string
		want       map[string]string // field → phrase; nothing else
	}{
		{name: "adapters, autoscaling and a Gateway",
			spec: `{model: {id: Qwen/Qwen3-8B}, adapters: [{name: sql, source: 'hf://my-org/sql-lora'}], scaling: {autoscaling: {minReplicas: 0, maxReplicas: 4, target: 5}}, gateway: {parentRef: {name: gw, namespace: gateway-system}}}`},
		{name: "64 adapters", spec: `{model: {id: m}, adapters: ` + adapters(64) + `}`},
		{name: "65 adapters", spec: `{model: {id: m}, adapters: ` + adapters(65) + `}`,
			want: map[string]string{"spec.adapters": "at most 64"}},
		{name: "adapter names",
			spec: `{model: {id: m, servedName: base}, adapters: [{name: Bad_Name, source: 'hf://o/r'}, {name: base, source: 'hf://o/r'}, {name: ok, source: 'hf://o/r'}, {name: ok, source: 'hf://o/s'}, {source: 'hf://o/t'}]}`,
			want: map[string]string{"spec.adapters[0].name": "must be a DNS label", "spec.adapters[1].name": "the base model's name", "spec.adapters[3].name": "also the name of `spec.adapters[2]`", "spec.adapters[4].name": "must be set"}},
		{name: "adapter sources",
			spec: `{model: {id: m}, adapters: [{name: a, source: 's3://bucket/lora'}, {name: b, source: 'hf://only-org'}, {name: c, source: 'hf://o/r@main'}]}`,
			want: map[string]string{"spec.adapters[0].source": "hf://<org>/<repo>", "spec.adapters[1].source": "hf://<org>/<repo>", "spec.adapters[2].source": "hf://<org>/<repo>"}},
		{name: "no adapters with llama.cpp", spec: `{model: {id: m}, engine: {type: llamacpp}, adapters: [{name: a, source: 'hf://o/r'}]}`,
			want: map[string]string{"spec.adapters": `not supported with the "llamacpp" engine`}},
		{name: "autoscaling needs maxReplicas and target", spec: `{model: {id: m}, scaling: {autoscaling: {}}}`,
			want: map[string]string{"spec.scaling.autoscaling.maxReplicas": "must be set", "spec.scaling.autoscaling.target": "must be set"}},
		{name: "autoscaling ranges", spec: `{model: {id: m}, scaling: {autoscaling: {minReplicas: 5, maxReplicas: 3, metric: kvCacheUsage, target: 120, scaleDownDelaySeconds: 4000}}}`,
			want: map[string]string{"spec.scaling.autoscaling.minReplicas": "more than `maxReplicas` 3", "spec.scaling.autoscaling.target": "at most 100", "spec.scaling.autoscaling.scaleDownDelaySeconds": "between 0 and 3600"}},
		{name: "autoscaling metric", spec: `{model: {id: m}, scaling: {autoscaling: {maxReplicas: 33, metric: cpu, target: 1}}}`,
			want: map[string]string{"spec.scaling.autoscaling.maxReplicas": "between 1 and 32", "spec.scaling.autoscaling.metric": `"queueDepth", "runningRequests", "kvCacheUsage"`}},
		{name: "replicas beside autoscaling", spec: `{model: {id: m}, scaling: {replicas: 2, autoscaling: {maxReplicas: 3, target: 1}}}`,
			want: map[string]string{"spec.scaling.replicas": "the autoscaler owns the replica count"}},
		{name: "disaggregated autoscaling scales decode",
			spec: `{model: {id: m}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 1}}, decode: {replicas: 2, gpu: {count: 1}}, autoscaling: {maxReplicas: 3, target: 1}}}`,
			want: map[string]string{"spec.scaling.decode.replicas": "scales the decode workers"}},
		{name: "parentRef", spec: `{model: {id: m}, gateway: {parentRef: {name: Bad.Name, namespace: -x}}}`,
			want: map[string]string{"spec.gateway.parentRef.name": "not a valid Gateway name", "spec.gateway.parentRef.namespace": "not a valid namespace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := yaml.YAMLToJSON([]byte("apiVersion: airunway.ai/v1alpha2\nkind: ModelDeployment\nmetadata: {name: m, namespace: default}\nspec: " + tc.spec))
			require.NoError(t, err)
			md, l := ToHub(doc)
			require.False(t, l.HasErrors(), "%v", l)
			got := map[string]string{}
			for _, p := range hub.ValidateModelDeployment(md).Errors() {
				require.NotContains(t, got, p.Field, "two errors at %s", p.Field)
				got[p.Field] = p.Message
			}
			require.Len(t, got, len(tc.want), "%v", got)
			for field, phrase := range tc.want {
				require.Contains(t, got[field], phrase, field)
			}
		})
	}
}

// An autoscaled model gets v1alpha2's defaults and no replica count.
func TestAutoscalingDefaults(t *testing.T) {
	md, l := ToHub([]byte(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment","metadata":{"name":"m"},"spec":{"model":{"id":"m"},"scaling":{"autoscaling":{"maxReplicas":3,"target":4}}}}`))
	require.False(t, l.HasErrors(), "%v", l)
	a := md.Spec.Autoscaling()
	require.Equal(t, hub.AutoscalingSpec{MinReplicas: ptr(1), MaxReplicas: ptr(3), Metric: hub.MetricQueueDepth, Target: ptr(4), ScaleDownDelaySeconds: ptr(300)}, *a)
	require.Nil(t, md.Spec.Scaling.Replicas)

	md, l = ToHub([]byte(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment","metadata":{"name":"m"},"spec":{"model":{"id":"m"}}}`))
	require.False(t, l.HasErrors(), "%v", l)
	require.Equal(t, int32(1), *md.Spec.Scaling.Replicas, "without autoscaling, upstream's defaults")
}

func ptr(v int32) *int32 { return &v }
