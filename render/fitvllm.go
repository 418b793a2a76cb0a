package render

import (
	"fmt"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/wording"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/engineargs"
)

// checkVLLMFit repeats vLLM's start-up for one replica of each GPU
// component (fit.VLLMRules.StartUp, by the rules of the release its
// image runs): the memory each GPU gives to the weights, to memory
// outside torch, to the profiling run's activations and to the KV
// cache, the KV cache's tokens, and vLLM's refusals. A refusal is an
// error with vLLM's own reason and what would start; a KV cache within
// the estimate's measured error of a refusal is a tight-fit warning.
func checkVLLMFit(md *hub.ModelDeployment, provider string, caps *capabilities.Resolved, p providers.Provider, pl *providers.Placement, models map[string]fit.Model, l *diag.List) []fit.Verdict {
	s := &md.Spec
	var e hub.EngineSpec
	if s.Engine != nil {
		e = *s.Engine
	}
	launch, unmodelled := fit.VLLMLaunch(e.Args, e.ExtraArgs)
	if e.ContextLength != nil {
		launch.MaxModelLen = int(*e.ContextLength)
	}
	rules, ruleNote := vllmRules(md, p, caps)
	model, origin, known := modelFacts(s.Model.ID, models)
	var out []fit.Verdict
	warned, warnedUnfollowed := false, false
	for _, w := range workloads(s) {
		pp := pl.Components[w.component]
		if w.gpus <= 0 || pp == nil {
			continue
		}
		v := fit.Verdict{Namespace: md.Namespace, Name: md.Name, ModelID: s.Model.ID, Component: w.component, Pool: pp.Pool, GPUs: int(w.gpus), Status: fit.StatusNotChecked}
		pool := caps.NodePool(pp.Pool)
		if pool == nil || pool.GPU == nil || pool.GPU.MemoryMiB <= 0 {
			v.Reason = fmt.Sprintf("pool %q states no gpu.memoryMiB", pp.Pool)
			out = append(out, v)
			continue
		}
		nodes := int32(1)
		if sp, ok := p.(providers.NodeSpanner); ok {
			nodes = max(1, sp.NodesPerPod(md, w.component))
		}
		par, ok := providers.ParallelismOf(s.Engine, providers.VLLMParallelFlags, providers.ReplicaGPUs{GPUs: w.gpus, Pods: nodes})
		if !ok {
			v.Reason = "the engine's parallelism flags contradict the GPUs (reported above)"
			out = append(out, v)
			continue
		}
		lc := launch
		lc.TP, lc.PP = int(par.Tensor), int(par.Pipeline)
		gpus := lc.TP * lc.PP
		v.GPUs = gpus
		gpu := fit.NewGPU(pool.GPU.Product, pool.GPU.MemoryMiB)
		if !known {
			v.Reason = "unknown model: no facts about it (docs/will-it-run.md)"
			out = append(out, v)
			if !warned {
				l.Warnf(diag.UnknownModel, "spec.model.id", "memory fit not checked: %q is not in the model catalog and its id names no size (such as -8B); nothing was assumed. %s", s.Model.ID, giveFacts)
				warned = true
			}
			continue
		}
		if model.FromID {
			v = idSizedVerdict(v, md, w, model, rules, lc, gpu, pool, !warned, l)
			warned = true
			out = append(out, v)
			continue
		}
		st := rules.StartUp(model, lc, gpu)
		v.Source, v.Engine = origin, rules.Name
		fillStartup(&v, st, gpus)
		what := fmt.Sprintf("%d %s of pool %q (%s MiB each)", gpus, wording.Plural(gpus, "GPU"), pool.Name, wording.Thousands(pool.GPU.MemoryMiB))
		notes := append(append([]string{}, st.Notes...), ruleNote...)
		unfollowed := unmodelled
		if lc.UnfollowedQuantization(model) {
			unfollowed = append(append([]string{}, unmodelled...), "--quantization "+lc.Quantization)
		}
		if len(unfollowed) > 0 {
			notes = append(notes, "not followed: "+strings.Join(unfollowed, ", ")+" (the estimate is without them)")
		}
		suffix := fmt.Sprintf(" (model facts from %s; %s's start-up arithmetic%s)", model.Source, rules.Name, noteList(notes))
		switch {
		case st.Refusal != nil:
			v.Status, v.Reason = fit.StatusDoesNotFit, st.Refusal.Reason
			field, msg := refusalMessage(md, w, st, model, rules, lc, gpu, caps, nodes, what)
			l.Errorf(field, "%s%s", msg, suffix)
		case isTight(st, lc):
			v.Status = fit.StatusTight
			l.PoolWarnf(diag.TightFit, pool.Name, w.field+".gpu.count", "%s on %s is a tight fit: %s, and one sequence of %s tokens needs %s MiB of it; the estimate's measured error (docs/will-it-run.md) is larger than what is left, and vLLM may refuse to start%s",
				s.Model.ID, what, startupLine(st, lc, rules), wording.Thousands(int64(st.MaxModelLen)), wording.Thousands(sequenceMiB(st)), suffix)
		case len(unfollowed) > 0 && !warnedUnfollowed:
			// A "fits" that leaves out what these flags keep in GPU
			// memory (a draft model, LoRA slots, offloading) is no yes.
			l.Warnf(diag.UncalibratedFit, "spec.engine", "%s starts on %s by %s's arithmetic without %s, which change what vLLM keeps in GPU memory in ways the arithmetic does not follow: a \"fits\" here may still not start (%s)",
				s.Model.ID, what, rules.Name, strings.Join(unfollowed, ", "), startupLine(st, lc, rules))
			warnedUnfollowed = true
		}
		out = append(out, v)
	}
	return out
}

// giveFacts says how to give the renderer a model's facts.
const giveFacts = "Give its facts in a ModelCatalog kept beside the models (`airunway-render catalog add ID --model-dir DIR -f FILE` writes one from the model's config.json), or with --model-dir ID=DIR on render, plan and preview"

// vllmRules are the rules of the vLLM release the model's image runs:
// the image named by the model, the capability file or the provider's
// default; the newest rules, with a note, when its release cannot be
// known or is not one whose arithmetic is derived.
func vllmRules(md *hub.ModelDeployment, p providers.Provider, caps *capabilities.Resolved) (*fit.VLLMRules, []string) {
	image := md.Spec.EngineImage()
	if image == "" && caps != nil {
		if pc := caps.Provider(p.Name()); pc != nil {
			image = pc.Images[hub.EngineVLLM]
		}
	}
	if def, ok := serverImage(p); image == "" && ok {
		image = def.Default
	}
	engine, release, ok, why := engineargs.ReleaseOf(image)
	if !ok || engine != hub.EngineVLLM {
		r := fit.NewestVLLM()
		if image == "" {
			why = "the provider's image is not known"
		}
		return r, []string{fmt.Sprintf("the image's release is unknown: %s", why)}
	}
	r, exact := fit.VLLMRelease(release)
	if !exact {
		return r, []string{fmt.Sprintf("the image runs vLLM %s, whose arithmetic is not derived", release)}
	}
	return r, nil
}

// fillStartup copies a start-up's figures into a verdict: per GPU in
// MiB, per replica what it needs (weights, outside torch and
// activations on every GPU, one sequence's KV cache) against what it
// gets (the usable share of every GPU).
func fillStartup(v *fit.Verdict, st fit.Startup, gpus int) {
	v.PerGPU = st.PerGPU.MiB()
	v.KVCacheTokens, v.MaxConcurrency, v.ContextLength = st.KVTokens, st.MaxConcurrency, st.MaxModelLen
	v.Status = fit.StatusFits
	if st.PerGPU.Total == 0 {
		return // refused before the memory was counted
	}
	p := v.PerGPU
	v.AvailableMiB = int64(gpus) * p.UsableMiB
	v.NeededMiB = int64(gpus)*(p.WeightsMiB+p.NonTorchMiB+p.ActivationMiB) + sequenceMiB(st)*int64(gpus)
	if p.CUDAGraphSubtracted {
		v.NeededMiB += int64(gpus) * p.CUDAGraphMiB
	}
}

// sequenceMiB is what one sequence of the context takes of one GPU's KV
// cache: its share of the GPU's KV cache by tokens.
func sequenceMiB(st fit.Startup) int64 {
	if st.KVTokens <= 0 || st.MaxConcurrency <= 0 {
		return 0
	}
	return int64(float64(st.PerGPU.KVCache>>20) / st.MaxConcurrency)
}

// isTight: the KV cache holds one sequence by less than the estimate's
// measured error, max(3%, 512 MiB) of the KV cache (the calibration
// test's bound).
func isTight(st fit.Startup, l fit.Launch) bool {
	if st.KVTokens <= 0 || st.MaxConcurrency <= 0 {
		return false
	}
	kv := st.PerGPU.KVCache
	margin := max(kv*3/100, 512<<20)
	spare := kv - int64(float64(kv)/st.MaxConcurrency)
	return spare < margin
}

// startupLine says what vLLM does with one GPU.
func startupLine(st fit.Startup, l fit.Launch, rules *fit.VLLMRules) string {
	p := st.PerGPU.MiB()
	s := fmt.Sprintf("of each GPU, %s MiB as torch sees it, vLLM uses %s MiB (× %s): weights %s MiB + outside torch %s MiB + the profiling run's activations %s MiB",
		wording.Thousands(p.TotalMiB), wording.Thousands(p.UsableMiB), utilization(l, rules), wording.Thousands(p.WeightsMiB), wording.Thousands(p.NonTorchMiB), wording.Thousands(p.ActivationMiB))
	if p.CUDAGraphSubtracted {
		s += fmt.Sprintf(" + CUDA graphs %s MiB", wording.Thousands(p.CUDAGraphMiB))
	}
	if p.KVCacheMiB <= 0 {
		s += " leave nothing for the KV cache"
		if p.KVCacheMiB < 0 {
			s += fmt.Sprintf(" (%s MiB short)", wording.Thousands(-p.KVCacheMiB))
		}
		return s
	}
	s += fmt.Sprintf(" leave %s MiB of KV cache", wording.Thousands(p.KVCacheMiB))
	if st.KVTokens > 0 {
		s += fmt.Sprintf(" (%s tokens)", wording.Thousands(st.KVTokens))
	}
	return s
}

// utilization names the share of each GPU vLLM uses and where it came
// from.
func utilization(l fit.Launch, rules *fit.VLLMRules) string {
	if l.Utilization > 0 {
		return fmt.Sprintf("--gpu-memory-utilization %g", l.Utilization)
	}
	return fmt.Sprintf("%g, the release's default --gpu-memory-utilization", rules.DefaultUtilization)
}

// refusalMessage is the error for a refusal: the field at fault, vLLM's
// reason and what would start instead.
func refusalMessage(md *hub.ModelDeployment, w workload, st fit.Startup, m fit.Model, rules *fit.VLLMRules, l fit.Launch, gpu fit.GPU, caps *capabilities.Resolved, nodes int32, what string) (field, msg string) {
	id := md.Spec.Model.ID
	r := st.Refusal
	switch r.Reason {
	case fit.RefusedMaxModelLen:
		return contextField(md), fmt.Sprintf("vLLM refuses %s at a context of %s tokens: %s; serve at most %s tokens", id, wording.Thousands(int64(l.MaxModelLen)), r.Quoted(), wording.Thousands(int64(m.DerivedMaxLen())))
	case fit.RefusedHeads, fit.RefusedKVHeads, fit.RefusedVocabulary, fit.RefusedPipeline:
		ok := acceptedTP(m, rules, l)
		return w.field + ".gpu.count", fmt.Sprintf("vLLM refuses %s on %s (tensor parallel %d, pipeline parallel %d): %s; the tensor parallel sizes it accepts are %s", id, what, l.TP, l.PP, r.Quoted(), ok)
	}
	msg = fmt.Sprintf("%s does not fit %s: %s; vLLM refuses to start: %s", id, what, startupLine(st, l, rules), r.Quoted())
	if sug := suggest(md, caps, w, "start", func(pool *hub.NodePool, n int32) bool {
		c := l
		c.TP, c.PP = int(n), int(nodes)
		return rules.StartUp(m, c, fit.NewGPU(pool.GPU.Product, pool.GPU.MemoryMiB)).Refusal == nil
	}); sug != "" {
		msg += "; " + sug
	}
	if r.Reason == fit.RefusedOneSequence && st.MaxServable > 0 {
		msg += fmt.Sprintf(", or serve at most %s tokens (`spec.engine.contextLength`)", wording.Thousands(int64(roundDown(st.MaxServable, 256))))
	}
	return w.field + ".gpu.count", msg
}

// contextField is where the context length is set.
func contextField(md *hub.ModelDeployment) string {
	if e := md.Spec.Engine; e != nil && e.ContextLength != nil {
		return "spec.engine.contextLength"
	}
	return "spec.engine"
}

// acceptedTP lists the tensor parallel sizes of 1 to 8 that vLLM's
// checks accept for the model.
func acceptedTP(m fit.Model, rules *fit.VLLMRules, l fit.Launch) string {
	var ok []string
	for tp := 1; tp <= 8; tp++ {
		c := l
		c.TP = tp
		if rules.Refuses(m, c) == nil {
			ok = append(ok, fmt.Sprint(tp))
		}
	}
	if len(ok) == 0 {
		return "none of 1 to 8"
	}
	return strings.Join(ok, ", ")
}

// idSizedVerdict checks a model known only by the size in its id: its
// weights, as the id suggests, against what the GPUs give. Weights
// that cannot fit are an error; otherwise the fit is not checked (the
// KV cache is unknown), and an unknown-model warning says how to give
// the facts.
func idSizedVerdict(v fit.Verdict, md *hub.ModelDeployment, w workload, m fit.Model, rules *fit.VLLMRules, l fit.Launch, gpu fit.GPU, pool *hub.NodePool, warn bool, dl *diag.List) fit.Verdict {
	st := rules.StartUp(m, l, gpu)
	v.Source, v.Engine = "id", rules.Name
	gpus := l.TP * l.PP
	what := fmt.Sprintf("%d %s of pool %q (%s MiB each)", gpus, wording.Plural(gpus, "GPU"), pool.Name, wording.Thousands(pool.GPU.MemoryMiB))
	if st.Refusal != nil && st.Refusal.Reason == fit.RefusedNoMemory && st.PerGPU.Weights > st.PerGPU.Usable {
		v.Status, v.Reason = fit.StatusDoesNotFit, fit.RefusedNoMemory
		v.PerGPU = st.PerGPU.MiB()
		dl.Errorf(w.field+".gpu.count", "%s does not fit %s: its weights alone, assumed from %s, take %s MiB of each GPU, more than the %s MiB vLLM uses of it; %s",
			md.Spec.Model.ID, what, m.Source, wording.Thousands(st.PerGPU.Weights>>20), wording.Thousands(st.PerGPU.Usable>>20), giveFacts)
		return v
	}
	v.Reason = "unknown model: only its weights were assumed, from the size in its id"
	if warn {
		dl.Warnf(diag.UnknownModel, "spec.model.id", "memory fit not checked: %q is not in the model catalog; its weights are assumed from %s (about %s MiB of each of %s), but its KV cache, its context length and vLLM's refusals are unknown. %s",
			md.Spec.Model.ID, m.Source, wording.Thousands(st.PerGPU.Weights>>20), what, giveFacts)
	}
	return v
}

func noteList(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

func roundDown(n, to int) int { return n / to * to }
