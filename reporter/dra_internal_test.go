package reporter

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/discovertest"
)

// TestTrimResourceSlice: the trimmed slice reads as discover keeps the
// whole one, a node's identical GPUs kept once; a republish with a new
// pool generation trims to the same object.
func TestTrimResourceSlice(t *testing.T) {
	t.Parallel()
	s := discovertest.GPUSlice("h100-0", 8, discovertest.H100)
	whole, err := discover.SliceOf(&s)
	require.NoError(t, err)
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&s)
	require.NoError(t, err)
	trim := transformFor(resourceSliceGVK)
	trimmed, err := trim(&unstructured.Unstructured{Object: u})
	require.NoError(t, err)
	devices, _, _ := unstructured.NestedSlice(trimmed.(*unstructured.Unstructured).Object, "spec", "devices")
	require.Len(t, devices, 1, "eight identical GPUs, kept once")
	got, err := sliceFromTrimmed(trimmed.(*unstructured.Unstructured).Object)
	require.NoError(t, err)
	require.Equal(t, whole.Devices[0].Count, got.Devices[0].Count)
	require.True(t, equality.Semantic.DeepEqual(whole, got), "%v\n%v", whole, got)

	s.Spec.Pool.Generation++
	s.ResourceVersion = "42"
	u, err = runtime.DefaultUnstructuredConverter.ToUnstructured(&s)
	require.NoError(t, err)
	again, err := trim(&unstructured.Unstructured{Object: u})
	require.NoError(t, err)
	require.Equal(t, trimmed, again)
	twice, err := trim(again)
	require.NoError(t, err)
	require.Equal(t, trimmed, twice, "trimming a trimmed slice changes nothing")
}
