package wording

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 176555: "176,555", 1234567: "1,234,567",
		-1000: "-1,000", math.MaxInt64: "9,223,372,036,854,775,807",
	} {
		require.Equal(t, want, Thousands(n), "%d", n)
	}
}

func TestPlural(t *testing.T) {
	require.Equal(t, "node", Plural(1, "node"))
	require.Equal(t, "nodes", Plural(0, "node"))
	require.Equal(t, "nodes", Plural(2, "node"))
}

func TestCount(t *testing.T) {
	require.Equal(t, "1 GPU", Count(1, "GPU"))
	require.Equal(t, "4 GPUs", Count(4, "GPU"))
}
