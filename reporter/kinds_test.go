package reporter

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/airunway-render/airunway-render/api/hub"
)

func generated(ns, name, from string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetNamespace(ns)
	u.SetName(name)
	if from != "" {
		u.SetAnnotations(map[string]string{hub.AnnotationGeneratedFrom: from})
	}
	return u
}

// TestEventOwnersOncePerModel: an update's old and new object name the
// same model, and the model is asked for once. Asked for twice, a
// reconcile that fails while the second request waits is run again at
// once, not after the retry delay (TestStatusWriteFaults caught it: a
// second status write 6ms after a failed one).
func TestEventOwnersOncePerModel(t *testing.T) {
	t.Parallel()
	w := watchedKind{owners: generatedFrom}
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	for _, tc := range []struct {
		name string
		objs []any
		want []types.NamespacedName
	}{
		{"add", []any{generated("ns", "x", "a")}, []types.NamespacedName{a}},
		{"update, same model", []any{generated("ns", "x", "a"), generated("ns", "x", "a")}, []types.NamespacedName{a}},
		{"update that moves the object to another model", []any{generated("ns", "x", "a"), generated("ns", "x", "b")}, []types.NamespacedName{a, b}},
		{"update that drops the annotation", []any{generated("ns", "x", "a"), generated("ns", "x", "")}, []types.NamespacedName{a}},
		{"delete seen late", []any{toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: generated("ns", "x", "b")}}, []types.NamespacedName{b}},
		{"not generated", []any{generated("ns", "x", "")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, eventOwners(nil, w, tc.objs...))
		})
	}
}
