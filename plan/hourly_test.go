package plan

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHourlyIsADecimal: a month's cents as a price per hour print as the
// decimal they are, not as a float's division (98.32000000000001).
func TestHourlyIsADecimal(t *testing.T) {
	for cents, want := range map[int64]string{
		7177360: "98.32",  // (88.25 + 10.07) × 730 hours
		6442250: "88.25",  // one H100 node
		913:     "0.0125", // a slice at 1.25 cents an hour
		0:       "0",
	} {
		got, err := json.Marshal(hourly(cents))
		require.NoError(t, err)
		require.Equal(t, want, string(got), "%d cents a month", cents)
	}
}
