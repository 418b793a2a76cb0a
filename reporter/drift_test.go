package reporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/providers"
)

// TestWaitOrDone: the drift loop's debounce ends with its context, so a
// stopping manager does not wait it out (an hour here: a sleep would hang
// the test).
func TestWaitOrDone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.False(t, waitOrDone(ctx, time.Hour))
	require.True(t, waitOrDone(context.Background(), time.Millisecond))
}

func TestModelPools(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"l4"}, modelPools("l4"))
	require.Equal(t, []string{"h100", "l4"}, modelPools("prefill=h100,decode=l4,worker=h100"))
	require.Empty(t, modelPools(""))
}

// TestCapabilitiesStatus: current, drifted and unreadable files, and a
// condition that keeps its transition time while its status stays.
func TestCapabilitiesStatus(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	s := CapabilitiesStatus(3, nil, "", nil, t0)
	require.Equal(t, int64(3), s.ObservedGeneration)
	require.Equal(t, metav1.ConditionTrue, s.Conditions[0].Status)
	require.Equal(t, ReasonCapabilitiesCurrent, s.Conditions[0].Reason)
	require.Empty(t, s.Differences)

	diffs := []discover.Difference{{Field: "spec.nodePools[l4].taints", Declared: "a", Live: "b", Message: `pool "l4": taints differ`, Pool: "l4"}}
	drifted := CapabilitiesStatus(3, diffs, "", &s, t0.Add(time.Minute))
	require.Equal(t, metav1.ConditionFalse, drifted.Conditions[0].Status)
	require.Equal(t, ReasonCapabilitiesDrifted, drifted.Conditions[0].Reason)
	require.Equal(t, `1 declared fact(s) differ from the cluster: pool "l4": taints differ`, drifted.Conditions[0].Message)
	require.Equal(t, []v1.CapabilityDifference{{Field: "spec.nodePools[l4].taints", Declared: "a", Live: "b", Message: `pool "l4": taints differ`}}, drifted.Differences)
	require.Equal(t, t0.Add(time.Minute), drifted.Conditions[0].LastTransitionTime.Time)

	still := CapabilitiesStatus(3, diffs, "", &drifted, t0.Add(time.Hour))
	require.Equal(t, drifted, still, "nothing changed, nothing to write")

	invalid := CapabilitiesStatus(4, nil, "spec.nodePools[0].name: is required", &drifted, t0)
	require.Equal(t, metav1.ConditionUnknown, invalid.Conditions[0].Status)
	require.Equal(t, ReasonCapabilitiesInvalid, invalid.Conditions[0].Reason)
}

// TestCompareFile reads an applied ClusterCapabilities as the renderer
// reads the file, status and server fields aside, and says why it cannot.
func TestCompareFile(t *testing.T) {
	t.Parallel()
	file := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "airunway.ai/v1alpha1", "kind": "ClusterCapabilities",
		"metadata": map[string]any{"name": "prod", "uid": "1", "resourceVersion": "7", "managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": map[string]any{"nodePools": []any{map[string]any{
			"name": "l4", "selector": map[string]any{"nvidia.com/gpu.product": "NVIDIA-L4"}, "gpu": map[string]any{"perNode": int64(1)}}}},
		"status": map[string]any{"observedGeneration": int64(1)},
	}}
	diffs, invalid := compareFile(file, &discover.Cluster{})
	require.Empty(t, invalid)
	require.Len(t, diffs, 1)
	require.Equal(t, "spec.nodePools[l4].selector", diffs[0].Field)
	require.Equal(t, "l4", diffs[0].Pool)

	require.NoError(t, unstructured.SetNestedField(file.Object, "bogus", "spec", "unknown"))
	_, invalid = compareFile(file, &discover.Cluster{})
	require.Contains(t, invalid, "spec.unknown")
}

// TestCapabilitiesCondition: a model sees the differences of its own pools
// and provider only, and none without an applied file.
func TestCapabilitiesCondition(t *testing.T) {
	t.Parallel()
	state := driftState{files: []string{"prod"},
		pools:     map[string][]string{"l4": {`pool "l4": 3 node(s), the file says 4`}},
		providers: map[string][]string{hub.ProviderKAITO: {`provider "kaito": CRD workspaces.kaito.sh is not installed`}}}
	annotations := func(provider, pools string) map[string]string {
		return map[string]string{hub.AnnotationProvider: provider, hub.AnnotationNodePool: pools}
	}
	base := Observation{Generation: 1, Now: time.Now(), Primary: providers.Primary{Name: "qwen3"}}
	cases := []struct {
		provider, pools, status, reason string
	}{
		{hub.ProviderVLLM, "h100", "True", ReasonCapabilitiesCurrent},
		{hub.ProviderVLLM, "prefill=h100,decode=l4", "False", ReasonNodePoolChanged},
		{hub.ProviderKAITO, "h100", "False", ReasonProviderChanged},
	}
	for _, tc := range cases {
		o := base
		o.Annotations = annotations(tc.provider, tc.pools)
		o.Capabilities = state.check(o.Annotations)
		s := Compute(o)
		var got *metav1.Condition
		for i := range s.Conditions {
			if s.Conditions[i].Type == ConditionCapabilitiesCurrent {
				got = &s.Conditions[i]
			}
		}
		require.NotNil(t, got, "%s on %s", tc.provider, tc.pools)
		require.Equal(t, metav1.ConditionStatus(tc.status), got.Status, "%s on %s: %s", tc.provider, tc.pools, got.Message)
		require.Equal(t, tc.reason, got.Reason)
		require.Equal(t, ConditionReady, s.Conditions[0].Type, "Ready stays first, and drift does not change it")
	}
	require.Nil(t, driftState{}.check(annotations(hub.ProviderVLLM, "l4")), "no file applied, no condition")
}
