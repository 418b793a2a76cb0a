package plan

import (
	"cmp"
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

func appendPods(list []pod, one pod, n int32) []pod {
	for range n {
		list = append(list, one)
	}
	return list
}

// pack puts the pods largest first, each on the fullest node that still
// holds it (best fit decreasing: what kube-scheduler does with GPUs scored
// MostAllocated, docs/plan.md), opening a node when none does, at most
// limit nodes (no bound when negative). It returns the nodes used and the
// pods that found no node.
func (s shape) pack(pods []pod, limit int32) (nodes, pending int32) {
	pods = slices.Clone(pods)
	slices.SortStableFunc(pods, func(a, b pod) int {
		return cmp.Or(cmp.Compare(b.gpus, a.gpus), cmp.Compare(b.cpu, a.cpu), cmp.Compare(b.memory, a.memory))
	})
	var free []pod // what each open node has left
	for _, p := range pods {
		if !s.holds(pod{gpus: s.gpus, cpu: s.cpu, memory: s.memory}, p) {
			pending++ // larger than a node: no node ever takes it
			continue
		}
		best := -1
		for i, f := range free {
			if s.holds(f, p) && (best < 0 || s.fuller(f, free[best])) {
				best = i
			}
		}
		switch {
		case best >= 0:
			free[best] = pod{gpus: free[best].gpus - p.gpus, cpu: free[best].cpu - p.cpu, memory: free[best].memory - p.memory}
		case limit >= 0 && int32(len(free)) >= limit:
			pending++
		default:
			free = append(free, pod{gpus: s.gpus - p.gpus, cpu: s.cpu - p.cpu, memory: s.memory - p.memory})
		}
	}
	return int32(len(free)), pending
}

// holds: the node's free room takes the pod; cpu and memory count only
// when the pool's node size gives them (a CPU pool's nodes have no GPUs).
func (s shape) holds(free, p pod) bool {
	return p.gpus <= free.gpus &&
		(s.cpu == 0 || p.cpu <= free.cpu) &&
		(s.memory == 0 || p.memory <= free.memory)
}

// fuller: a has fewer GPUs left than b, then less cpu, then less memory.
func (s shape) fuller(a, b pod) bool {
	return cmp.Or(cmp.Compare(a.gpus, b.gpus), cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.memory, b.memory)) < 0
}
