package kaito

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/wording"
	"github.com/airunway-render/airunway-render/providers"
)

// CheckFit implements providers.MemoryFitter. It holds a KAITO preset to KAITO's own sizing rather than to
// the GPU count of the ModelDeployment, which KAITO ignores for presets:
// the node estimator of the declared release (fit.KAITORelease) gives each
// replica as many whole nodes of the selected pool as the model needs, by
// KAITO's own figures for the model and its own reading of the node
// labels, at 2,048 tokens (the kaito provider passes no context length and
// renders no inference ConfigMap). The render fails where KAITO would fail
// the Workspace: a preset name its webhook refuses, a GPU too small for
// the reserve, more than one node for a model that does not support
// distributed inference, a pool whose nodes together hold less GPU memory
// than the model (the webhook's check on bring-your-own nodes), or fewer
// nodes in the pool than the replicas take. A replica spread over several
// nodes is a kaito-nodes warning, since it multiplies what the model
// costs; 0.8.x and 0.9.x divide the per-GPU label by the node's GPUs
// (KAITO's bug, repeated), and every message says so when that changes
// the answer.
func (Provider) CheckFit(req *providers.Request, facts providers.ModelFacts) ([]fit.Verdict, diag.List) {
	md, caps, pl := req.MD, req.Caps, req.Placement
	var l diag.List
	s := &md.Spec
	pp := pl.Components[providers.ComponentMain]
	if pp == nil || s.GPUCount() <= 0 {
		return nil, nil
	}
	v := fit.Verdict{Namespace: md.Namespace, Name: md.Name, ModelID: s.Model.ID, Pool: pp.Pool, Status: fit.StatusNotChecked}
	pool := caps.NodePool(pp.Pool)
	pc := caps.Provider(hub.ProviderKAITO)
	var rel *fit.KAITORelease
	ver, err := hub.ParseRelease(pc.Version)
	if err == nil {
		rel, err = fit.KAITOReleaseOf(ver)
	}
	o := kaitoOverrides(md)
	name, nameField := s.Model.ID, "spec.model.id"
	if o.Inference.Preset.Name != "" {
		name, nameField = o.Inference.Preset.Name, "spec.provider.overrides.inference.preset.name"
	}
	switch {
	case err != nil:
		v.Reason = err.Error()
	case rel == nil:
		v.Reason = "KAITO before 0.8 has no node estimator to repeat"
	case name == "":
		v.Reason = "no spec.model.id"
	}
	if v.Reason != "" {
		return []fit.Verdict{v}, l
	}
	rendered := name
	if !ver.AtLeast(kaitoHFNamesFrom) && strings.Contains(name, "/") {
		// The kaito provider renders a model id as the preset KAITO
		// registers for that repository; it refuses other ids, and any id
		// the overrides name.
		p := rel.PresetFor(name)
		if p == nil || o.Inference.Preset.Name != "" {
			v.Reason = fmt.Sprintf("KAITO %s takes no Hugging Face id as a preset name, and has no preset for %s", ver, name)
			return []fit.Verdict{v}, l
		}
		rendered = p.Name
	}
	lookup := rel.Lookup(rendered)
	if lookup.Refused != "" {
		v.Status, v.Reason = fit.StatusDoesNotFit, lookup.Refused
		l.Errorf(nameField, "%q is no preset of KAITO %s, whose admission webhook refuses the Workspace: %q; name one of its presets (docs/will-it-run.md#kaito), or a Hugging Face id `org/model` (KAITO 0.9.0 and later)",
			rendered, ver, lookup.Refused)
		return []fit.Verdict{v}, l
	}
	switch {
	case pool == nil || pool.GPU == nil || pool.GPU.MemoryMiB <= 0 || pool.GPU.PerNode <= 0:
		v.Reason = fmt.Sprintf("pool %q states no gpu.memoryMiB and gpu.perNode, which KAITO reads from the nodes", pp.Pool)
		return []fit.Verdict{v}, l
	case pool.ClaimsDevices():
		// The kaito provider refuses a preset there: its pods would
		// request nvidia.com/gpu, which the nodes do not offer.
		v.Reason = fmt.Sprintf("pool %q claims its GPUs as DRA devices, where a KAITO preset cannot run", pp.Pool)
		return []fit.Verdict{v}, l
	}

	var preset fit.KAITOPreset
	source := ""
	if lookup.Preset != nil {
		preset, source = *lookup.Preset, lookup.Via
		v.Source = "kaito"
	} else {
		// KAITO generates the preset from the Hugging Face Hub when it
		// reconciles the Workspace; the catalog's facts stand in.
		model, origin, known := facts(rendered)
		generated := fmt.Sprintf("%q is none of KAITO %s's models: KAITO generates its preset from the Hugging Face Hub when it reconciles the Workspace (the size: the sum of the repository's *.safetensors; the KV cache: config.json's attention shape, every layer counted as full attention, in 16 bits)", rendered, ver)
		facts, ok := fit.KAITOFacts(model)
		if !known || !ok {
			v.Reason = "unknown model: KAITO generates it from the Hugging Face Hub, and the catalog does not know it"
			l.Infof("spec.model.id", "memory fit not checked: %s, and the model catalog does not know the model and its id names no size (such as -8B), so KAITO's node count is not repeated", generated)
			return []fit.Verdict{v}, l
		}
		preset, source, v.Source = facts, "the model catalog's facts for "+rendered+" ("+model.Source+")", origin
		kv := "a KV cache of " + wording.Thousands(facts.BytesPerToken) + " bytes a token"
		if facts.BytesPerToken == 0 {
			kv = "no KV cache (the catalog knows no attention shape)"
		}
		l.Infof("spec.model.id", "%s; the node estimate uses the model catalog's facts instead: %s MiB of weights and %s (model facts from %s)",
			generated, wording.Thousands(facts.SizeBytes>>20), kv, model.Source)
	}
	if o.Inference.Config != "" {
		l.Infof("spec.provider.overrides.inference.config", "names the ConfigMap %q: KAITO's node estimator counts the KV cache for its `vllm: max-model-len` when its inference_config.yaml sets one, which the renderer cannot read; the estimate assumes KAITO's default of %s tokens",
			o.Inference.Config, wording.Thousands(fit.KAITODefaultContext))
	}
	if nap := pc.NodeAutoProvisioning; nap != nil {
		l.Infof("spec.model.id", "KAITO with node auto-provisioning sizes the replica from its SKU table's GPUs for the instance type %q, not from the labels of the nodes; the estimate uses pool %q's gpu.memoryMiB and gpu.perNode", nap.GPUInstanceType, pool.Name)
	}

	perNode, label := int(pool.GPU.PerNode), pool.GPU.MemoryMiB
	e := rel.Estimate(preset, fit.KAITODefaultContext, label, perNode)
	what := fmt.Sprintf("%s on pool %q (%d × %s MiB per node) under KAITO %s", rendered, pool.Name, perNode, wording.Thousands(label), ver)
	if rendered != s.Model.ID {
		what = fmt.Sprintf("%s (KAITO's preset %s) on pool %q (%d × %s MiB per node) under KAITO %s", s.Model.ID, rendered, pool.Name, perNode, wording.Thousands(label), ver)
	}
	bug := ""
	if rel.LabelDividedByGPUs() && perNode > 1 {
		if right := rel.EstimateWithoutLabelBug(preset, fit.KAITODefaultContext, label, perNode); right.Nodes != e.Nodes || right.Err != e.Err {
			bug = fmt.Sprintf("; KAITO %s divides the per-GPU nvidia.com/gpu.memory label (%d GiB) by the node's %d GPUs, a bug fixed in 0.10.0 that the renderer repeats: counting each GPU whole, it would %s",
				ver, e.LabelGiB, perNode, kaitoOutcome(right))
		}
	}
	from := "figures from " + source
	if !rel.Exact() {
		from += fmt.Sprintf("; KAITO %s's own files are not derived, so these are %s's, the newest release before it", ver, rel.Tag)
	}
	gpus := e.Calculated * perNode
	weights := e.Weights
	if rel.ScaledOverhead() {
		weights *= 1 + 0.05
	}
	v.GPUs = gpus
	v.NeededMiB = int64((weights + float64(gpus)*e.Reserve) / (1 << 20))
	v.AvailableMiB = int64(float64(gpus) * e.Usable / (1 << 20))
	switch e.Failure {
	case fit.KAITOTooSmall:
		v.Status, v.Reason, v.GPUs = fit.StatusDoesNotFit, e.Err, perNode
		v.NeededMiB, v.AvailableMiB = int64(e.Reserve)>>20, int64(e.Usable)>>20
		l.Errorf("spec.model.id", "%s does not fit: KAITO's node estimator keeps %s MiB of each GPU for the engine and the KV cache of one %s-token sequence (2.3 GiB + the KV cache over the node's %d %s), more than the %s MiB it uses of each GPU (0.84 of %s MiB), and KAITO fails the Workspace: %q; use a pool with larger GPUs (%s)%s",
			what, wording.Thousands(int64(e.Reserve)>>20), wording.Thousands(int64(e.Context)), perNode, wording.Plural(perNode, "GPU"), wording.Thousands(int64(e.Usable)>>20), wording.Thousands(int64(e.PerGPU)>>20), e.Err, from, bug)
		return []fit.Verdict{v}, l
	case fit.KAITOTooSmallForModel:
		v.Status, v.Reason, v.GPUs = fit.StatusDoesNotFit, e.Err, perNode
		l.Errorf("spec.model.id", "%s does not fit: KAITO serves %s without tensor parallelism, so one GPU must hold the whole model and its reserve, and KAITO fails the Workspace: %q; use a pool with larger GPUs (%s)%s",
			what, rendered, e.Err, from, bug)
		return []fit.Verdict{v}, l
	case fit.KAITONoTensorParallelism, fit.KAITONotDistributed:
		v.Status, v.Reason = fit.StatusDoesNotFit, e.Err
		why := "does not support distributed inference"
		if e.Failure == fit.KAITONoTensorParallelism {
			why = "runs without tensor parallelism"
		}
		l.Errorf("spec.model.id", "%s does not fit: KAITO's node estimator needs %d nodes for each replica (%s), and %s %s in KAITO %s, so KAITO fails the Workspace: %q; use a pool whose nodes hold it on one node, with more or larger GPUs (%s)%s",
			what, e.Calculated, kaitoWhy(e, rel), rendered, why, ver, e.Err, from, bug)
		return []fit.Verdict{v}, l
	}
	v.Status = fit.StatusFits
	total, declared := poolNodes(pool)
	if declared && pc.NodeAutoProvisioning == nil {
		if a := rel.Admit(rendered, preset, int(total), label, perNode); a.Err != "" {
			v.Status, v.Reason = fit.StatusDoesNotFit, a.Err
			counted := fmt.Sprintf("the nvidia.com/gpu.memory label rounded to %d GiB, × %d %s", e.LabelGiB, perNode, wording.Plural(perNode, "GPU"))
			if rel.LabelDividedByGPUs() {
				counted = fmt.Sprintf("one GPU's nvidia.com/gpu.memory label, rounded: KAITO %s counts no other GPU of a node", ver)
			}
			hold := "hold"
			if total == 1 {
				hold = "holds"
			}
			msg := fmt.Sprintf("%s: KAITO's admission webhook refuses the Workspace on bring-your-own nodes: the pool's %d %s %s %s GiB of GPU memory as it counts it (%d GiB a node: %s), less than the model's %s: %q; add nodes to the pool (`nodes`), or use larger GPUs (%s)",
				what, total, wording.Plural(int(total), "node"), hold, wording.Thousands(a.Total>>30), a.NodeGiB, counted, preset.Size, a.Err, from)
			if rel.LabelDividedByGPUs() && perNode > 1 && rel.AdmitWithoutLabelBug(rendered, preset, int(total), label, perNode).Err == "" {
				they := "they"
				if total == 1 {
					they = "it"
				}
				msg += fmt.Sprintf("; counting every GPU of a node, as from KAITO 0.10.0, %s would hold %s GiB and pass", they, wording.Thousands(total*e.LabelGiB*int64(perNode)))
			}
			l.Errorf("spec.model.id", "%s", msg)
		}
	}
	// An autoscaled InferenceSet is held to its peak.
	replicas, field := s.Replicas(), "spec.scaling.replicas"
	if a := s.Autoscaling(); a != nil && a.MaxReplicas != nil {
		replicas, field = *a.MaxReplicas, "spec.scaling.autoscaling.maxReplicas"
	}
	if declared && int64(e.Nodes)*int64(replicas) > total {
		v.Status = fit.StatusDoesNotFit
		l.Errorf(field, "%s: KAITO's node estimator gives each of the %d replicas %d %s (%s), %d in all, and pool %q has at most %d; add nodes to the pool or use larger GPUs (%s)%s",
			what, replicas, e.Nodes, wording.Plural(e.Nodes, "node"), kaitoWhy(e, rel), e.Nodes*int(replicas), pool.Name, total, from, bug)
		return []fit.Verdict{v}, l
	}
	if e.Nodes > 1 && v.Status == fit.StatusFits {
		l.Warnf(diag.KAITONodes, "spec.model.id", "%s: KAITO's node estimator spreads each replica over %d nodes, %d GPUs (%s), and serves it with distributed inference; a pool with larger GPUs would take fewer (%s)%s",
			what, e.Nodes, gpus, kaitoWhy(e, rel), from, bug)
	}
	return []fit.Verdict{v}, l
}

// kaitoHFNamesFrom is the first KAITO release that takes Hugging Face ids
// as preset names.
var kaitoHFNamesFrom = hub.MustParseRelease("0.9.0")

// kaitoWhy explains the estimator's GPU count.
func kaitoWhy(e fit.KAITOEstimate, rel *fit.KAITORelease) string {
	room := "holds " + wording.Thousands(int64(e.Room)>>20) + " MiB of weights"
	if rel.ScaledOverhead() {
		room = "holds " + wording.Thousands(int64(e.Room)>>20) + " MiB of weights (what is left ÷ 1.05)"
	}
	return fmt.Sprintf("weights of %s MiB need %d GPUs: each counts %s MiB, uses %s MiB of it, keeps %s MiB for the engine and the KV cache of one %s-token sequence, and %s",
		wording.Thousands(int64(e.Weights)>>20), e.GPUs, wording.Thousands(int64(e.PerGPU)>>20), wording.Thousands(int64(e.Usable)>>20), wording.Thousands(int64(e.Reserve)>>20), wording.Thousands(int64(e.Context)), room)
}

// kaitoOutcome says what an estimate decides, after "it would".
func kaitoOutcome(e fit.KAITOEstimate) string {
	switch {
	case e.Err != "":
		return fmt.Sprintf("fail the Workspace all the same (%q)", e.Err)
	case e.Nodes == 1:
		return "take 1 node"
	}
	return fmt.Sprintf("take %d nodes", e.Nodes)
}

// kaitoOverrides is what spec.provider.overrides sets of the Workspace's
// inference that the estimator reads: the preset name (it replaces the
// model id) and the inference ConfigMap (its max-model-len).
func kaitoOverrides(md *hub.ModelDeployment) (o struct {
	Inference struct {
		Preset struct {
			Name string `json:"name"`
		} `json:"preset"`
		Config string `json:"config"`
	} `json:"inference"`
}) {
	if md.Spec.Provider != nil && len(md.Spec.Provider.Overrides) > 0 {
		_ = json.Unmarshal(md.Spec.Provider.Overrides, &o) // validated JSON; a mistyped field is not ours to report
	}
	return o
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
