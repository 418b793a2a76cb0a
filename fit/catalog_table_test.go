package fit

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCatalogTableIsTheJSON: the Go table the renderer reads is exactly
// catalog.json, the derived and reviewed file.
func TestCatalogTableIsTheJSON(t *testing.T) {
	data, err := os.ReadFile("catalog.json")
	require.NoError(t, err)
	var c Catalog
	require.NoError(t, json.Unmarshal(data, &c))
	require.Equal(t, c, catalogTable, "catalog_table.go is not catalog.json: run go run ./hack/gentables")
}
