package plan

import (
	"cmp"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

// pod is what one pod takes of a node: GPUs, milli-CPU and bytes of
// memory.
type pod struct{ gpus, cpu, memory int64 }

// shape is one node of a pool. A zero cpu or memory is not counted: the
// capability file did not give the node's.
type shape struct {
	known bool
	// gpuResource is the extended resource the GPUs are requested as;
	// deviceClass instead, when they are DRA devices of this class, claimed
	// (the nodes of such a pool have no GPU extended resource).
	gpuResource corev1.ResourceName
	deviceClass string
	gpus        int64
	cpu, memory int64
}

// nodeShape: a GPU pool's nodes are known by `gpu.perNode`; a CPU pool's
// only by `capacity`.
func nodeShape(np *hub.NodePool) shape {
	s := shape{gpuResource: corev1.ResourceName(np.GPUResource())}
	if np.ClaimsDevices() {
		s.gpuResource, s.deviceClass = "", np.GPU.DeviceClassName
	}
	if c := np.Capacity; c != nil {
		s.cpu = quantity(c.CPU, true)
		s.memory = quantity(c.Memory, false)
	}
	if np.GPU != nil {
		s.gpus = int64(np.GPU.PerNode)
		s.known = s.gpus > 0
	} else {
		s.known = s.cpu > 0 || s.memory > 0
	}
	return s
}

// quantity is a capacity of the resolved capability file, whose
// quantities capabilities.Resolve checked: within int64 milli-units, so
// Value and MilliValue are exact.
func quantity(v string, milli bool) int64 {
	q, err := hub.ParseQuantity(v)
	if v == "" || err != nil {
		return 0
	}
	if milli {
		return q.MilliValue()
	}
	return q.Value()
}

// podOf is one pod of a group on this pool's nodes: the GPUs it requests
// as the pool's extended resource, or claims of the pool's DeviceClass; a
// whole-node pod takes every GPU of its node.
func (s shape) podOf(g Group) pod {
	p := pod{cpu: g.requests.Cpu().MilliValue(), memory: g.requests.Memory().Value()}
	if s.gpuResource != "" {
		q := g.requests[s.gpuResource]
		p.gpus = q.Value()
	}
	p.gpus += s.claimedGPUs(g)
	if g.whole {
		p.gpus = s.gpus
	}
	return p
}

// podCount is n identical pods.
type podCount struct {
	pod
	n int32
}

// podSet is a multiset of pods, largest first (the order pack places
// them in): a pool of a fleet holds thousands of pods of a handful of
// kinds, so pods are counted by kind, not listed.
type podSet []podCount

// add counts n more pods of one kind.
func (set podSet) add(one pod, n int32) podSet {
	if n <= 0 {
		return set
	}
	i, found := slices.BinarySearchFunc(set, one, func(c podCount, p pod) int { return largerFirst(c.pod, p) })
	if found {
		set[i].n += n
		return set
	}
	return slices.Insert(set, i, podCount{one, n})
}

// with is the union of two multisets, neither changed.
func (set podSet) with(more podSet) podSet {
	out := slices.Clip(slices.Clone(set))
	for _, c := range more {
		out = out.add(c.pod, c.n)
	}
	return out
}

// nodeState is how many open nodes have the same room left.
type nodeState struct {
	free pod
	n    int32
}

// pack puts the pods largest first, each on the fullest node that still
// holds it (best fit decreasing: what kube-scheduler does with GPUs scored
// MostAllocated, docs/plan.md), opening a node when none does, at most
// limit nodes (no bound when negative). It returns the nodes used and the
// pods that found no node.
//
// Nodes with the same room left are interchangeable, so the open nodes are
// counted by room (states, fullest first) rather than listed, and a kind
// of pods is placed in bulk: the fullest node that holds one pod of it
// stays the fullest that holds the next (it only gets fuller, and no node
// fuller than it held the pod), so it takes as many in a row as fit.
// "Fullest" compares the cpu and memory requested even where the pool's
// nodes do not say how much they have (a GPU pool without `capacity`), as
// placing pod by pod did. The
// cost is the kinds of pods times the distinct rooms, not the pods times
// the nodes; TestPackMatchesPodByPod holds it to placing pod by pod.
func (s shape) pack(set podSet, limit int32) (nodes, pending int32) {
	nodes, pending, _ = s.packed(set, limit)
	return nodes, pending
}

// packed is pack, and the room left on the open nodes.
func (s shape) packed(set podSet, limit int32) (nodes, pending int32, states []nodeState) {
	whole := pod{gpus: s.gpus, cpu: s.cpu, memory: s.memory}
	states = make([]nodeState, 0, 16) // fullest first
	for _, k := range set {           // largest first
		k.pod = s.told(k.pod)
		if !s.holds(whole, k.pod) {
			pending += k.n // larger than a node: no node ever takes it
			continue
		}
		for left := k.n; left > 0; {
			i := slices.IndexFunc(states, func(st nodeState) bool { return st.n > 0 && s.holds(st.free, k.pod) })
			if i < 0 {
				if limit >= 0 && nodes >= limit {
					pending += left
					break
				}
				nodes++
				states = addState(states, whole, 1)
				continue
			}
			st := states[i]
			each := s.fits(st.free, k.pod) // pods one node of st takes in a row
			if each < 0 || left <= each {
				// One node takes them all (each < 0: the pods take nothing
				// the pool's nodes are known by).
				states[i].n--
				states = addState(states, st.free.minus(k.pod, left), 1)
				break
			}
			filled := min(st.n, left/each)
			states[i].n -= filled
			states = addState(states, st.free.minus(k.pod, each), filled)
			left -= filled * each
		}
	}
	return nodes, pending, states
}

// told is p as far as it tells nodes apart: a request of a resource the
// pool's nodes are not known by is never checked, and where it would come
// last in the order of fullness (memory; cpu when memory too is unknown)
// it only breaks ties between nodes no pod can tell apart, so it is
// dropped. Nodes then differ only in what is counted, and a pool of GPU
// nodes without `capacity` has at most as many rooms as GPUs per node.
// Unknown cpu before known memory is kept: it orders nodes whose memory
// differs, as placing pod by pod did.
func (s shape) told(p pod) pod {
	if s.memory == 0 {
		p.memory = 0
		if s.cpu == 0 {
			p.cpu = 0
		}
	}
	return p
}

// fits is how many pods p a node with room free takes, -1 when any
// number (p takes nothing the pool's nodes are known by).
func (s shape) fits(free, p pod) int32 {
	each := int64(-1)
	for _, d := range [][3]int64{{free.gpus, p.gpus, 1}, {free.cpu, p.cpu, s.cpu}, {free.memory, p.memory, s.memory}} {
		if d[2] != 0 && d[1] > 0 && (each < 0 || d[0]/d[1] < each) {
			each = d[0] / d[1]
		}
	}
	return int32(min(each, math.MaxInt32))
}

// minus is the room left after n pods p.
func (free pod) minus(p pod, n int32) pod {
	return pod{gpus: free.gpus - p.gpus*int64(n), cpu: free.cpu - p.cpu*int64(n), memory: free.memory - p.memory*int64(n)}
}

// addState counts n more nodes with room free, keeping the states fullest
// first.
func addState(states []nodeState, free pod, n int32) []nodeState {
	i, found := slices.BinarySearchFunc(states, free, func(st nodeState, f pod) int {
		return cmp.Or(cmp.Compare(st.free.gpus, f.gpus), cmp.Compare(st.free.cpu, f.cpu), cmp.Compare(st.free.memory, f.memory))
	})
	if found {
		states[i].n += n
		return states
	}
	return slices.Insert(states, i, nodeState{free, n})
}

// holds: the node's free room takes the pod; cpu and memory count only
// when the pool's node size gives them (a CPU pool's nodes have no GPUs).
func (s shape) holds(free, p pod) bool {
	return p.gpus <= free.gpus &&
		(s.cpu == 0 || p.cpu <= free.cpu) &&
		(s.memory == 0 || p.memory <= free.memory)
}
