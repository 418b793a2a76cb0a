package plan

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/airunway-render/airunway-render/api/hub"
)

// A floating pod selects no pool: its required node labels contain no
// pool's selector (a KubeRay head or a Dynamo frontend rendered for a
// cluster without a CPU pool has none at all). The scheduler puts such a
// pod on any node that carries its labels, whose taints it tolerates and
// that has room for its requests, so the plan does the same, on the pools
// that surely qualify: those whose selector holds the pod's labels (every
// pool, for a pod without labels). The scheduler's default scoring picks
// among them by free cpu and memory, which a plan of whole pools cannot
// follow; the plan takes them in a fixed order instead (preference), so
// that the same files give the same plan.

// placeFloating plans the floating groups, the largest pods first (as
// pack does): each on the pools that take it, in order of preference, as
// many pods on each as its nodes still hold beside the pods already
// planned there. It adds them to the ledger's pools and returns them, one
// entry per pool, and the pods no pool takes, with the reason and what to
// add.
//
// The fixed groups are in their pools' loads already; all lists them too,
// in their place.
func (l *ledger) placeFloating(all bool) (placed, stranded []Group) {
	groups := l.floating
	if all {
		groups = slices.Concat(l.fixed, l.floating)
	}
	groups = slices.SortedFunc(slices.Values(groups), func(a, b entry) int { return cmp.Or(largerFirst(a.size, b.size), cmp.Compare(a.seq, b.seq)) })
	for _, e := range groups {
		if e.fixed {
			placed = append(placed, placedOn(&l.caps.NodePools[e.takers[0]], e))
			continue
		}
		why := e.why // a copy: what full adds stays with this placement
		left, surge := e.Pods, e.surge
		for _, i := range e.takers {
			np := &l.caps.NodePools[i]
			n := room(np, l.shapes[i], &l.pools[i], e.ones[i], left)
			if n < left {
				why.full(np)
			}
			if n == 0 {
				continue
			}
			// The rollout's extra pods go with the first pods placed.
			part := placedOn(np, e)
			part.Pods, part.surge, surge = n, surge, 0
			l.pools[i].add(part, e.ones[i])
			placed = append(placed, part)
			if left -= n; left == 0 {
				break
			}
		}
		if left > 0 {
			g := e.Group
			g.Pods, g.surge = left, surge
			g.Reason = why.reason(g, l.gpus)
			stranded = append(stranded, g)
		}
	}
	l.floating = nil // placed
	return placed, stranded
}

// placedOn is a floating group planned on pool np: all of it, for a
// fixed group; the caller sets how many pods of the others.
func placedOn(np *hub.NodePool, e entry) Group {
	part := e.Group
	part.Pool, part.CPUOnGPUPool = np.Name, np.GPU != nil && e.size.gpus == 0
	return part
}

// refusals say why pools do not take a floating group's pods, and
// collect what would change that: the taints it does not tolerate, the
// pools without room.
type refusals struct {
	lines, taints, fullPools []string
}

func (r *refusals) refuse(np *hub.NodePool, why string, taint *corev1.Taint) {
	r.lines = append(r.lines, fmt.Sprintf("pool %q %s", np.Name, why))
	if taint != nil && !slices.Contains(r.taints, taint.ToString()) {
		r.taints = append(r.taints, taint.ToString())
	}
}

func (r *refusals) full(np *hub.NodePool) {
	r.lines = append(r.lines, fmt.Sprintf("pool %q has no room for more on its %s", np.Name, nodeCount(np)))
	r.fullPools = append(r.fullPools, fmt.Sprintf("%q", np.Name))
}

// reason is why the group's pods stay unplaced, and what would place
// them: a pool in the capability file that takes them, a toleration of
// the taints that keep them off the pools there are, more nodes.
func (r *refusals) reason(g Group, gpus []corev1.ResourceName) string {
	what := "no node selector"
	if len(g.selector) > 0 {
		what = "node labels " + nodeLabels(g.selector)
	}
	add := "add a pool without GPUs that takes it to the capability file (`spec.nodePools`)"
	switch {
	case len(g.devices) > 0:
		add = fmt.Sprintf("add a pool whose `gpu.deviceClassName` is %q to the capability file (`spec.nodePools`)", g.devices[0].class)
	case demand(g, gpus).gpus > 0:
		add = "add a pool with the GPUs it requests to the capability file (`spec.nodePools`)"
	}
	if len(r.taints) > 0 {
		add += ", or a toleration of " + quoted(r.taints) + " to its pod template (`spec.overrides`)"
	}
	if len(r.fullPools) > 0 {
		add += ", or more `nodes` to pool " + strings.Join(r.fullPools, " or ")
	}
	return fmt.Sprintf("it selects no pool (%s), and none takes it: %s; %s", what, strings.Join(r.lines, "; "), add)
}

func quoted(list []string) string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(out, " and ")
}

// gpuResources are the resource names that count as GPUs: every pool's,
// and nvidia.com/gpu; isGPU adds any other vendor's `<vendor>/gpu`.
func gpuResources(pools []hub.NodePool) []corev1.ResourceName {
	out := []corev1.ResourceName{hub.DefaultGPUResource}
	for i := range pools {
		if r := corev1.ResourceName(pools[i].GPUResource()); r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func isGPU(r corev1.ResourceName, gpus []corev1.ResourceName) bool {
	return slices.Contains(gpus, r) || strings.HasSuffix(string(r), "/gpu")
}

// demand is one pod of the group before it has a pool: its GPUs of every
// GPU resource and every device it claims, cpu and memory. A KAITO
// preset's pod takes a whole node, however many GPUs that is: more than
// any request; so does a claim of every device of a node (`All`).
func demand(g Group, gpus []corev1.ResourceName) pod {
	p := pod{cpu: g.requests.Cpu().MilliValue(), memory: g.requests.Memory().Value()}
	for r, q := range g.requests {
		if isGPU(r, gpus) {
			p.gpus += q.Value()
		}
	}
	all := false
	for _, c := range g.devices {
		p.gpus += c.count
		all = all || c.all
	}
	if g.whole || all {
		p.gpus = math.MaxInt32
	}
	return p
}

func largerFirst(a, b pod) int {
	return cmp.Or(cmp.Compare(b.gpus, a.gpus), cmp.Compare(b.cpu, a.cpu), cmp.Compare(b.memory, a.memory))
}

// takers are the pools that may take the group's pods, in order of
// preference, and why the others may not.
func takers(g Group, pools []hub.NodePool, gpus []corev1.ResourceName) ([]*hub.NodePool, *refusals) {
	var out []*hub.NodePool
	why := &refusals{}
	for i := range pools {
		if reason, taint := refuses(g, &pools[i], gpus); reason != "" {
			why.refuse(&pools[i], reason, taint)
			continue
		}
		out = append(out, &pools[i])
	}
	slices.SortStableFunc(out, func(a, b *hub.NodePool) int { return preference(g, a, b) })
	return out, why
}

// refuses says why a pool's nodes can never take one of the group's pods,
// "" when they can: what the scheduler's filters (node labels, taints,
// resources) would find on every node of the pool. taint is the taint
// that keeps the pods off a pool that would otherwise take them.
func refuses(g Group, np *hub.NodePool, gpus []corev1.ResourceName) (why string, taint *corev1.Taint) {
	if !labels.SelectorFromSet(g.selector).Matches(labels.Set(np.Selector)) {
		return fmt.Sprintf("is not known to carry its node labels %s (the pool's `selector` is %s)", nodeLabels(g.selector), nodeLabels(np.Selector)), nil
	}
	for _, r := range slices.Sorted(maps.Keys(g.requests)) {
		if q := g.requests[r]; isGPU(r, gpus) && q.Value() > 0 && (np.GPUResource() != string(r) || np.ClaimsDevices()) {
			return "has no " + string(r), nil
		}
	}
	if c, ok := undeclaredClass(g, np); ok {
		return fmt.Sprintf("has no devices of DeviceClass %q (`gpu.deviceClassName`), which its resource claim %q claims", c.class, c.claim), nil
	}
	switch {
	case g.whole && np.GPU == nil:
		return "has no GPUs", nil
	case g.whole && np.ClaimsDevices():
		// KAITO gives a preset's pod its node's GPUs as the extended
		// resource, which a DRA pool's nodes do not have.
		return "has no " + hub.DefaultGPUResource + " (its GPUs are DRA devices), which KAITO gives its pods", nil
	}
	s := nodeShape(np)
	if s.known && !s.holds(pod{gpus: s.gpus, cpu: s.cpu, memory: s.memory}, s.podOf(g)) {
		return "has nodes smaller than one pod (its `gpu.perNode` and `capacity`)", nil
	}
	if taint, ok := untolerated(g, np); ok {
		return fmt.Sprintf("has taint %q, which it does not tolerate", taint.ToString()), &taint
	}
	return "", nil
}

// preference orders the pools that take a floating pod: a pool without
// GPUs first (where the renderer puts CPU-only pods, and nodes cost
// least), then one without a PreferNoSchedule taint the pod does not
// tolerate (the scheduler looks elsewhere first too), then the cheapest
// node (`pricePerNodeHour`, unpriced last), then the fewest GPUs per node
// (of unknown size last); the capability file's order breaks ties.
func preference(g Group, a, b *hub.NodePool) int {
	return cmp.Or(
		cmp.Compare(rank(a.GPU != nil), rank(b.GPU != nil)),
		cmp.Compare(rank(avoided(g, a)), rank(avoided(g, b))),
		cmp.Compare(price(a), price(b)),
		cmp.Compare(gpusPerNode(a), gpusPerNode(b)),
	)
}

func rank(worse bool) int {
	if worse {
		return 1
	}
	return 0
}

// avoided: the pool has a PreferNoSchedule taint the pods do not tolerate.
func avoided(g Group, np *hub.NodePool) bool {
	for _, t := range np.Taints {
		taint := corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		if taint.Effect == corev1.TaintEffectPreferNoSchedule && !corev1helpers.TolerationsTolerateTaint(klog.Background(), g.tols, &taint, false) {
			return true
		}
	}
	return false
}

func price(np *hub.NodePool) float64 {
	if np.PricePerNodeHour == nil {
		return math.Inf(1)
	}
	return np.PricePerNodeHour.Amount
}

func gpusPerNode(np *hub.NodePool) int64 {
	switch {
	case np.GPU == nil:
		return 0
	case np.GPU.PerNode == 0:
		return math.MaxInt64
	}
	return int64(np.GPU.PerNode)
}

// room is how many of n more pods one the pool's nodes hold beside the
// pods planned there (load), every pod still finding a node: all n when
// the pool's size, or its nodes', is unknown (the plan cannot tell, as for
// the pool's own pods).
func room(np *hub.NodePool, s shape, load *poolLoad, one pod, n int32) int32 {
	if unbounded(np, s) {
		return n
	}
	_, most, _ := np.Nodes.Range()
	_, before := s.pack(load.steady, most)
	// More pods of one kind never need fewer nodes: the first count that
	// leaves a pod without a node bounds the answer.
	return int32(sort.Search(int(n), func(i int) bool {
		_, after := s.pack(load.steady.with(podSet{{one, int32(i + 1)}}), most)
		return after > before
	}))
}

// unbounded: the pool's size, or its nodes', is not known, so it takes
// any number of pods (room), and a floating group it is first to take
// goes there whole (a fixed group).
func unbounded(np *hub.NodePool, s shape) bool {
	_, _, sized := np.Nodes.Range()
	return !s.known || !sized
}

func nodeCount(np *hub.NodePool) string {
	if _, most, _ := np.Nodes.Range(); most != 1 {
		return fmt.Sprintf("%d nodes", most)
	}
	return "1 node"
}
