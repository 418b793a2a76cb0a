package hub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJSONDepth(t *testing.T) {
	for _, tc := range []struct {
		json string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`{"a":[{"b":1}]}`, 3},
		{`{"a":"{[{[{["}`, 1},          // brackets in strings do not count
		{`{"a":"\"{{{","b":{}}`, 2},    // nor after an escaped quote
		{`{"a":"\\","b":{"c":{}}}`, 3}, // an escaped backslash ends before the quote
		{`[[],[[]],[]]`, 3},
	} {
		require.Equal(t, tc.want, jsonDepth([]byte(tc.json)), tc.json)
	}
}

func TestCheckLimits(t *testing.T) {
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	require.Empty(t, CheckLimits([]byte(deep(MaxObjectDepth)), KindModelDeployment))

	l := CheckLimits([]byte(deep(MaxObjectDepth+1)), KindModelDeployment)
	require.Len(t, l, 1)
	require.Equal(t, strings.TrimPrefix(strings.Repeat(".a", MaxObjectDepth), "."), l[0].Field, "the path stops at the first level too deep")
	require.Equal(t, "nests more than 64 levels deep; a ModelDeployment must nest at most 64 levels", l[0].Message)

	l = CheckLimits([]byte(`{"list":[`+strings.Repeat("[", MaxObjectDepth)+strings.Repeat("]", MaxObjectDepth)+`]}`), KindClusterCapabilities)
	require.Equal(t, "list"+strings.Repeat("[0]", MaxObjectDepth-1), l[0].Field, "level 65 is the 63rd list below `list`")

	big := []byte(`{"a":"` + strings.Repeat("x", MaxObjectBytes) + `"}`)
	l = CheckLimits(big, KindClusterCapabilities)
	require.Equal(t, "is 1048584 bytes as JSON; a ClusterCapabilities must be at most 1 MiB (1048576 bytes): expand fewer YAML aliases, or move data out of it", l[0].Message)
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int]string{17: "17 bytes", 2048: "2 KiB", 1 << 20: "1 MiB", 3 << 19: "1.5 MiB", MaxInputBytes: "64 MiB"} {
		require.Equal(t, want, FormatBytes(n))
	}
}
