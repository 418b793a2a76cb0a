package render

import (
	"slices"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
)

// checkEligible refuses a model the provider's renderer cannot produce,
// whatever the capability file claims: an engine outside the provider's
// built-in engines, a serving mode that engine does not run, or no GPUs
// for an engine that runs on GPUs only. A capability file may narrow what
// a provider offers in its cluster (selection reads the file) but not
// widen it; this check reads the catalogue, and words each refusal as the
// provider's upstream controller does (Builtin.Refusals).
func checkEligible(b *capabilities.Builtin, md *hub.ModelDeployment, engine string) diag.List {
	var l diag.List
	s := &md.Spec
	r := refusal{b: b, engine: engine, mode: s.Mode()}
	ec := builtinEngine(b, engine)
	if ec == nil {
		msg := r.fill(b.Refusals.Engine, "provider {provider} does not support engine {engine} (it supports: {engines})", "")
		if advice := b.Refusals.EngineAdvice[engine]; advice != "" {
			msg += "; " + advice
		}
		l.Errorf("spec.engine.type", "%s", msg)
	}
	if !slices.Contains(r.modes(ec), r.mode) {
		l.Errorf("spec.serving.mode", "%s", r.fill(b.Refusals.Mode, "provider {provider} does not support {mode} mode for engine {engine}", ""))
		return l
	}
	if hub.IsMocker(md) || !r.gpuOnly(ec) {
		return l // the mocker serves no model and requests no GPU
	}
	for _, field := range gpuShortfalls(s) {
		l.Errorf(field, "%s", r.fill(b.Refusals.GPU, "{engine} engine on provider {provider} requires GPU (set {count} > 0)", field))
	}
	return l
}

// refusal is what a refusal message may name.
type refusal struct {
	b            *capabilities.Builtin
	engine, mode string
}

func builtinEngine(b *capabilities.Builtin, engine string) *hub.EngineCapability {
	for i := range b.Engines {
		if b.Engines[i].Name == engine {
			return &b.Engines[i]
		}
	}
	return nil
}

// modes are the serving modes of the engine, or of any of the provider's
// engines when it does not run this one (its engine error comes first;
// the mode is refused only if no engine of the provider would serve it).
func (r refusal) modes(ec *hub.EngineCapability) []string {
	if ec != nil {
		return ec.ServingModes
	}
	var all []string
	for _, e := range r.b.Engines {
		all = append(all, e.ServingModes...)
	}
	return all
}

// gpuOnly: the engine runs on GPUs only; for an engine the provider does
// not run, whether all of its engines do.
func (r refusal) gpuOnly(ec *hub.EngineCapability) bool {
	if ec != nil {
		return !ec.CPUSupport
	}
	return !slices.ContainsFunc(r.b.Engines, func(e hub.EngineCapability) bool { return e.CPUSupport })
}

// gpuShortfalls lists the GPU counts a model leaves at zero: the model's
// own, or each disaggregated component's (validation already requires
// those, but this check does not rely on it).
func gpuShortfalls(s *hub.ModelDeploymentSpec) []string {
	if s.Mode() != hub.ModeDisaggregated {
		if s.GPUCount() <= 0 {
			return []string{"spec.resources.gpu.count"}
		}
		return nil
	}
	var out []string
	var prefill, decode *hub.ComponentScalingSpec
	if s.Scaling != nil {
		prefill, decode = s.Scaling.Prefill, s.Scaling.Decode
	}
	if prefill.GPUCount() <= 0 {
		out = append(out, "spec.scaling.prefill.gpu.count")
	}
	if decode.GPUCount() <= 0 {
		out = append(out, "spec.scaling.decode.gpu.count")
	}
	return out
}

// fill writes a template, or the fallback when the provider has none.
func (r refusal) fill(template, fallback, field string) string {
	if template == "" {
		template = fallback
	}
	var engines, modeEngines []string
	for _, e := range r.b.Engines {
		engines = append(engines, e.Name)
		if slices.Contains(e.ServingModes, r.mode) {
			modeEngines = append(modeEngines, e.Name)
		}
	}
	return strings.NewReplacer(
		"{provider}", r.b.Name,
		"{engine}", r.engine,
		"{engines}", strings.Join(engines, ", "),
		"{mode}", r.mode,
		"{modeEngines}", joinAnd(modeEngines),
		"{field}", field,
		"{count}", strings.TrimPrefix(field, "spec."),
	).Replace(template)
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
