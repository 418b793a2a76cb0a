package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// workload is one component's per-pod request.
type workload struct {
	component   string
	field       string // where the request is written, for messages
	gpus        int32
	replicas    int32
	gpuResource string
	memory, cpu string
}

// workloads lists what must be placed: the model server, or its prefill
// and decode components.
func workloads(s *hub.ModelDeploymentSpec) []workload {
	if s.Mode() == hub.ModeDisaggregated && s.Scaling != nil {
		var out []workload
		for _, c := range []struct {
			name string
			spec *hub.ComponentScalingSpec
		}{{providers.ComponentPrefill, s.Scaling.Prefill}, {providers.ComponentDecode, s.Scaling.Decode}} {
			if c.spec == nil {
				continue
			}
			out = append(out, workload{component: c.name, field: "spec.scaling." + c.name, gpus: c.spec.GPUCount(), replicas: c.spec.ReplicaCount(), gpuResource: gpuResource(c.spec.GPU), memory: c.spec.Memory})
		}
		return out
	}
	w := workload{component: providers.ComponentMain, field: "spec.resources", gpus: s.GPUCount(), replicas: s.Replicas(), gpuResource: hub.DefaultGPUResource}
	if r := s.Resources; r != nil {
		w.gpuResource, w.memory, w.cpu = gpuResource(r.GPU), r.Memory, r.CPU
	}
	return []workload{w}
}

func gpuResource(g *hub.GPUSpec) string {
	if g == nil || g.Type == "" {
		return hub.DefaultGPUResource
	}
	return g.Type
}

// place puts every component on the node pool that fits it best: the
// fewest GPUs per node that still hold one pod, then the pool name. A
// capability file without pools places nothing. It returns nil when a
// component fits no pool (the error lists every pool and why).
func place(md *hub.ModelDeployment, caps *capabilities.Resolved, p providers.Provider, l *diag.List) *providers.Placement {
	pl := providers.NewPlacement(md)
	pl.Requests = map[string]corev1.ResourceList{}
	if len(caps.NodePools) == 0 {
		for _, w := range workloads(&md.Spec) {
			pl.Requests[w.component] = DefaultRequests(w.gpus, nil)
		}
		return pl
	}
	var names, reasons []string
	for _, w := range workloads(&md.Spec) {
		nodes := int32(1)
		if s, ok := p.(providers.NodeSpanner); ok {
			nodes = max(1, s.NodesPerPod(md, w.component))
		}
		pool, reason := choosePool(md, caps.NodePools, w, nodes, l)
		if pool == nil {
			return nil
		}
		pl.Set(w.component, pool)
		pl.Requests[w.component] = DefaultRequests(w.gpus, pool)
		if w.component == providers.ComponentMain {
			names = append(names, pool.Name)
		} else {
			names = append(names, w.component+"="+pool.Name)
		}
		reasons = append(reasons, reason)
	}
	if cpu := cpuPools(caps.NodePools); len(cpu) > 0 {
		pl.SetCPU(cpu[0])
	}
	pl.Annotation, pl.Reason = strings.Join(names, ","), strings.Join(reasons, "; ")
	return pl
}

// choosePool evaluates every pool for one workload.
func choosePool(md *hub.ModelDeployment, pools []hub.NodePool, w workload, nodes int32, l *diag.List) (*hub.NodePool, string) {
	// Every pod of a multinode service gets the service's GPUs: nodes
	// multiplies the pods, not the GPUs a node must hold.
	perNode := w.gpus
	haveCPUPools := len(cpuPools(pools)) > 0
	var fits []*hub.NodePool
	var rejected []string
	for i := range pools {
		pool := &pools[i]
		if why := rejects(md, pool, w, perNode, haveCPUPools); why != "" {
			rejected = append(rejected, fmt.Sprintf("pool %q %s", pool.Name, why))
			continue
		}
		fits = append(fits, pool)
	}
	request := describe(w, perNode, nodes)
	if len(fits) == 0 {
		l.Errorf(w.field, "no node pool fits %s: %s; add a pool that fits to the capability file, or change the request", request, strings.Join(rejected, "; "))
		return nil, ""
	}
	slices.SortStableFunc(fits, func(a, b *hub.NodePool) int {
		if c := compareSize(a, b); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	best := fits[0]
	reason := fmt.Sprintf("%s fits pool %s", request, best.Name)
	if len(fits) > 1 {
		reason += fmt.Sprintf(", the smallest of %d fitting pools", len(fits))
	}
	switch {
	case w.gpus > 0 && best.ClaimsDevices():
		reason += fmt.Sprintf(" (claimed as DRA devices of DeviceClass %s)", best.GPU.DeviceClassName)
	case w.gpus > 0 && best.HasDevices():
		reason += fmt.Sprintf(" (DRA devices of DeviceClass %s, served as the extended resource)", best.GPU.DeviceClassName)
	}
	if w.gpus == 0 && best.GPU != nil {
		l.PoolWarnf(diag.CPUOnGPUPool, best.Name, w.field, "this CPU-only workload is placed on GPU pool %q because the capability file declares no pool without GPUs", best.Name)
	}
	warnIdle(w, best, perNode, nodes, l)
	return best, reason
}

// warnIdle warns when the workload's pods, packed onto as few of the
// pool's nodes as hold them, leave more than half of those nodes' GPUs
// idle. Replicas share a node when they fit: four 1-GPU replicas use half
// of one 8-GPU node, and that is no waste worth a warning; one such pod is.
// Other models may fill the rest; only the plan (all models) can tell.
func warnIdle(w workload, pool *hub.NodePool, perNode, nodesPerPod int32, l *diag.List) {
	if pool.GPU == nil || pool.GPU.PerNode <= 0 || perNode <= 0 || w.replicas <= 0 {
		return
	}
	// A multinode replica is nodesPerPod pods of perNode GPUs each.
	parts := w.replicas * nodesPerPod
	perNodeParts := pool.GPU.PerNode / perNode
	nodes := (parts + perNodeParts - 1) / perNodeParts
	used, total := parts*perNode, nodes*pool.GPU.PerNode
	if 2*used >= total {
		return
	}
	pods, verb, nodeWord := "pods", "use", "nodes"
	if w.replicas == 1 {
		pods, verb = "pod", "uses"
	}
	if nodes == 1 {
		nodeWord = "node"
	}
	l.PoolWarnf(diag.IdleGPUs, pool.Name, w.field, "%d %s of %d GPUs %s %d of the %d GPUs of the %d %s of pool %q they need: more than half stays idle (no pool with fewer GPUs per node fits; more replicas would fill them, or other models may share the %s)",
		w.replicas, pods, w.gpus, verb, used, total, nodes, nodeWord, pool.Name, nodeWord)
}

// rejects says why a pool cannot take a workload, "" when it can.
func rejects(md *hub.ModelDeployment, pool *hub.NodePool, w workload, perNode int32, haveCPUPools bool) string {
	for _, k := range slices.Sorted(maps.Keys(md.Spec.NodeSelector)) {
		if got, ok := pool.Selector[k]; ok && got != md.Spec.NodeSelector[k] {
			want := md.Spec.NodeSelector[k]
			return fmt.Sprintf("selects %s=%s, but `spec.nodeSelector` asks for %s=%s", k, got, k, want)
		}
	}
	switch {
	case w.gpus == 0 && pool.GPU != nil && haveCPUPools:
		return "has GPUs, and CPU-only workloads go to a pool without GPUs"
	case w.gpus > 0 && pool.GPU == nil:
		return "has no GPUs"
	case w.gpus > 0 && pool.GPUResource() != w.gpuResource:
		return fmt.Sprintf("offers %s, not %s", pool.GPUResource(), w.gpuResource)
	case w.gpus > 0 && pool.GPU.PerNode > 0 && pool.GPU.PerNode < perNode:
		return fmt.Sprintf("has %d GPUs per node, fewer than the %d one pod needs", pool.GPU.PerNode, perNode)
	}
	if c := pool.Capacity; c != nil {
		if why := exceeds("memory", w.memory, c.Memory); why != "" {
			return why
		}
		if why := exceeds("cpu", w.cpu, c.CPU); why != "" {
			return why
		}
	}
	return ""
}

// exceeds compares a request with a node's capacity; quantities were
// validated before placement.
func exceeds(what, request, capacity string) string {
	if request == "" || capacity == "" {
		return ""
	}
	req, limit := hub.MustParseQuantity(request), hub.MustParseQuantity(capacity)
	if req.Cmp(limit) > 0 {
		return fmt.Sprintf("has %s %s per node, less than the %s one pod requests", capacity, what, request)
	}
	return ""
}

// compareSize orders pools by GPUs per node, fewest first; a GPU pool of
// unknown size comes after every known one, CPU pools first of all.
func compareSize(a, b *hub.NodePool) int {
	size := func(p *hub.NodePool) int64 {
		switch {
		case p.GPU == nil:
			return 0
		case p.GPU.PerNode == 0:
			return 1 << 40
		}
		return int64(p.GPU.PerNode)
	}
	return int(max(-1, min(1, size(a)-size(b))))
}

func cpuPools(pools []hub.NodePool) []*hub.NodePool {
	var out []*hub.NodePool
	for i := range pools {
		if pools[i].GPU == nil {
			out = append(out, &pools[i])
		}
	}
	slices.SortFunc(out, func(a, b *hub.NodePool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func describe(w workload, perNode, nodes int32) string {
	what := "a CPU-only pod"
	if w.gpus > 0 {
		what = fmt.Sprintf("%d %s per pod", w.gpus, w.gpuResource)
		if nodes > 1 {
			what += fmt.Sprintf(" on each of %d nodes", nodes)
		}
	}
	if w.component != providers.ComponentMain {
		what = w.component + ": " + what
	}
	return what
}
