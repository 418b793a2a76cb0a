package fit

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCalibration holds the start-up arithmetic to every row of the
// calibration table: public vLLM start-up logs. For each, the model's
// facts from the catalog, the GPU's total from the GPU table and the
// rules of the log's release predict the KV cache per GPU within
// max(3%, 512 MiB) of what vLLM printed, and every refusal is refused for
// vLLM's reason. Every figure of a row must appear in its excerpt (copied,
// never inferred), and a total the log printed must be the GPU table's.
func TestCalibration(t *testing.T) {
	data, err := os.ReadFile("calibration/vllm-startup-logs.yaml")
	require.NoError(t, err)
	rows, err := Calibration(data)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rows), 40, "the issue asks for at least 40 logs")
	seen := map[string]bool{}
	var report strings.Builder
	for _, r := range rows {
		require.False(t, seen[r.ID], "%s twice", r.ID)
		seen[r.ID] = true
		require.NoError(t, r.CheckExcerpt())
		require.True(t, strings.HasPrefix(r.Source, "https://"), "%s: source %q", r.ID, r.Source)
		require.Contains(t, []string{"started", "refused", "failed-after-kv-cache"}, r.Outcome, r.ID)
		if r.Outcome == "refused" {
			require.NotEmpty(t, r.Refusal, "%s: vLLM's message", r.ID)
			require.NotEmpty(t, r.Reason, r.ID)
		}
		if r.Printed.TotalGiB != 0 {
			g := NewGPU(r.Product, 0)
			require.InDelta(t, r.Printed.TotalGiB, float64(g.TotalBytes)/gib, 0.006, "%s: the GPU table's total for %s", r.ID, r.Product)
		}
		p := Predict(r)
		fmt.Fprintf(&report, "%-70s %-8s KV %7.2f printed %7.2f (%+.2f of ±%.2f) %s\n", r.ID, r.Release, float64(p.Startup.PerGPU.KVCache)/gib, r.Printed.KVCacheGiB, p.KVErrorGiB, p.AllowedGiB, r.Outcome)
		if p.Problem != "" {
			t.Errorf("%s (%s): %s", r.ID, r.Source, p.Problem)
		}
		if r.Printed.KVTokens > 0 && r.Outcome != "refused" && p.Startup.KVTokens > 0 {
			rel := math.Abs(float64(p.Startup.KVTokens-r.Printed.KVTokens)) / float64(r.Printed.KVTokens)
			bound := math.Max(0.03, 0.5/math.Max(r.Printed.KVCacheGiB, 0.5))
			if rel > bound+0.001 {
				t.Errorf("%s: %d KV tokens, vLLM printed %d (%.1f%% off)", r.ID, p.Startup.KVTokens, r.Printed.KVTokens, rel*100)
			}
		}
	}
	t.Log("\n" + report.String())
}
