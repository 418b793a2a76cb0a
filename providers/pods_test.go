package providers

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Deployment's rollout as the Deployment controller runs it: maxSurge
// rounded up, maxUnavailable rounded down, and both 0 made maxUnavailable
// 1 (ResolveFenceposts); Recreate takes every pod down first.
func TestDeploymentRollout(t *testing.T) {
	for _, tc := range []struct {
		name               string
		replicas           int64
		strategy           map[string]any
		surge, unavailable int32
	}{
		{"defaults, 1 replica", 1, nil, 1, 0},
		{"defaults, 3 replicas", 3, nil, 1, 0},
		{"defaults, 4 replicas", 4, nil, 1, 1},
		{"both 0: the fencepost", 2, map[string]any{"rollingUpdate": map[string]any{"maxSurge": int64(0), "maxUnavailable": "0%"}}, 0, 1},
		{"percentages", 10, map[string]any{"rollingUpdate": map[string]any{"maxSurge": "10%", "maxUnavailable": "15%"}}, 1, 1},
		{"Recreate", 3, map[string]any{"type": "Recreate"}, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := map[string]any{"replicas": tc.replicas, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c"}}}}}
			if tc.strategy != nil {
				spec["strategy"] = tc.strategy
			}
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"}, "spec": spec}}
			groups, handled, err := WorkloadPodGroups(obj)
			require.NoError(t, err)
			require.True(t, handled)
			require.Len(t, groups, 1)
			require.Equal(t, tc.surge, groups[0].Surge, "surge")
			require.Equal(t, tc.unavailable, groups[0].Unavailable, "unavailable")
		})
	}
}
