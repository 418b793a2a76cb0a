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
