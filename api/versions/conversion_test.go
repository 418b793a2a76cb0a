package versions

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// fullV1alpha2 uses every field v1alpha1 lacks, beside v1alpha1 fields in
// the same parent objects.
const fullV1alpha2 = `{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment",
"metadata":{"name":"qwen","namespace":"team-a","annotations":{"team":"search"}},
"spec":{"model":{"id":"Qwen/Qwen3-8B","servedName":"qwen3"},
"engine":{"type":"vllm"},
"adapters":[{"name":"sql","source":"hf://my-org/qwen3-sql-lora"},{"name":"legal","source":"hf://my-org/qwen3-legal-lora"}],
"scaling":{"autoscaling":{"minReplicas":0,"maxReplicas":4,"metric":"queueDepth","target":5,"scaleDownDelaySeconds":600}},
"gateway":{"modelName":"qwen3","parentRef":{"name":"team-a-gateway","namespace":"gateway-system"}},
"placement":{"clusterSelector":{"matchLabels":{"region":"us-east1"},"matchExpressions":[{"key":"tier","operator":"NotIn","values":["spot"]},{"key":"compliance","operator":"Exists"}]}}}}`

// v1alpha2 → v1alpha1 → v1alpha2 through the hub, as the conversion
// webhook does it, loses nothing; the v1alpha1 form is strict v1alpha1
// with the fields in the annotation, and it survives the `replicas: 1` the
// v1alpha1 CRD gives a stored object.
func TestV1alpha2ThroughV1alpha1(t *testing.T) {
	in, l := v1alpha2.DecodeModelDeployment([]byte(fullV1alpha2))
	require.Empty(t, l)
	h, l := in.ConvertToHub()
	require.Empty(t, l)
	old := v1alpha1.ConvertFromHub(h)
	require.Equal(t, v1alpha1.APIVersion, old.APIVersion)
	require.Equal(t, "search", old.Annotations["team"])
	require.JSONEq(t, `{"adapters":[{"name":"sql","source":"hf://my-org/qwen3-sql-lora"},{"name":"legal","source":"hf://my-org/qwen3-legal-lora"}],
		"scaling":{"autoscaling":{"minReplicas":0,"maxReplicas":4,"metric":"queueDepth","target":5,"scaleDownDelaySeconds":600}},
		"gateway":{"parentRef":{"name":"team-a-gateway","namespace":"gateway-system"}},
		"placement":{"clusterSelector":{"matchLabels":{"region":"us-east1"},"matchExpressions":[{"key":"tier","operator":"NotIn","values":["spot"]},{"key":"compliance","operator":"Exists"}]}}}`, old.Annotations[v1alpha1.AnnotationV1alpha2Fields])
	require.NotContains(t, h.Annotations, v1alpha1.AnnotationV1alpha2Fields, "converting does not write into its input")

	stored, err := json.Marshal(old)
	require.NoError(t, err)
	// What the API server stores: v1alpha1, with its CRD default.
	var m map[string]any
	require.NoError(t, json.Unmarshal(stored, &m))
	m["spec"].(map[string]any)["scaling"].(map[string]any)["replicas"] = 1
	stored, err = json.Marshal(m)
	require.NoError(t, err)

	back, l := v1alpha1.DecodeModelDeployment(stored)
	require.Empty(t, l, "the v1alpha1 form is strict v1alpha1")
	h2, l := back.ConvertToHub()
	require.Empty(t, l)
	requireSameJSON(t, in, v1alpha2.ConvertFromHub(h2))
}

// A placement comes back through v1alpha1 exactly as written: empty, an
// empty selector, or beside no other v1alpha2 field; the cluster selector
// and cluster annotations of a fleet are plain annotations that both
// versions keep.
func TestPlacementThroughV1alpha1(t *testing.T) {
	for _, tc := range []struct{ placement, annotation string }{
		{`{}`, `{"placement":{}}`},
		{`{"clusterSelector":{}}`, `{"placement":{"clusterSelector":{}}}`},
		{`{"clusterSelector":{"matchLabels":{"region":"us-west1"}}}`, `{"placement":{"clusterSelector":{"matchLabels":{"region":"us-west1"}}}}`},
	} {
		in, l := v1alpha2.DecodeModelDeployment([]byte(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment",
"metadata":{"name":"m","annotations":{"airunway.ai/cluster":"gpu-west"}},"spec":{"model":{"id":"x"},"placement":` + tc.placement + `}}`))
		require.Empty(t, l)
		h, l := in.ConvertToHub()
		require.Empty(t, l)
		old := v1alpha1.ConvertFromHub(h)
		require.JSONEq(t, tc.annotation, old.Annotations[v1alpha1.AnnotationV1alpha2Fields], tc.placement)
		require.Equal(t, "gpu-west", old.Annotations[hub.AnnotationCluster])
		stored, err := json.Marshal(old)
		require.NoError(t, err)
		back, l := v1alpha1.DecodeModelDeployment(stored)
		require.Empty(t, l, "the v1alpha1 form is strict v1alpha1")
		h2, l := back.ConvertToHub()
		require.Empty(t, l)
		require.Equal(t, h.Spec.Placement, h2.Spec.Placement)
		requireSameJSON(t, in, v1alpha2.ConvertFromHub(h2))
		require.NoError(t, roundTrip([]byte(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment","metadata":{"name":"m"},"spec":{"model":{"id":"x"},"placement":`+tc.placement+`}}`)))
	}
}

// Every shipped v1alpha1 model goes to v1alpha2 and back unchanged, with
// no annotation: it uses no v1alpha2 field.
func TestShippedModelsRoundTrip(t *testing.T) {
	n := 0
	for _, node := range shippedObjects(t) {
		if node.GetKind() != hub.KindModelDeployment {
			continue
		}
		js, l := manifest.ObjectJSON(node)
		require.False(t, l.HasErrors(), "%v", l)
		in, l := v1alpha1.DecodeModelDeployment(js)
		if l.HasErrors() {
			continue // the golden error cases
		}
		in.Status = nil
		h, _ := in.ConvertToHub()
		now := v1alpha2.ConvertFromHub(h)
		require.Equal(t, v1alpha2.APIVersion, now.APIVersion)
		h2, _ := now.ConvertToHub()
		back := v1alpha1.ConvertFromHub(h2)
		require.NotContains(t, back.Annotations, v1alpha1.AnnotationV1alpha2Fields)
		in.APIVersion = v1alpha1.APIVersion
		requireSameJSON(t, in, back)
		n++
	}
	require.Greater(t, n, 100)
}

// A v1alpha1 object read from a cluster renders with its v1alpha2 fields;
// a broken annotation is an error at its path, and the annotation is no
// field of a v1alpha2 object.
func TestConversionAnnotation(t *testing.T) {
	v1 := func(annotation string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"airunway.ai/v1alpha1","kind":"ModelDeployment","metadata":{"name":"m","annotations":{%q:%q}},"spec":{"model":{"id":"x"},"scaling":{"replicas":1}}}`, v1alpha1.AnnotationV1alpha2Fields, annotation))
	}
	md, l := DecodeModelDeployment(v1alpha1.APIVersion, v1(`{"adapters":[{"name":"a","source":"hf://o/r"}],"scaling":{"autoscaling":{"maxReplicas":3,"target":2}}}`))
	require.False(t, l.HasErrors(), "%v", l)
	require.Equal(t, []hub.Adapter{{Name: "a", Source: "hf://o/r"}}, md.Spec.Adapters)
	a := md.Spec.Autoscaling()
	require.NotNil(t, a)
	require.Nil(t, md.Spec.Scaling.Replicas, "the stored default is the autoscaler's")
	require.Equal(t, int32(1), *a.MinReplicas, "v1alpha2's defaults apply")
	require.Equal(t, hub.MetricQueueDepth, a.Metric)
	require.NotContains(t, md.Annotations, v1alpha1.AnnotationV1alpha2Fields)

	for _, bad := range []string{`{"adapters":`, `{"replicas":2}`, `[]`} {
		_, l = DecodeModelDeployment(v1alpha1.APIVersion, v1(bad))
		require.True(t, l.HasErrors(), bad)
		require.Equal(t, "metadata.annotations.airunway.ai/v1alpha2-fields", l.Errors()[0].Field, bad)
	}

	_, l = DecodeModelDeployment(v1alpha2.APIVersion, []byte(fmt.Sprintf(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment","metadata":{"name":"m","annotations":{%q:"{}"}},"spec":{"model":{"id":"x"}}}`, v1alpha1.AnnotationV1alpha2Fields)))
	require.True(t, l.HasErrors())
	require.Contains(t, l.Errors()[0].Message, "its fields belong in `spec`")

	_, l = DecodeModelDeployment(v1alpha1.APIVersion, []byte(`{"apiVersion":"airunway.ai/v1alpha1","kind":"ModelDeployment","metadata":{"name":"m"},"spec":{"model":{"id":"x"},"adapters":[]}}`))
	require.True(t, l.HasErrors())
	require.Equal(t, "spec.adapters", l.Errors()[0].Field, "v1alpha1 has no adapters field")
}

// FuzzConversionRoundTrip decodes arbitrary bytes as a v1alpha2
// ModelDeployment and, when they decode, converts it to v1alpha1 and back
// through the hub, as the conversion webhook does.
//
// Invariants: no panic and no input runs longer than fuzzcheck.Timeout;
// the v1alpha1 form decodes strictly as v1alpha1; the object comes back
// with the same JSON, unless it sets a replica count beside autoscaling,
// which the CRD and the renderer refuse and conversion drops.
func FuzzConversionRoundTrip(f *testing.F) {
	f.Add([]byte(fullV1alpha2))
	f.Add([]byte(`{"apiVersion":"airunway.ai/v1alpha2","kind":"ModelDeployment","metadata":{"name":"m","annotations":{"airunway.ai/cluster-selector":"region=us-east1"}},"spec":{"model":{"id":"x"},"placement":{}}}`))
	for _, node := range shippedObjects(f) {
		if js, l := manifest.ObjectJSON(node); node.GetKind() == hub.KindModelDeployment && !l.HasErrors() {
			var m map[string]any
			if json.Unmarshal(js, &m) == nil {
				m["apiVersion"] = v1alpha2.APIVersion
				js, _ = json.Marshal(m)
				f.Add(js)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bounded(t, func() error { return roundTrip(data) })
	})
}

func roundTrip(data []byte) error {
	in, l := v1alpha2.DecodeModelDeployment(data)
	if l.HasErrors() {
		return nil
	}
	if s := in.Spec.Scaling; s != nil && s.Autoscaling != nil && (s.Replicas != nil || s.Decode != nil && s.Decode.Replicas != nil) {
		return nil
	}
	in.Status = nil
	h, _ := in.ConvertToHub()
	old, err := json.Marshal(v1alpha1.ConvertFromHub(h))
	if err != nil {
		return err
	}
	back, l := v1alpha1.DecodeModelDeployment(old)
	if l.HasErrors() {
		return fmt.Errorf("the v1alpha1 form does not decode: %v\n%s", l, old)
	}
	// Conversion's own problems (a legacy image that conflicts) are for
	// rendering to report; the object converts all the same.
	h2, _ := back.ConvertToHub()
	in.APIVersion = v1alpha2.APIVersion // conversion stamps the version
	want, _ := json.Marshal(in)
	got, _ := json.Marshal(v1alpha2.ConvertFromHub(h2))
	var w, g any
	_ = json.Unmarshal(want, &w)
	_ = json.Unmarshal(got, &g)
	if !reflect.DeepEqual(w, g) {
		return fmt.Errorf("lost in conversion:\n%s\n%s", want, got)
	}
	return nil
}
