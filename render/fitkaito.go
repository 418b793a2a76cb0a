package render

import (
	"fmt"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/providers"
)

// KAITO releases whose node estimator checkKAITOFit repeats (fit.KAITO).
var (
	kaitoEstimatorFrom = hub.MustParseRelease("0.8.0")
	kaitoScaledFrom    = hub.MustParseRelease("0.11.0")
)

// checkKAITOFit holds a KAITO preset to KAITO's own sizing rather than to
// the GPU count of the ModelDeployment, which KAITO ignores for presets:
// its node estimator gives each replica as many whole nodes of the
// selected pool as the preset's weights need. The render fails where the
// Workspace would (a GPU too small for the reserve, or fewer nodes in the
// pool than the replicas take), and a replica spread over several nodes
// is a kaito-nodes warning, since it multiplies what the model costs.
func checkKAITOFit(md *hub.ModelDeployment, caps *capabilities.Resolved, pl *providers.Placement, models map[string]fit.Model, l *diag.List) []fit.Verdict {
	s := &md.Spec
	pp := pl.Components[providers.ComponentMain]
	if pp == nil || s.GPUCount() <= 0 {
		return nil
	}
	v := fit.Verdict{Namespace: md.Namespace, Name: md.Name, ModelID: s.Model.ID, Pool: pp.Pool, Status: fit.StatusNotChecked}
	pool := poolNamed(caps.NodePools, pp.Pool)
	pc := caps.Provider(hub.ProviderKAITO)
	rel, err := hub.ParseRelease(pc.Version)
	switch {
	case err != nil || rel.LessThan(kaitoEstimatorFrom):
		v.Reason = "KAITO before 0.8 has no node estimator to repeat"
	case s.Model.ID == "":
		v.Reason = "no spec.model.id"
	case pool == nil || pool.GPU == nil || pool.GPU.MemoryMiB <= 0 || pool.GPU.PerNode <= 0:
		v.Reason = fmt.Sprintf("pool %q states no gpu.memoryMiB and gpu.perNode, which KAITO reads from the nodes", pp.Pool)
	}
	if v.Reason != "" {
		return []fit.Verdict{v}
	}
	model, origin, known := modelFacts(s.Model.ID, models)
	if !known {
		v.Reason = "unknown model: not in the catalog, and its id names no size"
		// Info, not unknown-model: KAITO sizes the replica itself, from
		// facts its preset carries (and a preset name before 0.9 is no
		// repository the catalog could know).
		l.Infof("spec.model.id", "memory fit not checked: %q is not in the model catalog and its id names no size (such as -8B); KAITO sizes the nodes of its replicas from the preset itself", s.Model.ID)
		return []fit.Verdict{v}
	}
	context := 0
	if e := s.Engine; e != nil && e.ContextLength != nil {
		context = int(*e.ContextLength)
	}
	perNode := int(pool.GPU.PerNode)
	k := fit.KAITO(model, context, pool.GPU.MemoryMiB, perNode, !rel.LessThan(kaitoScaledFrom))
	v.Source = origin
	what := fmt.Sprintf("%s on pool %q (%d × %s MiB per node) under KAITO %s", s.Model.ID, pool.Name, perNode, comma(pool.GPU.MemoryMiB), pc.Version)
	if k.TooSmall() {
		v.Status, v.GPUs, v.NeededMiB, v.AvailableMiB = fit.StatusDoesNotFit, perNode, k.ReserveMiB, k.UsableMiB
		l.Errorf("spec.model.id", "%s does not fit: KAITO's node estimator keeps %s MiB of each GPU for the engine and the KV cache of one %s-token sequence (2.3 GiB + the KV cache over the node's %d GPUs), more than the %s MiB it uses of each GPU (0.84), and KAITO fails the Workspace; use a pool with larger GPUs, or a shorter `spec.engine.contextLength` (model facts from %s)",
			what, comma(k.ReserveMiB), comma(int64(k.Context)), perNode, comma(k.UsableMiB), model.Source)
		return []fit.Verdict{v}
	}
	gpus := k.Nodes * perNode
	v.Status, v.GPUs = fit.StatusFits, gpus
	v.NeededMiB = k.WeightsMiB + int64(gpus)*k.ReserveMiB
	v.AvailableMiB = int64(gpus) * k.UsableMiB
	if total, ok := poolNodes(pool); ok && int64(k.Nodes)*int64(s.Replicas()) > total {
		v.Status = fit.StatusDoesNotFit
		l.Errorf("spec.scaling.replicas", "%s: KAITO's node estimator gives each of the %d replicas %d %s (%s), %d in all, and pool %q has at most %d; add nodes to the pool or use larger GPUs (model facts from %s)",
			what, s.Replicas(), k.Nodes, plural(k.Nodes, "node"), kaitoWhy(k), k.Nodes*int(s.Replicas()), pool.Name, total, model.Source)
		return []fit.Verdict{v}
	}
	if k.Nodes > 1 {
		l.Warnf(diag.KAITONodes, "spec.model.id", "%s: KAITO's node estimator spreads each replica over %d nodes, %d GPUs (%s), and serves it with distributed inference; a pool with larger GPUs would take fewer (model facts from %s)",
			what, k.Nodes, gpus, kaitoWhy(k), model.Source)
	}
	return []fit.Verdict{v}
}

// kaitoWhy explains the estimator's GPU count.
func kaitoWhy(k fit.KAITOSizing) string {
	return fmt.Sprintf("weights of %s MiB need %d GPUs: each uses %s MiB, keeps %s MiB for the engine and the KV cache of one %s-token sequence, and holds %s MiB of weights",
		comma(k.WeightsMiB), k.GPUs, comma(k.UsableMiB), comma(k.ReserveMiB), comma(int64(k.Context)), comma(k.RoomMiB))
}

// poolNodes is the most nodes the pool declares: its count, or the
// autoscaler's maximum.
func poolNodes(p *hub.NodePool) (int64, bool) {
	switch n := p.Nodes; {
	case n == nil:
		return 0, false
	case n.Count != nil:
		return int64(*n.Count), true
	case n.Max != nil:
		return int64(*n.Max), true
	}
	return 0, false
}
