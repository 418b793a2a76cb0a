package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/nearest"
)

// Reasons, worded as upstream writes them into status.
const (
	reasonExplicitEngine   = "explicit engine selection"
	reasonExplicitProvider = "explicit provider selection"
)

// Decision is the outcome of selection for one ModelDeployment.
type Decision struct {
	Engine         string
	EngineReason   string
	Provider       string
	ProviderReason string
	// ProviderVersion is the declared operator release of Provider.
	ProviderVersion string
	// NodePool and NodePoolReason are empty when no pools are declared.
	NodePool       string
	NodePoolReason string
	// ServedName is the model name clients send (AnnotationServedName);
	// "" when the server answers to any.
	ServedName string
	// Endpoint is the Service clients call (AnnotationEndpoint); "" when
	// the provider does not say.
	Endpoint string
	// Workload is the provider's primary kind where it renders one of
	// several (AnnotationWorkload), "" for its default.
	Workload string
	// APIFormats the engine answers through the provider
	// (AnnotationAPIFormats), comma-separated.
	APIFormats string
	// HardwareFit and HardwareFitReason are the memory fit's verdict
	// (AnnotationHardwareFit); empty for a model without GPU components.
	HardwareFit, HardwareFitReason string
}

// hasGPU is upstream's notion of a GPU workload for selection.
func hasGPU(s *hub.ModelDeploymentSpec) bool {
	return s.GPUCount() > 0 || s.Mode() == hub.ModeDisaggregated
}

// engineAuto is the reason selectEngine gives for an engine the user did
// not name, until decide words it once the provider is chosen too
// (engineReason): the engine is picked among what every ready provider
// offers, and the reason names the provider that serves it, not the first
// that offered it.
const engineAuto = "auto-selected"

// engineReason words the reason for an engine chosen as how says (the
// reason selectEngine gave) and served by provider. An engine kept from an
// earlier render reads as auto-selected, as it was then: a second render
// must write the same bytes.
func engineReason(how, provider string) string {
	if how == engineAuto {
		return "auto-selected from provider " + provider + " capabilities"
	}
	return how
}

// selectEngine picks the engine: the explicit one, else the one recorded by
// an earlier render while it is still offered, else upstream's preference
// vllm > sglang > trtllm > llamacpp among what ready providers offer.
func selectEngine(md *hub.ModelDeployment, caps *capabilities.Resolved, l *diag.List) (string, string) {
	s := &md.Spec
	if t := s.EngineType(); t != "" {
		return t, reasonExplicitEngine
	}
	gpu, mode := hasGPU(s), s.Mode()
	offered := map[string]bool{}
	var advertised []string
	for _, p := range caps.Providers {
		if !p.Ready {
			continue
		}
		for _, e := range p.Engines {
			if engineServes(&e, gpu, mode) {
				advertised = append(advertised, e.Name+"@"+p.Name)
				offered[e.Name] = true
			}
		}
	}
	if prev := md.Annotations[hub.AnnotationEngine]; prev != "" {
		if offered[prev] {
			return prev, engineAuto
		}
		defer l.Warnf(diag.StickySelection, "spec.engine.type", "the engine %q chosen by an earlier render is no longer offered by a ready provider of %s; choosing again (set `spec.engine.type` to pin an engine)", prev, caps.Source)
	}
	for _, e := range hub.Engines {
		if offered[e] {
			return e, engineAuto
		}
	}
	l.Errorf("spec.engine.type", "no engines available from the ready providers of %s (gpu=%t, servingMode=%s, advertised=[%s]); set `spec.engine.type` and `spec.resources.gpu.count`, or declare a provider that serves this configuration", caps.Source, gpu, mode, strings.Join(advertised, " "))
	return "", ""
}

func engineServes(e *hub.EngineCapability, gpu bool, mode string) bool {
	if gpu && !e.GPUSupport || !gpu && !e.CPUSupport {
		return false
	}
	for _, m := range e.ServingModes {
		if m == mode {
			return true
		}
	}
	return false
}

// checkProviderName refuses a named provider the renderer does not know (a
// typo: the nearest known name is suggested) or the capability file does
// not install, before anything is selected for it.
func checkProviderName(md *hub.ModelDeployment, caps *capabilities.Resolved, l *diag.List) bool {
	name := md.Spec.ProviderName()
	switch {
	case name == "" || caps.Provider(name) != nil:
		return true
	case !slices.Contains(capabilities.ProviderNames(), name):
		known := capabilities.ProviderNames()
		l.Errorf("spec.provider.name", "%q is not a known provider: must be one of %s%s", name, hub.QuoteList(known), nearest.Suggestion(name, known))
	default:
		l.Errorf("spec.provider.name", "provider %q is not installed according to %s: installed providers are %s; add it to the capability file if the cluster runs it, or name one of those", name, caps.Source, installed(caps))
	}
	return false
}

// checkCompatibility applies upstream's provider/engine compatibility check
// (shared by its webhook and reconciler) against the capability file.
func checkCompatibility(md *hub.ModelDeployment, engine string, caps *capabilities.Resolved, l *diag.List) {
	s := &md.Spec
	name, mode := s.ProviderName(), s.Mode()
	if name != "" {
		p := caps.Provider(name)
		if p == nil {
			return // checkProviderName has refused it
		}
		if !p.Ready {
			l.Warnf(diag.NotReadyProvider, "spec.provider.name", "provider %q is marked not ready in %s; rendering it anyway because it is named explicitly", name, caps.Source)
		}
		ec := p.Engine(engine)
		if ec == nil {
			l.Errorf("spec.engine.type", "provider %s does not support engine %s (it supports: %s)", name, engine, engineNames(p))
			return
		}
		if !slices.Contains(ec.ServingModes, mode) {
			l.Errorf("spec.serving.mode", "provider %s does not support %s mode for engine %s", name, mode, engine)
			return
		}
		if mode == hub.ModeAggregated && s.GPUCount() == 0 && !ec.CPUSupport && !hub.IsMocker(md) {
			l.Errorf("spec.resources.gpu.count", "%s engine on provider %s requires GPU (set resources.gpu.count > 0)", engine, name)
		}
		return
	}
	if mode != hub.ModeAggregated || s.GPUCount() > 0 || len(caps.Providers) == 0 {
		return
	}
	for _, p := range caps.Providers {
		if ec := p.Engine(engine); ec != nil && ec.CPUSupport {
			return
		}
	}
	l.Errorf("spec.resources.gpu.count", "%s engine requires GPU (set resources.gpu.count > 0)", engine)
}

// selectProvider picks the provider: the explicit one; else the one an
// earlier render chose while it is still a candidate (upstream never
// re-selects); else the highest-priority candidate by CEL rules, ties to the
// smallest name. The reason names the winning rule, the candidates that
// lost and the installed providers that were no candidates, so a reviewer
// sees why without reading the capability file.
func selectProvider(md *hub.ModelDeployment, engine string, caps *capabilities.Resolved, l *diag.List) (string, string) {
	s := &md.Spec
	if name := s.ProviderName(); name != "" {
		return name, reasonExplicitProvider
	}
	gpu, mode := hasGPU(s), s.Mode()
	specData := celSpec(s, engine)
	var cands []candidate
	var excluded []string
	for _, p := range caps.Providers {
		ec := p.Engine(engine)
		switch {
		case !p.Ready:
			excluded = append(excluded, p.Name+" (not ready)")
			continue
		case ec == nil:
			excluded = append(excluded, p.Name+" (no "+engine+" engine)")
			continue
		case !engineServes(ec, gpu, mode):
			excluded = append(excluded, fmt.Sprintf("%s (%s does not serve gpu=%t, mode=%s)", p.Name, engine, gpu, mode))
			continue
		}
		c := candidate{name: p.Name}
		for _, r := range caps.Rules(p.Name) {
			if r.Priority <= c.priority {
				continue
			}
			match, err := caps.Match(r, specData)
			if err != nil && !errors.Is(err, capabilities.ErrRuleTooCostly) {
				l.Errorf("spec.provider.name", "cannot select a provider with the rules of %s: %v", caps.Source, err)
				return "", ""
			}
			if err != nil {
				l.Errorf("spec.provider.name", "cannot select a provider: selection rule %s of provider %q at `%s` in %s costs more than %d CEL cost units; a selection rule must not iterate that much (set `spec.provider.name` to skip the rules)", r, p.Name, r.Field, caps.Source, capabilities.RuleCostLimit)
				return "", ""
			}
			if match {
				c.priority, c.rule = r.Priority, r.Condition
			}
		}
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		l.Errorf("spec.provider.name", "no compatible provider found for this configuration (engine=%s, gpu=%t, mode=%s) among the ready providers of %s: %s", engine, gpu, mode, caps.Source, installed(caps))
		return "", ""
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].priority != cands[j].priority {
			return cands[i].priority > cands[j].priority
		}
		return cands[i].name < cands[j].name
	})
	best := cands[0].name
	reason := selectionReason(engine, gpu, mode, cands, excluded)
	if prev := md.Annotations[hub.AnnotationProvider]; prev != "" && prev != best {
		for _, c := range cands {
			if c.name == prev {
				l.Warnf(diag.StickySelection, "spec.provider.name", "%s now auto-selects provider %q, but this ModelDeployment keeps %q chosen by an earlier render (switching providers replaces every workload object); set `spec.provider.name: %s` to switch, or `spec.provider.name: %s` to pin", caps.Source, best, prev, best, prev)
				return prev, fmt.Sprintf("kept %s, chosen by an earlier render (selection is sticky); the rules now pick: %s", prev, reason)
			}
		}
		l.Warnf(diag.StickySelection, "spec.provider.name", "provider %q chosen by an earlier render is no longer a ready, compatible provider in %s; switching to %q", prev, caps.Source, best)
	}
	return best, reason
}

// candidate is a provider that can serve the model, with the priority and
// condition of its highest matching selection rule (0 and "" when none
// matched).
type candidate struct {
	name     string
	priority int32
	rule     string
}

func (c candidate) String() string {
	if c.rule == "" {
		return c.name + " (no rule matched, priority 0)"
	}
	return fmt.Sprintf("%s (rule %q, priority %d)", c.name, c.rule, c.priority)
}

// selectionReason words why cands[0] won: upstream's "matched
// capabilities" summary, then the winning rule, the candidates that lost
// (and whether a tie was broken by name) and the providers excluded.
func selectionReason(engine string, gpu bool, mode string, cands []candidate, excluded []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "matched capabilities: engine=%s, gpu=%t, mode=%s; won: %s", engine, gpu, mode, cands[0])
	if len(cands) > 1 {
		lost := make([]string, 0, len(cands)-1)
		for _, c := range cands[1:] {
			lost = append(lost, c.String())
		}
		b.WriteString("; lost: " + strings.Join(lost, ", "))
		if cands[1].priority == cands[0].priority {
			b.WriteString("; the tie went to the first name")
		}
	}
	if len(excluded) > 0 {
		b.WriteString("; not candidates: " + strings.Join(excluded, ", "))
	}
	return b.String()
}

// celSpec builds the data CEL rules see, shaped like upstream's JSON of its
// typed spec: fields that upstream serialises with `omitempty` (false,
// 0, "" and empty collections) are absent, `engine` is always an object, and
// an empty engine type is replaced by the resolved engine.
func celSpec(s *hub.ModelDeploymentSpec, engine string) map[string]any {
	data, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	m = omitEmpty(m, "").(map[string]any)
	e, _ := m["engine"].(map[string]any)
	if e == nil {
		e = map[string]any{}
		m["engine"] = e
	}
	if _, ok := e["type"]; !ok {
		e["type"] = engine
	}
	return m
}

// pointerFields are upstream fields that are pointers and so survive
// `omitempty` with a zero value; mapFields are Go maps, which `omitempty`
// drops when empty (an empty struct pointer, by contrast, stays as {}).
var (
	pointerFields = map[string]bool{"contextLength": true, "enabled": true, "storageClassName": true}
	mapFields     = map[string]bool{"nodeSelector": true, "args": true, "labels": true, "annotations": true}
)

func omitEmpty(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if r := omitEmpty(e, k); r == nil {
				delete(t, k)
			} else {
				t[k] = r
			}
		}
		if len(t) == 0 && mapFields[key] {
			return nil
		}
		return t
	case []any:
		if len(t) == 0 {
			return nil
		}
		for i := range t {
			t[i] = omitEmpty(t[i], "")
		}
		return t
	case bool:
		if !t && !pointerFields[key] {
			return nil
		}
	case float64:
		if t == 0 && !pointerFields[key] {
			return nil
		}
	case string:
		if t == "" && !pointerFields[key] {
			return nil
		}
	}
	return v
}

func installed(caps *capabilities.Resolved) string {
	if len(caps.Providers) == 0 {
		return "none"
	}
	var names []string
	for _, p := range caps.Providers {
		n := p.Name
		if !p.Ready {
			n += " (not ready)"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

func engineNames(p *hub.ResolvedProvider) string {
	var names []string
	for _, e := range p.Engines {
		names = append(names, e.Name)
	}
	return strings.Join(names, ", ")
}
