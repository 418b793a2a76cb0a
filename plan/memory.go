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
	// Reason the fit was not checked, or the engine's refusal.
	Reason string `json:"reason,omitempty"`
	// Engine names the start-up arithmetic held ("vLLM v0.19.0").
	Engine string `json:"engine,omitempty"`
	// PerGPU is one GPU's memory at start-up as the engine accounts it:
	// KVCacheMiB is vLLM's "Available KV cache memory" for one GPU.
	PerGPU *fit.PerGPUMiB `json:"perGPU,omitempty"`
	// KVCacheTokens is vLLM's "GPU KV cache size" for the replica, and
	// MaxConcurrency how many requests of ContextLength tokens it holds.
	KVCacheTokens  int64   `json:"kvCacheTokens,omitempty"`
	MaxConcurrency float64 `json:"maxConcurrency,omitempty"`
	ContextLength  int     `json:"contextLength,omitempty"`
}

// MemoryOf turns the renderer's verdicts into the plan's memory rows,
// ordered by namespace and name (a model's components in their order).
func MemoryOf(verdicts []fit.Verdict) []Memory {
	out := make([]Memory, 0, len(verdicts))
	for _, v := range verdicts {
		m := Memory{Namespace: v.Namespace, Name: v.Name, ModelID: v.ModelID, Component: v.Component, Pool: v.Pool,
			GPUsPerReplica: v.GPUs, Source: v.Source, Status: v.Status, Reason: v.Reason, Engine: v.Engine, PerGPU: v.PerGPU,
			KVCacheTokens: v.KVCacheTokens, MaxConcurrency: v.MaxConcurrency, ContextLength: v.ContextLength}
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
// plans: its pool, GPUs, needed or available memory, source or status.
// A model added or removed is not one: the pools' model changes show it,
// and the plan of its side its fit.
type MemoryDiff struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Component string `json:"component,omitempty"`
	Before    Memory `json:"before"`
	After     Memory `json:"after"`
}

// CompareMemory lists the components on both sides whose memory fit
// differs, in the after side's order.
func CompareMemory(before, after []Memory) []MemoryDiff {
	type key struct{ namespace, name, component string }
	old := map[key]Memory{}
	for _, m := range before {
		old[key{m.Namespace, m.Name, m.Component}] = m
	}
	var out []MemoryDiff
	for _, m := range after {
		b, ok := old[key{m.Namespace, m.Name, m.Component}]
		if ok && !sameMemory(b, m) {
			out = append(out, MemoryDiff{Namespace: m.Namespace, Name: m.Name, Component: m.Component, Before: b, After: m})
		}
	}
	return out
}

func sameMemory(a, b Memory) bool {
	same := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Pool == b.Pool && a.GPUsPerReplica == b.GPUsPerReplica && a.Status == b.Status && a.Reason == b.Reason &&
		a.Source == b.Source && same(a.NeededMiB, b.NeededMiB) && same(a.AvailableMiB, b.AvailableMiB) &&
		a.KVCacheTokens == b.KVCacheTokens && a.ContextLength == b.ContextLength
}
