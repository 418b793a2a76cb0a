package engineargs

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVLLMTableIsTheJSON: the Go table the renderer reads is exactly
// vllm.json, the derived and reviewed file, and each release's options
// are sorted, as Known's binary search needs.
func TestVLLMTableIsTheJSON(t *testing.T) {
	data, err := os.ReadFile("vllm.json")
	require.NoError(t, err)
	var tbl Table
	require.NoError(t, json.Unmarshal(data, &tbl))
	require.Equal(t, tbl, vllmTable, "vllm_table.go is not vllm.json: run go run ./hack/gentables")
	for _, r := range vllmTable.Releases {
		require.True(t, slices.IsSorted(r.Options), "%s@%s: options not sorted", r.Engine, r.Release)
	}
}
