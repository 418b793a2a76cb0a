package engineargs

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVLLMOptionsAreSorted: Known finds an option by binary search in
// its release's list (hack/gentables holds the list to vllm.json).
func TestVLLMOptionsAreSorted(t *testing.T) {
	for _, r := range vllmTable.Releases {
		require.True(t, slices.IsSorted(r.Options), "%s@%s: options not sorted", r.Engine, r.Release)
	}
}
