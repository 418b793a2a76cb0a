package plan

import (
	"cmp"
	"slices"

	"github.com/airunway-render/airunway-render/fit"
)

// Memory is one replica's memory fit for a model's GPU component, as the
// renderer found it (render.Result.Fits, package fit): what it needs
// against what its GPUs give, per replica, and where the model's facts
// came from; or why it was not checked. The plan does not estimate it
// again: the caller passes the renderer's verdicts to MemoryOf.
type Memory struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	ModelID   string `json:"modelId,omitempty"`
	// Component: prefill or decode of a disaggregated model, else empty.
	Component      string `json:"component,omitempty"`
	Pool           string `json:"pool,omitempty"`
	GPUsPerReplica int    `json:"gpusPerReplica,omitempty"`
	// NeededMiB, AvailableMiB and HeadroomPercent (what the estimate
	// leaves of the available, rounded towards zero) are absent when the
	// fit was not checked.
	NeededMiB       *int64 `json:"neededMiB,omitempty"`
	AvailableMiB    *int64 `json:"availableMiB,omitempty"`
	HeadroomPercent *int   `json:"headroomPercent,omitempty"`
	// Source of the model's facts: model-dir, catalog or id.
	Source string `json:"source,omitempty"`
	// Status: fits, tight, short-context, does-not-fit or not-checked.
	Status fit.Status `json:"status"`
	// Reason the fit was not checked.
	Reason string `json:"reason,omitempty"`
}

// MemoryOf turns the renderer's verdicts into the plan's memory rows,
// ordered by namespace and name (a model's components in their order).
func MemoryOf(verdicts []fit.Verdict) []Memory {
	out := make([]Memory, 0, len(verdicts))
	for _, v := range verdicts {
		m := Memory{Namespace: v.Namespace, Name: v.Name, ModelID: v.ModelID, Component: v.Component, Pool: v.Pool,
			GPUsPerReplica: v.GPUs, Source: v.Source, Status: v.Status, Reason: v.Reason}
		if v.Checked() {
			needed, available, headroom := v.NeededMiB, v.AvailableMiB, v.HeadroomPercent()
			m.NeededMiB, m.AvailableMiB, m.HeadroomPercent = &needed, &available, &headroom
		}
		out = append(out, m)
	}
	slices.SortStableFunc(out, func(a, b Memory) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// MemoryDiff is a model component whose memory fit differs between two
// plans: its pool, GPUs, needed or available memory, or its status. A
// side without it (the model added or removed) is nil.
type MemoryDiff struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Component string  `json:"component,omitempty"`
	Before    *Memory `json:"before"`
	After     *Memory `json:"after"`
}

// CompareMemory lists the memory rows that differ from before to after.
func CompareMemory(before, after []Memory) []MemoryDiff {
	type key = [3]string
	k := func(m Memory) key { return key{m.Namespace, m.Name, m.Component} }
	diffs := map[key]*MemoryDiff{}
	var order []key
	at := func(m Memory) *MemoryDiff {
		if diffs[k(m)] == nil {
			diffs[k(m)] = &MemoryDiff{Namespace: m.Namespace, Name: m.Name, Component: m.Component}
			order = append(order, k(m))
		}
		return diffs[k(m)]
	}
	for _, m := range before {
		at(m).Before = &m
	}
	for _, m := range after {
		at(m).After = &m
	}
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	var out []MemoryDiff
	for _, key := range order {
		d := diffs[key]
		if d.Before == nil || d.After == nil || !sameMemory(*d.Before, *d.After) {
			out = append(out, *d)
		}
	}
	return out
}

func sameMemory(a, b Memory) bool {
	same := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Pool == b.Pool && a.GPUsPerReplica == b.GPUsPerReplica && a.Status == b.Status && a.Reason == b.Reason &&
		a.Source == b.Source && same(a.NeededMiB, b.NeededMiB) && same(a.AvailableMiB, b.AvailableMiB)
}
