package cli

import (
	"strconv"

	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/wording"
	"github.com/airunway-render/airunway-render/plan"
)

// The plan's second table: one replica's memory fit per model component,
// as the renderer estimated it (docs/will-it-run.md).

const memoryTitle = "Memory per replica"

var memoryColumns = []string{"MODEL", "POOL", "GPUS/REPLICA", "NEEDED MIB", "AVAILABLE MIB", "HEADROOM", "KV TOKENS", "CONCURRENCY", "FIT", "SOURCE"}

func memoryRows(ms []plan.Memory) [][]string {
	var rows [][]string
	for _, m := range ms {
		rows = append(rows, []string{
			memoryModel(m.Namespace, m.Name, m.Component),
			dash(m.Pool),
			gpusPerReplica(&m),
			mib(m.NeededMiB),
			mib(m.AvailableMiB),
			headroom(&m),
			kvTokens(&m),
			concurrency(&m),
			fitWord(&m),
			dash(m.Source),
		})
	}
	return rows
}

func memoryModel(namespace, name, component string) string {
	s := namespace + "/" + name
	if component != "" {
		s += " (" + component + ")"
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func gpusPerReplica(m *plan.Memory) string {
	if m == nil || m.GPUsPerReplica == 0 {
		return "-"
	}
	return strconv.Itoa(m.GPUsPerReplica)
}

func mib(v *int64) string {
	if v == nil {
		return "-"
	}
	return wording.Thousands(*v)
}

func headroom(m *plan.Memory) string {
	if m == nil || m.HeadroomPercent == nil {
		return "-"
	}
	return strconv.Itoa(*m.HeadroomPercent) + "%"
}

// kvTokens is the KV cache's tokens for the replica ("-" when not
// predicted).
func kvTokens(m *plan.Memory) string {
	if m == nil || m.KVCacheTokens <= 0 {
		return "-"
	}
	return wording.Thousands(m.KVCacheTokens)
}

// concurrency is how many requests of the context length the KV cache
// holds at once: "12.3× 8,192".
func concurrency(m *plan.Memory) string {
	if m == nil || m.MaxConcurrency <= 0 || m.ContextLength <= 0 {
		return "-"
	}
	return strconv.FormatFloat(m.MaxConcurrency, 'f', 2, 64) + "× " + wording.Thousands(int64(m.ContextLength))
}

// fitWord is the FIT column: yes, tight, short context, no, or "-" with
// the reason it was not checked.
func fitWord(m *plan.Memory) string {
	if m == nil {
		return "-"
	}
	switch m.Status {
	case fit.StatusFits:
		return "yes"
	case fit.StatusTight:
		return "tight"
	case fit.StatusShortContext:
		return "short context"
	case fit.StatusDoesNotFit:
		return "no"
	}
	return "- (" + m.Reason + ")"
}

// The plan diff's memory table: the components whose fit changed, before
// → after.

const memoryDeltaTitle = "Memory per replica, changed"

var memoryDeltaColumns = []string{"MODEL", "POOL", "GPUS/REPLICA", "NEEDED MIB", "AVAILABLE MIB", "HEADROOM", "KV TOKENS", "CONCURRENCY", "FIT"}

func memoryDeltaRows(ds []plan.MemoryDiff) [][]string {
	var rows [][]string
	for _, d := range ds {
		side := func(f func(*plan.Memory) string) string {
			if x, y := f(&d.Before), f(&d.After); x != y {
				return x + " → " + y
			}
			return f(&d.After)
		}
		rows = append(rows, []string{
			memoryModel(d.Namespace, d.Name, d.Component),
			side(func(m *plan.Memory) string { return dash(m.Pool) }),
			side(gpusPerReplica),
			side(func(m *plan.Memory) string { return mib(m.NeededMiB) }),
			side(func(m *plan.Memory) string { return mib(m.AvailableMiB) }),
			side(headroom),
			side(kvTokens),
			side(concurrency),
			side(fitWord),
		})
	}
	return rows
}
