package plan

import (
	"cmp"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// FleetDelta is what a change does to a fleet's assignment: the models
// whose cluster changed (moved, added, removed; a model that stays where
// it was is left out), and each cluster's GPUs and cost before and after.
type FleetDelta struct {
	Models    []ModelMove    `json:"models"`
	Clusters  []ClusterDelta `json:"clusters"`
	Currency  string         `json:"currency,omitempty"`
	Moved     int            `json:"moved"`
	Added     int            `json:"added"`
	Removed   int            `json:"removed"`
	AfterFits bool           `json:"afterFits"`
}

// ModelMove is one model's cluster before and after ("" when it was not
// there, or fit nowhere).
type ModelMove struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Before    string `json:"before"`
	After     string `json:"after"`
	// Change is "moved", "added", "removed", or "fits nowhere".
	Change string `json:"change"`
	// Fits: all its pods fit in After.
	Fits bool `json:"fits"`
	// Alternatives: where a model that no longer renders on its cluster
	// would render and fit (FleetModel.Alternatives).
	Alternatives []string `json:"alternatives,omitempty"`
}

// ClusterDelta is one cluster before and after.
type ClusterDelta struct {
	Name   string        `json:"name"`
	Before ClusterTotals `json:"before"`
	After  ClusterTotals `json:"after"`
}

// ClusterTotals are a cluster's GPUs requested, nodes-in-use cost and fit.
type ClusterTotals struct {
	GPUs         int64    `json:"gpus"`
	CostPerMonth *float64 `json:"costPerMonth,omitempty"`
	Fits         bool     `json:"fits"`
	// RenderFails: the cluster's models whose render fails there, so its
	// build fails (FleetCluster.RenderFails).
	RenderFails []string `json:"renderFails,omitempty"`
}

// CompareFleets compares two fleets' assignments; before may be empty.
func CompareFleets(before, after *Fleet) *FleetDelta {
	d := &FleetDelta{AfterFits: after.Fits}
	was := map[types.NamespacedName]FleetModel{}
	for _, m := range before.Models {
		was[types.NamespacedName{Namespace: m.Namespace, Name: m.Name}] = m
	}
	is := map[types.NamespacedName]bool{}
	for _, m := range after.Models {
		key := types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
		is[key] = true
		old, had := was[key]
		move := ModelMove{Namespace: m.Namespace, Name: m.Name, Before: old.Cluster, After: m.Cluster, Fits: m.Fits, Alternatives: m.Alternatives}
		switch {
		case !m.Fits && !m.Kept:
			move.Change, move.After = "fits nowhere", ""
		case !m.Fits && old.Cluster == m.Cluster:
			move.Change = "no longer fits"
		case !had:
			move.Change = "added"
			d.Added++
		case old.Cluster != m.Cluster:
			move.Change = "moved"
			d.Moved++
		default:
			continue
		}
		d.Models = append(d.Models, move)
	}
	for _, m := range before.Models {
		if !is[types.NamespacedName{Namespace: m.Namespace, Name: m.Name}] {
			d.Models = append(d.Models, ModelMove{Namespace: m.Namespace, Name: m.Name, Before: m.Cluster, Change: "removed"})
			d.Removed++
		}
	}
	slices.SortFunc(d.Models, func(a, b ModelMove) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	d.Clusters, d.Currency = clusterDeltas(before, after)
	return d
}

func clusterDeltas(before, after *Fleet) ([]ClusterDelta, string) {
	byName := map[string]*ClusterDelta{}
	currency := ""
	add := func(f *Fleet, set func(*ClusterDelta, ClusterTotals)) {
		for _, c := range f.Clusters {
			if byName[c.Name] == nil {
				byName[c.Name] = &ClusterDelta{Name: c.Name, Before: ClusterTotals{Fits: true}, After: ClusterTotals{Fits: true}}
			}
			t := ClusterTotals{CostPerMonth: c.Plan.CostPerMonth, Fits: c.Fits, RenderFails: c.RenderFails}
			for _, p := range c.Plan.Pools {
				t.GPUs += p.GPUsRequested
			}
			if c.Plan.Currency != "" {
				currency = c.Plan.Currency
			}
			set(byName[c.Name], t)
		}
	}
	add(before, func(d *ClusterDelta, t ClusterTotals) { d.Before = t })
	add(after, func(d *ClusterDelta, t ClusterTotals) { d.After = t })
	var out []ClusterDelta
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return out, currency
}
