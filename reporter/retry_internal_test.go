package reporter

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestRetryLimiterDoubles: a model's failed reconciles are retried after
// RetryBaseDelay, twice as long each time up to RetryMaxDelay (which also
// caps controller-runtime's own per-item back-off, longer by then); another
// model's retries start over, and so do the model's once it succeeds.
func TestRetryLimiterDoubles(t *testing.T) {
	t.Parallel()
	limiter := retryLimiter()
	model := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ai", Name: "qwen"}}
	for i := range 20 {
		require.Equal(t, min(RetryBaseDelay<<i, RetryMaxDelay), limiter.When(model), "retry %d", i+1)
	}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ai", Name: "llama"}}
	require.Equal(t, RetryBaseDelay, limiter.When(other))
	limiter.Forget(model)
	require.Equal(t, RetryBaseDelay, limiter.When(model))
}
