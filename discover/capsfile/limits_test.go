package capsfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
)

// The renderer's bounds on an object's JSON hold even when the text is
// within the bound on a file: flow-style YAML is shorter than its JSON,
// and nesting costs no bytes.
func TestCheckReadableAsJSON(t *testing.T) {
	flow := "[" + strings.Repeat("a,", hub.MaxObjectBytes/2-1) + "]" // ["a","a",...] as JSON: twice as long
	require.LessOrEqual(t, len(flow), hub.MaxObjectBytes)
	err := checkReadable([]byte(flow), 3, 7)
	var tooLarge *TooLargeError
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	require.Contains(t, err.Error(), "the capability file would be refused by the renderer: it is ")
	require.Contains(t, err.Error(), "bytes as JSON; a ClusterCapabilities must be at most 1 MiB")
	require.Contains(t, err.Error(), "the cluster's 7 node(s) make 3 node pools")

	deep := strings.Repeat("[", hub.MaxObjectDepth+1) + strings.Repeat("]", hub.MaxObjectDepth+1)
	require.ErrorContains(t, checkReadable([]byte(deep), 1, 1), "nests more than 64 levels deep")
	require.NoError(t, checkReadable([]byte(strings.Repeat("[", hub.MaxObjectDepth)+strings.Repeat("]", hub.MaxObjectDepth)), 1, 1))
}
