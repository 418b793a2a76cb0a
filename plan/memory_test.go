package plan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/fit"
)

func TestMemoryOf(t *testing.T) {
	for _, c := range []struct {
		name     string
		in       fit.Verdict
		headroom *int
		status   fit.Status
	}{
		{"fits", fit.Verdict{Namespace: "ml", Name: "a", Pool: "h100", GPUs: 4, NeededMiB: 177579, AvailableMiB: 294912, Source: "catalog", Status: fit.StatusFits}, ptr(39), fit.StatusFits},
		{"tight", fit.Verdict{Namespace: "ml", Name: "b", Pool: "l4", GPUs: 1, NeededMiB: 18951, AvailableMiB: 20730, Source: "catalog", Status: fit.StatusTight}, ptr(8), fit.StatusTight},
		{"not checked", fit.Verdict{Namespace: "ml", Name: "c", Pool: "cpu", Status: fit.StatusNotChecked, Reason: "KAITO's presets carry their own GPU requirements"}, nil, fit.StatusNotChecked},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := MemoryOf([]fit.Verdict{c.in})
			require.Len(t, m, 1)
			require.Equal(t, c.status, m[0].Status)
			require.Equal(t, c.headroom, m[0].HeadroomPercent)
			if c.headroom == nil {
				require.Nil(t, m[0].NeededMiB)
				require.Equal(t, c.in.Reason, m[0].Reason)
			} else {
				require.Equal(t, c.in.NeededMiB, *m[0].NeededMiB)
				require.Equal(t, c.in.AvailableMiB, *m[0].AvailableMiB)
			}
		})
	}
	// ordered by namespace and name, components in their order
	m := MemoryOf([]fit.Verdict{{Namespace: "b", Name: "x"}, {Namespace: "a", Name: "y", Component: "prefill"}, {Namespace: "a", Name: "y", Component: "decode"}})
	require.Equal(t, []string{"prefill", "decode", ""}, []string{m[0].Component, m[1].Component, m[2].Component})
}

func TestCompareMemory(t *testing.T) {
	fits := fit.Verdict{Namespace: "ml", Name: "a", Pool: "l4", GPUs: 1, NeededMiB: 17365, AvailableMiB: 20730, Source: "catalog", Status: fit.StatusFits}
	tighter := fits
	tighter.AvailableMiB, tighter.Status = 18000, fit.StatusTight
	same := fit.Verdict{Namespace: "ml", Name: "b", Status: fit.StatusNotChecked, Reason: "r"}
	for _, c := range []struct {
		name          string
		before, after []fit.Verdict
		want          int
	}{
		{"unchanged", []fit.Verdict{fits, same}, []fit.Verdict{fits, same}, 0},
		{"tighter", []fit.Verdict{fits, same}, []fit.Verdict{tighter, same}, 1},
		{"added: the pools show it", []fit.Verdict{same}, []fit.Verdict{fits, same}, 0},
		{"removed", []fit.Verdict{fits}, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := CompareMemory(MemoryOf(c.before), MemoryOf(c.after))
			require.Len(t, d, c.want)
			if c.name == "tighter" {
				require.Equal(t, fit.StatusFits, d[0].Before.Status)
				require.Equal(t, fit.StatusTight, d[0].After.Status)
			}
		})
	}
	// A plan whose memory fit changed has changed.
	before, after := &Plan{Fits: true, Memory: MemoryOf([]fit.Verdict{fits})}, &Plan{Fits: true, Memory: MemoryOf([]fit.Verdict{tighter})}
	require.True(t, Compare(before, after).Changed())
	require.False(t, Compare(before, before).Changed())
}

func ptr[T any](v T) *T { return &v }
