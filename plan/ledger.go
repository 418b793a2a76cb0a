package plan

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
)

// A ledger is one cluster's pod groups as the plan sorts them: each
// group's pool (or none, floating; or none that can take it, unplaced) and
// what one of its pods takes there, decided once per group, and each
// pool's pods counted by kind. A plan of the ledger (plan) then only places
// the floating pods and packs each pool's counted pods.
//
// Compute sorts a render's groups into a fresh ledger. A fleet keeps one
// ledger per cluster and sorts each model's groups once per cluster: to
// weigh a model it plans a copy of the cluster's ledger with the model's
// entries added (with), which costs the pools and the floating groups, not
// every pod group of every model already there.
type ledger struct {
	caps     *capabilities.Resolved
	gpus     []corev1.ResourceName
	shapes   []shape    // of each pool of caps.NodePools
	pools    []poolLoad // of each pool of caps.NodePools
	floating []entry
	// fixed are the floating groups whose pods all go to a pool whose
	// size is not known (placed as they are added, in its load).
	fixed    []entry
	unplaced []Group
	seq      int // floating groups added so far
}

// entry is a group as a ledger sorted it.
type entry struct {
	Group
	// pool is the index of the pool the group selects; floating or
	// unplaced when it has none.
	pool int
	// one is one pod on its pool.
	one pod
	// A floating group's size before it has a pool (demand), the pools
	// that take it in order of preference, why the others do not, and
	// one of its pods on each pool (by index).
	size   pod
	takers []int
	why    refusals
	ones   []pod
	// fixed: the first pool that takes it has no known size, so it takes
	// every pod, whatever the other groups (room): the group is placed
	// when it is added, not at every plan of the ledger.
	fixed bool
	// seq orders the floating groups as they were added, which breaks
	// ties of size when they are placed.
	seq int
}

const (
	floating = -1
	unplaced = -2
)

// poolLoad is what a pool holds: its groups (the plan's Models list
// them), their pods and GPUs, and the pods counted by kind, before and
// during rollouts.
type poolLoad struct {
	// groups are listed only where listed: a fleet weighs models with
	// ledgers that do not list them, so that a weighing copies no list.
	listed                   bool
	groups                   []Group
	pods, rolloutPods        int32
	gpus, rolloutGPUs        int64
	steady, surge, mustSurge podSet
}

// newLedger is an empty ledger of the cluster; listed: its pools list
// their groups, as a plan that shows the pools' models needs.
func newLedger(caps *capabilities.Resolved, listed bool) *ledger {
	l := &ledger{caps: caps, gpus: gpuResources(caps.NodePools), pools: make([]poolLoad, len(caps.NodePools))}
	for i := range caps.NodePools {
		l.shapes = append(l.shapes, nodeShape(&caps.NodePools[i]))
		l.pools[i].listed = listed
	}
	return l
}

// sort decides where the group goes on this cluster: the pool whose
// selector its node labels hold, unless that pool cannot take it (a
// DeviceClass it does not have, GPUs it does not serve, a taint the pods
// do not tolerate); else it floats.
func (l *ledger) sort(g Group) entry {
	pools := l.caps.NodePools
	if g.Reason != "" { // claims the plan cannot count
		return entry{Group: g, pool: unplaced}
	}
	np := selectedPool(g, pools)
	if np == nil {
		e := entry{Group: g, pool: floating, size: demand(g, l.gpus), ones: make([]pod, len(pools))}
		order, why := takers(g, pools, l.gpus)
		e.why = *why
		for i := range pools {
			e.ones[i] = l.shapes[i].podOf(g)
		}
		for _, taker := range order { // in the order of preference
			e.takers = append(e.takers, poolIndex(pools, taker))
		}
		if len(e.takers) > 0 && g.Pods > 0 {
			first := e.takers[0]
			e.fixed = unbounded(&pools[first], l.shapes[first])
		}
		return e
	}
	if c, ok := undeclaredClass(g, np); ok {
		g.Reason = undeclaredReason(np, c, pools)
		return entry{Group: g, pool: unplaced}
	}
	if why := extendedOnDRA(g, np, l.gpus); why != "" {
		g.Reason = "it selects pool " + fmt.Sprintf("%q", np.Name) + " but " + why
		return entry{Group: g, pool: unplaced}
	}
	if taint, ok := untolerated(g, np); ok {
		g.Reason = fmt.Sprintf("it selects pool %q but does not tolerate its taint %q", np.Name, taint.ToString())
		return entry{Group: g, pool: unplaced}
	}
	i := poolIndex(pools, np)
	return entry{Group: g, pool: i, one: l.shapes[i].podOf(g)}
}

func poolIndex(pools []hub.NodePool, np *hub.NodePool) int {
	for i := range pools {
		if &pools[i] == np {
			return i
		}
	}
	return -1
}

// add puts a sorted group in the ledger.
func (l *ledger) add(e entry) {
	switch e.pool {
	case unplaced:
		l.unplaced = append(l.unplaced, e.Group)
	case floating:
		e.seq, l.seq = l.seq, l.seq+1
		if e.fixed {
			l.fixed = append(l.fixed, e)
			l.pools[e.takers[0]].add(placedOn(&l.caps.NodePools[e.takers[0]], e), e.ones[e.takers[0]])
			return
		}
		l.floating = append(l.floating, e)
	default:
		l.pools[e.pool].add(e.Group, e.one)
	}
}

// with is a copy of the ledger with more entries; the ledger is not
// changed.
func (l *ledger) with(entries []entry) *ledger {
	c := l.copy()
	for _, e := range entries {
		c.add(e)
	}
	return c
}

// copy shares nothing that adding to either changes.
func (l *ledger) copy() *ledger {
	c := *l
	c.pools = make([]poolLoad, len(l.pools))
	for i, p := range l.pools {
		c.pools[i] = p.copy()
	}
	c.floating, c.fixed, c.unplaced = slices.Clip(l.floating), slices.Clip(l.fixed), slices.Clip(l.unplaced)
	return &c
}

func (p *poolLoad) add(g Group, one pod) {
	if p.listed {
		p.groups = append(p.groups, g)
	}
	p.pods += g.Pods
	p.gpus += one.gpus * int64(g.Pods)
	p.rolloutPods += g.surge
	p.rolloutGPUs += one.gpus * int64(g.surge)
	p.steady = p.steady.add(one, g.Pods)
	p.surge = p.surge.add(one, g.surge)
	if !g.replaces {
		p.mustSurge = p.mustSurge.add(one, g.surge)
	}
}

func (p poolLoad) copy() poolLoad {
	p.groups = slices.Clip(p.groups)
	p.steady, p.surge, p.mustSurge = slices.Clone(p.steady), slices.Clone(p.surge), slices.Clone(p.mustSurge)
	return p
}

// plan places the floating groups and packs each pool. It uses the
// ledger up (the floating groups go into the pools' loads): plan a copy of
// a ledger that is kept, or one made for the plan (with). full: the pools
// list their models (a listed ledger's) and Floating every floating group
// (a plan that is shown); without, the pools do not, and Floating leaves
// out the fixed groups (a model weighed against a cluster).
func (l *ledger) plan(notes []string, full bool) *Plan {
	p := &Plan{Notes: notes, Unplaced: l.unplaced}
	var stranded []Group
	p.Floating, stranded = l.placeFloating(full)
	p.Unplaced = append(p.Unplaced, stranded...)
	p.Fits = len(p.Unplaced) == 0
	p.RolloutsProceed = true
	var cents int64
	priced := false
	for i := range l.caps.NodePools {
		np := &l.caps.NodePools[i]
		pool := poolPlan(np, l.shapes[i], &l.pools[i], full)
		p.Fits = p.Fits && pool.Fits
		p.RolloutsProceed = p.RolloutsProceed && pool.Rollout.Proceeds
		if pool.CostPerMonth != nil {
			priced, p.Currency = true, np.PricePerNodeHour.Currency
			cents += pool.costCents
		}
		p.Pools = append(p.Pools, pool)
	}
	if priced {
		p.CostPerMonth = money(cents)
	}
	p.costCents = cents
	return p
}
