package plan

import (
	"cmp"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// Delta is what a change does to the plan: per pool the demand and cost
// before and after, and the models whose share changed. It is what a
// pull request adds to the cluster's GPU bill.
type Delta struct {
	Before Totals `json:"before"`
	After  Totals `json:"after"`
	// Currency of every cost, when some pool has a price.
	Currency string `json:"currency,omitempty"`
	// Pools whose demand changed, in the after side's order (pools only
	// at the before side last).
	Pools []PoolDelta `json:"pools"`
	// Memory lists the model components whose memory fit per replica
	// changed (CompareMemory).
	Memory []MemoryDiff `json:"memory,omitempty"`
}

// Totals are one side's plan in short.
type Totals struct {
	Fits bool `json:"fits"`
	// RolloutsProceed: the side's rolling updates can run to the end
	// (Plan.RolloutsProceed).
	RolloutsProceed bool     `json:"rolloutsProceed"`
	CostPerMonth    *float64 `json:"costPerMonth,omitempty"`
	Unplaced        int32    `json:"unplacedPods"`
}

// PoolDelta is one pool before and after.
type PoolDelta struct {
	Name   string      `json:"name"`
	Before PoolTotals  `json:"before"`
	After  PoolTotals  `json:"after"`
	Models []ModelDiff `json:"models"`
}

// PoolTotals are one pool's figures at one side; a pool the side does not
// declare has Declared false.
type PoolTotals struct {
	Declared    bool   `json:"declared"`
	Pods        int32  `json:"pods"`
	GPUs        int64  `json:"gpus"`
	NodesNeeded *int32 `json:"nodesNeeded"`
	Fits        bool   `json:"fits"`
	// RolloutsProceed: the pool's rolling updates can run to the end.
	RolloutsProceed bool     `json:"rolloutsProceed"`
	CostPerMonth    *float64 `json:"costPerMonth,omitempty"`
}

// ModelDiff is a model whose pods or GPUs on a pool changed: added (none
// before), removed (none after) or resized.
type ModelDiff struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Before    Usage  `json:"before"`
	After     Usage  `json:"after"`
}

// Usage is a model's pods and GPUs on a pool.
type Usage struct {
	Pods int32 `json:"pods"`
	GPUs int64 `json:"gpus"`
}

// Compare says what changes from before to after.
func Compare(before, after *Plan) *Delta {
	d := &Delta{Before: totals(before), After: totals(after), Currency: cmp.Or(after.Currency, before.Currency),
		Memory: CompareMemory(before.Memory, after.Memory)}
	old := map[string]Pool{}
	for _, p := range before.Pools {
		old[p.Name] = p
	}
	seen := map[string]bool{}
	for _, p := range after.Pools {
		seen[p.Name] = true
		o, had := old[p.Name]
		if pd, changed := poolDelta(p.Name, o, had, p, true); changed {
			d.Pools = append(d.Pools, pd)
		}
	}
	for _, p := range before.Pools {
		if !seen[p.Name] {
			if pd, changed := poolDelta(p.Name, p, true, Pool{}, false); changed {
				d.Pools = append(d.Pools, pd)
			}
		}
	}
	return d
}

// Changed reports whether the change moves any pool's demand or cost, the
// pods that fit no pool, or a model's memory fit.
func (d *Delta) Changed() bool {
	return len(d.Pools) > 0 || d.Before.Unplaced != d.After.Unplaced || len(d.Memory) > 0
}

func totals(p *Plan) Totals {
	t := Totals{Fits: p.Fits, RolloutsProceed: p.RolloutsProceed, CostPerMonth: p.CostPerMonth}
	for _, g := range p.Unplaced {
		t.Unplaced += g.Pods
	}
	return t
}

func poolTotals(p Pool, declared bool) PoolTotals {
	if !declared {
		return PoolTotals{Fits: true, RolloutsProceed: true}
	}
	return PoolTotals{Declared: true, Pods: p.Pods, GPUs: p.GPUsRequested, NodesNeeded: p.NodesNeeded, Fits: p.Fits, RolloutsProceed: p.Rollout.Proceeds, CostPerMonth: p.CostPerMonth}
}

func poolDelta(name string, before Pool, hadBefore bool, after Pool, hasAfter bool) (PoolDelta, bool) {
	pd := PoolDelta{Name: name, Before: poolTotals(before, hadBefore), After: poolTotals(after, hasAfter), Models: modelDiffs(before.Models, after.Models)}
	changed := len(pd.Models) > 0 || hadBefore != hasAfter || !sameInt(pd.Before.NodesNeeded, pd.After.NodesNeeded) ||
		!sameFloat(pd.Before.CostPerMonth, pd.After.CostPerMonth) || pd.Before.Fits != pd.After.Fits || pd.Before.RolloutsProceed != pd.After.RolloutsProceed
	return pd, changed
}

func modelDiffs(before, after []Model) []ModelDiff {
	type key = types.NamespacedName
	use := map[key]*ModelDiff{}
	at := func(m Model) *ModelDiff {
		k := key{Namespace: m.Namespace, Name: m.Name}
		if use[k] == nil {
			use[k] = &ModelDiff{Namespace: m.Namespace, Name: m.Name}
		}
		return use[k]
	}
	for _, m := range before {
		at(m).Before = Usage{Pods: m.Pods, GPUs: m.GPUs}
	}
	for _, m := range after {
		at(m).After = Usage{Pods: m.Pods, GPUs: m.GPUs}
	}
	out := []ModelDiff{}
	for _, k := range slices.SortedFunc(maps.Keys(use), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	}) {
		if m := use[k]; m.Before != m.After {
			out = append(out, *m)
		}
	}
	return out
}

func sameInt(a, b *int32) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func sameFloat(a, b *float64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
