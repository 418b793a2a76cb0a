package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTablesAreCurrent: each Go table the renderer reads is, byte for
// byte, what its JSON file (the derived, reviewed artifact) generates.
func TestTablesAreCurrent(t *testing.T) {
	for _, tbl := range tables() {
		require.NoError(t, generate("../..", tbl, true), "run go run ./hack/gentables")
	}
}
