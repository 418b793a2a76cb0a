package providers

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/airunway-render/airunway-render/api/hub"
)

// Workload components a placement is computed for.
const (
	ComponentMain    = ""        // the aggregated model server
	ComponentPrefill = "prefill" // disaggregated prefill workers
	ComponentDecode  = "decode"  // disaggregated decode workers
)

// Placement says where each part of a ModelDeployment runs.
type Placement struct {
	// Components maps a component to its pool; absent when the capability
	// file declares no node pools.
	Components map[string]*PoolPlacement
	// CPU is the CPU-only pool for helper pods (a Ray head, a Dynamo
	// frontend, a download Job); nil when the cluster declares none.
	CPU *PoolPlacement
	// Annotation and Reason record the decision on the ModelDeployment;
	// empty when no pool is declared.
	Annotation, Reason string
	// Requests maps a component to the cpu and memory its model-server
	// pods request when the ModelDeployment names none (the engine's
	// default, sized from the pool: see DefaultRequests in package render).
	Requests map[string]corev1.ResourceList
	// spec is the user's own scheduling, used when no pool is declared.
	spec PoolPlacement
}

// PoolPlacement is the scheduling of one component: the pool's selector
// merged with `spec.nodeSelector`, the user's tolerations followed by
// tolerations of the pool's taints.
type PoolPlacement struct {
	Pool         string
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	// GPUResource is the pool's GPU resource name, "" for a CPU pool or when
	// no pool is declared.
	GPUResource string
	// Devices is set when the pool's GPUs are Dynamic Resource Allocation
	// devices: the pods then claim them (see ClaimGPUs) and request no
	// GPUResource.
	Devices *DeviceRequest
}

// NewPlacement returns a placement that only carries the user's
// `spec.nodeSelector` and `spec.tolerations`; pools are added with Set.
func NewPlacement(md *hub.ModelDeployment) *Placement {
	return &Placement{spec: PoolPlacement{NodeSelector: Merge(md.Spec.NodeSelector), Tolerations: md.Spec.Tolerations}}
}

// Set places a component on a pool, merging the user's scheduling in.
func (p *Placement) Set(component string, pool *hub.NodePool) {
	if p.Components == nil {
		p.Components = map[string]*PoolPlacement{}
	}
	// Pool labels first, the user's on top: placement only picks pools
	// whose selector agrees with spec.nodeSelector, so nothing is lost.
	p.Components[component] = &PoolPlacement{
		Pool:         pool.Name,
		NodeSelector: Merge(pool.Selector, p.spec.NodeSelector),
		Tolerations:  mergeTolerations(p.spec.Tolerations, pool.Taints),
		GPUResource:  pool.GPUResource(),
		Devices:      deviceRequest(pool),
	}
}

// SetCPU records the pool for CPU-only helper pods. The user's
// nodeSelector and tolerations aim at the model server's nodes, so they are
// not applied here.
func (p *Placement) SetCPU(pool *hub.NodePool) {
	p.CPU = &PoolPlacement{Pool: pool.Name, NodeSelector: Merge(pool.Selector), Tolerations: mergeTolerations(nil, pool.Taints)}
}

// For returns the scheduling of a component: its pool, else (no pools
// declared) the user's own nodeSelector and tolerations. Never nil.
func (p *Placement) For(component string) *PoolPlacement {
	if pp := p.Components[component]; pp != nil {
		return pp
	}
	return &p.spec
}

// mergeTolerations keeps the user's tolerations and adds one per pool
// taint that none of them already tolerates, in the pool's order.
func mergeTolerations(user []corev1.Toleration, taints []hub.Taint) []corev1.Toleration {
	out := slices.Clone(user)
	for _, t := range taints {
		taint := corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		if slices.ContainsFunc(out, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), &taint, false) }) {
			continue
		}
		tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: taint.Effect}
		if t.Value != "" {
			tol.Operator, tol.Value = corev1.TolerationOpEqual, t.Value
		}
		out = append(out, tol)
	}
	return out
}

// ForCPU returns the scheduling of CPU-only helper pods: the CPU pool, or
// nothing when the cluster declares none. Never nil.
func (p *Placement) ForCPU() *PoolPlacement {
	if p.CPU == nil {
		return &PoolPlacement{}
	}
	return p.CPU
}

// FillRequests adds the engine's default cpu and memory requests of the
// component to a model-server container's resources, each only where the
// container neither requests nor limits it already: what the user wrote
// always wins, and a limit alone already makes Kubernetes request as much.
func (p *Placement) FillRequests(component string, rr *corev1.ResourceRequirements) {
	if p == nil {
		return
	}
	for name, q := range p.Requests[component] {
		if _, ok := rr.Requests[name]; ok {
			continue
		}
		if _, ok := rr.Limits[name]; ok {
			continue
		}
		if rr.Requests == nil {
			rr.Requests = corev1.ResourceList{}
		}
		rr.Requests[name] = q
	}
}

// DefaultRequest returns the engine's default request of one resource for
// the component's model-server pods ("" when it decided none), for
// providers whose operator takes quantities as strings.
func (p *Placement) DefaultRequest(component string, name corev1.ResourceName) string {
	if p == nil {
		return ""
	}
	if q, ok := p.Requests[component][name]; ok {
		return q.String()
	}
	return ""
}
