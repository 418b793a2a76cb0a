package reporter

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
)

// TestRecentWrites: the status written stands in for the cached one while
// the cache shows the object as the write found it, and is forgotten once
// the cache shows anything newer.
func TestRecentWrites(t *testing.T) {
	t.Parallel()
	var w recentWrites
	key := types.NamespacedName{Namespace: "ns", Name: "m"}
	if _, ok := w.take(key, "5"); ok {
		t.Fatal("nothing was written yet")
	}
	w.put(key, "5", v1.ModelDeploymentStatus{Phase: "Failed"})
	for range 2 { // as long as the cache lags, every reconcile sees it
		if s, ok := w.take(key, "5"); !ok || s.Phase != "Failed" {
			t.Fatalf("while the cache shows version 5: %v, %v", s, ok)
		}
	}
	if _, ok := w.take(key, "6"); ok {
		t.Fatal("the cache shows version 6: the write must not stand in")
	}
	if _, ok := w.take(key, "5"); ok {
		t.Fatal("the entry must be gone once a newer version was seen")
	}
}
