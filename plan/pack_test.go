package plan

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// packPodByPod is best fit decreasing as the scheduler places pods, one
// at a time over a list of nodes: what pack computed before it counted
// nodes by room, kept as the reference pack is held to.
func (s shape) packPodByPod(set podSet, limit int32) (nodes, pending int32, free []pod) {
	var pods []pod
	for _, c := range set {
		for range c.n {
			pods = append(pods, c.pod)
		}
	}
	slices.SortStableFunc(pods, func(a, b pod) int {
		return cmp.Or(cmp.Compare(b.gpus, a.gpus), cmp.Compare(b.cpu, a.cpu), cmp.Compare(b.memory, a.memory))
	})
	fuller := func(a, b pod) bool {
		return cmp.Or(cmp.Compare(a.gpus, b.gpus), cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.memory, b.memory)) < 0
	}
	for _, p := range pods {
		if !s.holds(pod{gpus: s.gpus, cpu: s.cpu, memory: s.memory}, p) {
			pending++
			continue
		}
		best := -1
		for i, f := range free {
			if s.holds(f, p) && (best < 0 || fuller(f, free[best])) {
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
	return int32(len(free)), pending, free
}

// TestPackMatchesPodByPod: counting nodes by room and placing a kind of
// pods in bulk gives what placing every pod on the fullest node that
// holds it gives, over random pools (GPU nodes with and without a known
// cpu and memory, CPU nodes) and random pods, with and without a bound.
func TestPackMatchesPodByPod(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 2026))
	shapes := []shape{
		{known: true, gpus: 8},
		{known: true, gpus: 1},
		{known: true, gpus: 4, cpu: 32000, memory: 256 << 30},
		{known: true, gpus: 8, cpu: 96000},
		{known: true, cpu: 16000, memory: 64 << 30},
		{known: true, memory: 32 << 30},
	}
	for i := range 100000 {
		s := shapes[i%len(shapes)]
		var set podSet
		for range 1 + r.IntN(6) {
			p := pod{cpu: int64(r.IntN(20)) * 500, memory: int64(r.IntN(40)) << 30}
			if s.gpus > 0 && r.IntN(4) > 0 {
				p.gpus = int64(r.IntN(int(s.gpus) + 2)) // now and then larger than a node
			}
			set = set.add(p, int32(r.IntN(40)))
		}
		limit := int32(-1)
		if r.IntN(2) == 0 {
			limit = int32(r.IntN(30))
		}
		gotNodes, gotPending, states := s.packed(set, limit)
		wantNodes, wantPending, free := s.packPodByPod(set, limit)
		if gotNodes != wantNodes || gotPending != wantPending {
			t.Fatalf("shape %+v, pods %+v, limit %d: pack = %d nodes, %d pending; pod by pod = %d nodes, %d pending",
				s, set, limit, gotNodes, gotPending, wantNodes, wantPending)
		}
		// Not only the counts: every node is left with the same room.
		var rooms []pod
		for _, st := range states {
			for range st.n {
				rooms = append(rooms, st.free)
			}
		}
		byRoom := func(a, b pod) int {
			return cmp.Or(cmp.Compare(a.gpus, b.gpus), cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.memory, b.memory))
		}
		for i := range free {
			free[i] = s.told(free[i]) // what the pool's nodes are known by
		}
		slices.SortFunc(rooms, byRoom)
		slices.SortFunc(free, byRoom)
		if !slices.Equal(rooms, free) {
			t.Fatalf("shape %+v, pods %+v, limit %d: the nodes' rooms differ:\n%v\n%v", s, set, limit, rooms, free)
		}
	}
}
