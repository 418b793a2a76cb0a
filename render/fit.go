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
)

// checkFit holds what one replica of each placed component needs (package
// fit) to what its GPUs give: an error when it cannot fit, naming the
// numbers and the fewest GPUs, and the pool, that would hold it; a
// tight-fit warning near the limit (a tight fit of a model sized from its
// id included); a note when the facts were assumed from the size in the
// id; an unknown-model warning when there are none. A provider whose
// operator sizes the nodes itself is held to its own sizing instead
// (providers.MemoryFitter: KAITO's node estimator). It checks nothing
// for the Dynamo mocker (no model), llama.cpp (GGUF weights that
// the engine may keep in host memory), CPU-only components and pools
// whose GPU memory the capability file does not state.
//
// It returns the verdict of each GPU component (Result.Fits): the numbers
// it held, or why it held none.
func checkFit(md *hub.ModelDeployment, engine, provider string, caps *capabilities.Resolved, p providers.Provider, pl *providers.Placement, models map[string]fit.Model, l *diag.List) []fit.Verdict {
	s := &md.Spec
	var out []fit.Verdict
	verdict := func(w workload) fit.Verdict {
		v := fit.Verdict{Namespace: md.Namespace, Name: md.Name, ModelID: s.Model.ID, Component: w.component, GPUs: int(w.gpus)}
		if pl != nil && pl.Components[w.component] != nil {
			v.Pool = pl.Components[w.component].Pool
		}
		return v
	}
	notChecked := func(reason string) []fit.Verdict {
		for _, w := range workloads(s) {
			if w.gpus <= 0 {
				continue
			}
			v := verdict(w)
			v.Status, v.Reason = fit.StatusNotChecked, reason
			out = append(out, v)
		}
		return out
	}
	fitter, _ := p.(providers.MemoryFitter)
	switch {
	case pl == nil || len(pl.Components) == 0:
		return nil
	case hub.IsMocker(md):
		return notChecked("the Dynamo mocker loads no model")
	case engine == hub.EngineLlamaCpp:
		return notChecked("llama.cpp may keep GGUF weights in host memory")
	case fitter != nil:
		req := &providers.Request{MD: md, Engine: engine, Provider: caps.Provider(provider), Caps: &caps.ResolvedCapabilities, Placement: pl}
		verdicts, fl := fitter.CheckFit(req, func(id string) (fit.Model, string, bool) { return modelFacts(id, models) })
		*l = append(*l, fl...)
		return verdicts
	case s.Model.ID == "":
		return notChecked("no spec.model.id")
	case engine == hub.EngineVLLM:
		return checkVLLMFit(md, provider, caps, p, pl, models, l)
	case engine != hub.EngineSGLang && engine != hub.EngineTRTLLM:
		return notChecked("engine " + engine + " has no memory model")
	}
	var e hub.EngineSpec
	if s.Engine != nil {
		e = *s.Engine
	}
	settings := fit.EngineSettings(engine, e.Args, e.ExtraArgs)
	l.Warnf(diag.UncalibratedFit, "spec.engine", "the memory fit of %s is a lower bound (weights, 1 GiB per GPU and the KV cache of one sequence against %s of each GPU), not %s's own start-up arithmetic, which is not repeated: a \"fits\" here may still not start", engineName(engine), settings.UtilizationFrom, engineName(engine))
	context := settings.Context
	if e.ContextLength != nil {
		context = int(*e.ContextLength)
	}
	model, origin, known := modelFacts(s.Model.ID, models)
	warned := false
	for _, w := range workloads(s) {
		pp := pl.Components[w.component]
		if w.gpus <= 0 || pp == nil {
			continue
		}
		v := verdict(w)
		v.Status = fit.StatusNotChecked
		pool := caps.NodePool(pp.Pool)
		if pool == nil || pool.GPU == nil || pool.GPU.MemoryMiB <= 0 {
			v.Reason = fmt.Sprintf("pool %q states no gpu.memoryMiB", pp.Pool)
			out = append(out, v)
			continue
		}
		if !known {
			v.Reason = "unknown model: not in the catalog, and its id names no size"
			out = append(out, v)
			if !warned {
				l.Warnf(diag.UnknownModel, "spec.model.id", "memory fit not checked: %q is not in the model catalog and its id names no size (such as -8B); nothing was assumed", s.Model.ID)
				warned = true
			}
			continue
		}
		nodes := int32(1)
		if sp, ok := p.(providers.NodeSpanner); ok {
			nodes = max(1, sp.NodesPerPod(md, w.component))
		}
		gpus := int(w.gpus * nodes)
		est := fit.Compute(model, settings, context, gpus, pool.GPU.MemoryMiB)
		v.GPUs, v.NeededMiB, v.AvailableMiB, v.Source, v.Status = gpus, est.Needed, est.Available, origin, fit.StatusFits
		if model.FromID && !warned {
			l.Infof("spec.model.id", "%q is not in the model catalog: its memory needs are assumed from %s, without a KV cache; one replica needs about %s MiB of the %s MiB it gets",
				s.Model.ID, model.Source, wording.Thousands(est.Needed), wording.Thousands(est.Available))
			warned = true
		}
		field := w.field + ".gpu.count"
		what := fmt.Sprintf("%d %s of pool %q (%s MiB each)", gpus, wording.Plural(gpus, "GPU"), pool.Name, wording.Thousands(pool.GPU.MemoryMiB))
		weightsOnly := est
		weightsOnly.Needed -= est.KV
		switch {
		case !weightsOnly.Fits() || !est.Fits() && engine == hub.EngineVLLM:
			v.Status = fit.StatusDoesNotFit
			msg := fmt.Sprintf("%s does not fit %s: one replica needs about %s MiB (%s), and gets %s MiB (%s)",
				s.Model.ID, what, wording.Thousands(est.Needed), breakdown(model, est), wording.Thousands(est.Available), gets(gpus, pool.GPU.MemoryMiB, settings))
			msg += "; " + suggest(md, caps, w, "fit", func(pool *hub.NodePool, n int32) bool {
				return fit.Compute(model, settings, context, int(n*nodes), pool.GPU.MemoryMiB).Fits()
			})
			if weightsOnly.Fits() && est.KVKnown {
				if n := maxContext(model, settings, est); n > 0 {
					msg += fmt.Sprintf(", or serve at most %s tokens (`spec.engine.contextLength`; vLLM refuses to start when its KV cache cannot hold one sequence)", wording.Thousands(int64(n)))
				}
			}
			l.Errorf(field, "%s (model facts from %s)", msg, model.Source)
		case !est.Fits():
			v.Status = fit.StatusShortContext
			l.PoolWarnf(diag.TightFit, pool.Name, field, "%s on %s: the weights fit, but a KV cache for one sequence of %s tokens does not (%s MiB needed, %s MiB available): the engine will serve shorter sequences (model facts from %s)",
				s.Model.ID, what, wording.Thousands(int64(est.Context)), wording.Thousands(est.Needed), wording.Thousands(est.Available), model.Source)
		case est.IsTight():
			v.Status = fit.StatusTight
			l.PoolWarnf(diag.TightFit, pool.Name, field, "%s on %s is a tight fit: one replica needs about %s MiB (%s), more than %d%% of the %s MiB it gets (%s); the engine's real overhead may exceed the estimate (model facts from %s)",
				s.Model.ID, what, wording.Thousands(est.Needed), breakdown(model, est), int(fit.Tight*100), wording.Thousands(est.Available), gets(gpus, pool.GPU.MemoryMiB, settings), model.Source)
		}
		out = append(out, v)
	}
	return out
}

// engineName is an engine's name in messages.
func engineName(engine string) string {
	switch engine {
	case hub.EngineSGLang:
		return "SGLang"
	case hub.EngineTRTLLM:
		return "TensorRT-LLM"
	}
	return engine
}

// modelFacts finds the model's facts: the caller's (read from a local
// directory, or a ModelCatalog among the inputs), the catalog, the size
// in its id; origin names which, in a word (model-dir, model-catalog,
// catalog, id).
func modelFacts(id string, models map[string]fit.Model) (m fit.Model, origin string, ok bool) {
	if m, ok := models[id]; ok {
		if strings.HasPrefix(m.Source, "the ModelCatalog ") {
			return m, "model-catalog", true
		}
		return m, "model-dir", true
	}
	if m, ok := fit.Lookup(id); ok {
		return m, "catalog", true
	}
	m, ok = fit.FromID(id)
	return m, "id", ok
}

// suggest names the fewest GPUs of one node (1, 2, 4, ... up to the
// pool's GPUs per node, 8 when unknown), and the pool (the smallest GPUs
// among equals), on which holds says one replica works, and what in the
// model keeps it from that pool now (a node selector). verb says what
// holds means, in the message: "fit", "start".
func suggest(md *hub.ModelDeployment, caps *capabilities.Resolved, w workload, verb string, holds func(pool *hub.NodePool, gpusPerNode int32) bool) string {
	type option struct {
		gpus int32
		pool *hub.NodePool
	}
	var best *option
	for i := range caps.NodePools {
		pool := &caps.NodePools[i]
		if pool.GPU == nil || pool.GPU.MemoryMiB <= 0 || pool.GPUResource() != w.gpuResource {
			continue
		}
		limit := pool.GPU.PerNode
		if limit <= 0 {
			limit = 8
		}
		for n := int32(1); n <= limit; n *= 2 {
			if !holds(pool, n) {
				continue
			}
			o := &option{n, pool}
			if best == nil || o.gpus < best.gpus || o.gpus == best.gpus && (pool.GPU.MemoryMiB < best.pool.GPU.MemoryMiB || pool.GPU.MemoryMiB == best.pool.GPU.MemoryMiB && pool.Name < best.pool.Name) {
				best = o
			}
			break
		}
	}
	if best == nil {
		return "it does not " + verb + " on the GPUs of one node of any pool of the capability file"
	}
	msg := fmt.Sprintf("the fewest that %s it are %d %s of pool %q", verb, best.gpus, wording.Plural(int(best.gpus), "GPU"), best.pool.Name)
	c := w
	c.gpus = best.gpus
	if why := rejects(md, best.pool, c, best.gpus, len(cpuPools(caps.NodePools)) > 0); why != "" {
		msg += " (which " + why + ")"
	}
	return msg
}

// maxContext is the longest sequence whose KV cache fits beside the
// weights.
func maxContext(m fit.Model, s fit.Settings, e fit.Estimate) int {
	kv := s.KVBytes
	if kv == 0 {
		kv = 2
	}
	per := m.KVPerToken(kv)
	free := e.Available - e.Weights - e.Overhead
	if per <= 0 || free <= 0 {
		return 0
	}
	n := free * (1 << 20) / per
	return int(n / 256 * 256)
}

func breakdown(m fit.Model, e fit.Estimate) string {
	weights := "in " + m.DType
	if m.WeightBytes > 0 {
		weights = "(the checkpoint's size)"
	}
	s := fmt.Sprintf("weights %s MiB %s + engine overhead %s MiB", wording.Thousands(e.Weights), weights, wording.Thousands(e.Overhead))
	if e.KVKnown {
		s += fmt.Sprintf(" + KV cache %s MiB for one sequence of %s tokens", wording.Thousands(e.KV), wording.Thousands(int64(e.Context)))
	}
	return s
}

func gets(gpus int, memoryMiB int64, s fit.Settings) string {
	return fmt.Sprintf("%d × %s MiB × %s", gpus, wording.Thousands(memoryMiB), s.UtilizationFrom)
}
