package render

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/gateway"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// Options configure one run.
type Options struct {
	// Capabilities, when set, come from the function config or the CLI's
	// --capabilities flag and win over a ClusterCapabilities input item.
	Capabilities *capabilities.Resolved
	// Providers overrides the provider registry (tests); nil means Builtin.
	Providers map[string]providers.Provider
	// Encode, when set, turns every output object into bytes as soon as it
	// is rendered, and Result carries Encoded instead of Items. A run then
	// holds YAML text instead of node trees: for 10,000 models about
	// 29 MiB instead of more than 1 GiB (BENCHMARKS.md). Besides the bytes
	// it returns a key of its own, kept with them (the KRM function sorts
	// by it once more, as the SDK would; the CLI the file of the object).
	// Nil bytes leave the object out of the output; it still counts when
	// objects are checked for collisions.
	Encode func(*yaml.RNode) (yaml []byte, key string, err error)
	// EncodeConcurrently lets Render call Encode from several goroutines
	// at once, for objects in no particular order, as each model is
	// rendered; set it only for an Encode safe for that
	// (manifest.EncodeItem is). Without it, Encode is called for one
	// object at a time in the order of the queue, from the goroutine that
	// called Render.
	EncodeConcurrently bool
	// EncodeObject encodes an object a provider rendered from the object
	// itself, as Encode would encode the node Render makes of it with the
	// annotations given (key and value nodes, in pairs, to add at the end
	// of its `metadata.annotations`): without the node, a fifth of the
	// function's allocations. ok false leaves the object to the node and
	// Encode. It is called on the workers, so it must be safe to call
	// from several goroutines at once (manifest.EncodeObjectItem is).
	EncodeObject func(obj map[string]any, annotations []*yaml.Node) (yaml []byte, key string, ok bool)
	// Workers is how many goroutines render models at once: 0 is
	// GOMAXPROCS, 1 renders them in turn on the caller's goroutine. The
	// result is the same for any number (render/inorder.go).
	Workers int
	// Warnings is applied after the capability file's own warning policy
	// (the CLI's --ignore-warnings and --warnings-as-errors).
	Warnings diag.Policy
	// SourceFile, when set, names the file whose lines an input item's
	// YAML nodes count ("" when not known): a problem in a field of an
	// item whose path annotation names that file gets the field's line.
	// The CLI, which parses the files itself, sets it; the KRM function
	// cannot, as a ResourceList's items count the list's lines.
	SourceFile func(*yaml.RNode) string
	// Models are model facts the caller read from local directories
	// (fit.ReadDir), by `spec.model.id`: they win over the ModelCatalogs
	// among the items and the model catalog when the memory fit is
	// checked. Render itself reads no file.
	Models map[string]fit.Model
	// WeighUnassigned renders a model assigned to no cluster even where
	// the capability file's fleet refuses such models: `plan --fleet`
	// weighs a new model on every cluster before it assigns it.
	WeighUnassigned bool
	// ReleaseItems lets Render go of each input item once it is done with
	// it: it sets the caller's items to nil at the start and lets go of
	// each model once it is rendered and encoded, so that a run over
	// thousands of models holds each model's tree only while it renders it
	// (with Encode, the output is text). The caller must not read items
	// afterwards: the KRM function reads its input again to write a failed
	// run's items as they came.
	ReleaseItems bool
	// Deferred are models the caller read and let go of (Defer), rendered
	// with the ModelDeployments among items, in the same order: each is
	// parsed again when it is rendered, and let go of once it is encoded.
	// Deferred models let go of the items too (ReleaseItems).
	Deferred []Deferred
	// KeepSkipped passes a model that is not this cluster's (render/
	// cluster.go) through unchanged instead of leaving it out: kpt writes
	// the function's output back to the package, and would delete its
	// file.
	KeepSkipped bool
}

// Result of a run. Items and Encoded are nil whenever Problems has an
// error.
type Result struct {
	Items    []*yaml.RNode
	Encoded  []Encoded
	Problems diag.List
	// Fits are the memory fit's verdicts, one per GPU component of each
	// model that was placed, in the models' order (render/fit.go): what
	// was estimated, or why nothing was. Set even when Problems has an
	// error, so that a caller can show which model stopped fitting.
	Fits []fit.Verdict
}

// Encoded is one output object as Options.Encode wrote it.
type Encoded struct {
	// SortKey is the key Render orders output by: apiVersion, kind,
	// namespace and name, separated by spaces.
	SortKey string
	// CallerKey is the key Options.Encode returned.
	CallerKey string
	YAML      []byte
}

// Render renders every ModelDeployment among items and returns the new item
// list: items it does not own unchanged, each ModelDeployment annotated with
// the renderer's decisions, and the generated objects. Objects generated by
// an earlier run are dropped and rendered again, so Render is idempotent and
// objects of deleted ModelDeployments disappear.
func Render(items []*yaml.RNode, opts Options) Result {
	in := classify(items)
	problems := in.problems
	if len(in.models) == 0 && len(opts.Deferred) == 0 && !in.problems.HasErrors() {
		problems.Warnf(diag.NoModels, "", "no ModelDeployment among the inputs: nothing was rendered and every object passes through unchanged; check the paths given, or that the kustomization lists the models")
	}
	caps := opts.Capabilities
	switch {
	case caps != nil:
		// kpt passes a configPath file both as the function config and as
		// an item; only a different capability object is worth a warning.
		for _, c := range in.capabilities {
			if c.GetName() != caps.Name {
				problems = append(problems, diag.Problem{Severity: diag.Warning, Code: diag.CapabilitiesInput, Resource: identity(c), File: fileOf(c),
					Message: fmt.Sprintf("ignored: the function config already provides the cluster capabilities (%s)", caps.Source)})
			}
		}
	case caps == nil && len(in.capabilities) > 1:
		for _, c := range in.capabilities {
			problems = append(problems, diag.Problem{Severity: diag.Error, Resource: identity(c), File: fileOf(c),
				Message: fmt.Sprintf("found %d ClusterCapabilities objects in the input: exactly one cluster must be described per run", len(in.capabilities))})
		}
	case caps == nil && len(in.capabilities) == 1:
		c := in.capabilities[0]
		var l diag.List
		caps, l = capabilities.ResolveNode(c)
		problems = append(problems, l.Attach(identity(c), fileOf(c))...)
	}
	if caps == nil {
		caps = capabilities.Default()
	}
	registry := opts.Providers
	if registry == nil {
		registry = builtin.ByName()
	}
	// The facts of the run's ModelCatalogs, under the caller's.
	models, l := CatalogFacts(in.catalogs, opts.Models, nil)
	problems = append(problems, l...)

	var lines *lineIndex
	release := opts.ReleaseItems || len(opts.Deferred) > 0
	if release {
		// The problems found so far name items that no list keeps below.
		lines = newLineIndex(items, opts.SourceFile, opts.Deferred)
		problems = withLines(problems, items, opts.SourceFile)
		clear(items)
	}
	out := &output{encode: opts.Encode}
	for i, n := range in.passThrough {
		l := out.add(n, nil)
		if release {
			lines.attach(l, n)
			in.passThrough[i] = nil
		}
		problems = append(problems, l...)
	}
	queue := modelQueue(in.models, opts.Deferred)
	in.models = nil // the queue holds them, each until it is rendered
	run := &modelRun{caps: caps, registry: registry, models: models, opts: opts, out: out, seen: map[string]string{}}
	var fits []fit.Verdict
	var fleet fleetReport
	workers := opts.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	inOrder(len(queue), workers, func(i int, t *turn) renderedModel {
		return run.render(queue[i], t)
	}, func(i int, m renderedModel) {
		if problems = append(problems, m.taken...); m.node == nil {
			return
		}
		before := len(problems)
		switch {
		case m.firstIn != nil:
			where := ""
			if *m.firstIn != "" {
				where = " (also in " + *m.firstIn + ")"
			}
			problems = append(problems, diag.Problem{Severity: diag.Error, Resource: m.id, File: m.file, Message: "is defined twice" + where + "; each ModelDeployment must appear once"})
		case len(m.assignment) > 0:
			problems = append(problems, m.assignment.Attach(m.id, m.file)...)
		default:
			fits = append(fits, m.fits...)
			problems = append(problems, m.problems.Attach(m.id, m.file)...)
			fleet.count(m.node, m.id, m.skip, caps)
			for _, o := range m.objects {
				problems = append(problems, out.emit(o)...)
			}
		}
		if release {
			// The lines withLines gives at the end, while the model is
			// at hand; then the output's text is all that is left of it.
			lines.attach(problems[before:], m.node)
		}
		queue[i] = queued{}
	})
	problems = append(problems, fleet.problems(caps)...)
	problems = append(problems, collisions(out.ids)...)
	problems = problems.Apply(caps.Warnings).Apply(opts.Warnings)
	if release {
		// What is left: the capability files and catalogs.
		problems = withLines(problems, slices.Concat(in.capabilities, in.catalogs), opts.SourceFile)
	} else {
		problems = withLines(problems, items, opts.SourceFile)
	}
	if problems.HasErrors() {
		return Result{Problems: problems, Fits: fits}
	}
	res := out.result(problems)
	res.Fits = fits
	return res
}

// queued is a model waiting to be rendered: its tree, or a Deferred, and
// its identity, the order of the queue.
type queued struct {
	node     *yaml.RNode
	deferred *Deferred
	key      string
}

// modelQueue is the models in the order Render renders them: by identity,
// those among the items before the deferred ones of the same identity.
func modelQueue(models []*yaml.RNode, deferred []Deferred) []queued {
	q := make([]queued, 0, len(models)+len(deferred))
	for _, n := range models {
		q = append(q, queued{node: n, key: identity(n).String()})
	}
	for i := range deferred {
		q = append(q, queued{deferred: &deferred[i], key: deferred[i].id.String()})
	}
	slices.SortStableFunc(q, func(a, b queued) int { return strings.Compare(a.key, b.key) })
	return q
}

// take is the model's tree, parsed again when it was deferred.
func (q queued) take() (*yaml.RNode, diag.List) {
	if q.deferred == nil {
		return q.node, nil
	}
	n, err := q.deferred.parse()
	if err != nil {
		return nil, diag.List{{Severity: diag.Error, Resource: q.deferred.id, File: q.deferred.file, Message: fmt.Sprintf("cannot be read again (internal error): %v", err)}}
	}
	return n, nil
}

// decodeForCluster decodes a model (DecodeModel) and checks its cluster
// selector; md is nil when the model is refused, or skipped (skip says
// why).
func decodeForCluster(node *yaml.RNode, caps *capabilities.Resolved) (md *hub.ModelDeployment, l diag.List, skip string) {
	md, l = DecodeModel(node)
	if l.HasErrors() {
		return nil, l, ""
	}
	if skip = selectorSkip(md, caps, &l); skip != "" || l.HasErrors() {
		return nil, l, skip
	}
	return md, l, ""
}

// DecodeModel decodes, defaults, converts and validates a model, as the
// first stages of every render do; a model with an error in the list is
// not to be used.
func DecodeModel(node *yaml.RNode) (*hub.ModelDeployment, diag.List) {
	js, l := manifest.ObjectJSON(node)
	if l.HasErrors() {
		return nil, l
	}
	// Decoding, defaulting and conversion to the hub belong to the served
	// version the model is written in.
	md, l := versions.DecodeModelDeployment(node.GetApiVersion(), js)
	if md == nil {
		if !l.HasErrors() {
			l.Errorf("", "cannot decode the model")
		}
		return nil, l
	}
	return md, append(l, hub.ValidateModelDeployment(md)...)
}

// renderDecided runs place -> render for a valid model whose engine and
// provider are decided: the model annotated, and the objects rendered for
// it (nil, nil when it is refused).
func renderDecided(node *yaml.RNode, md *hub.ModelDeployment, d Decision, caps *capabilities.Resolved, registry map[string]providers.Provider, models map[string]fit.Model, l diag.List) (annotated *yaml.RNode, rendered []providers.Object, fits []fit.Verdict, _ diag.List) {
	p := registry[d.Provider]
	if p == nil {
		l.Errorf("spec.provider.name", "provider %q was selected by the capability file's rules, but this release of airunway-render renders only %s; set `spec.provider.name` to one of those", d.Provider, strings.Join(slices.Sorted(maps.Keys(registry)), ", "))
		return nil, nil, fits, l
	}
	n := len(l)
	placement := place(md, caps, p, &l)
	if placement == nil || l[n:].HasErrors() {
		return nil, nil, fits, l
	}
	d.NodePool, d.NodePoolReason = placement.Annotation, placement.Reason
	checkAccess(md, models, &l)
	if fits = checkFit(md, d.Engine, d.Provider, caps, p, placement, models, &l); l[n:].HasErrors() {
		return nil, nil, fits, l
	}
	d.HardwareFit, d.HardwareFitReason = hardwareVerdict(fits)
	if pc := caps.Provider(d.Provider); pc != nil {
		d.ProviderVersion = pc.Version
		d.APIFormats = hub.JoinAPIFormats(pc.Engine(d.Engine).EffectiveAPIFormats())
	}
	req := &providers.Request{MD: md, Engine: d.Engine, Provider: caps.Provider(d.Provider), Caps: &caps.ResolvedCapabilities,
		Placement: placement, GatewayEnabled: md.GatewayEnabled(caps.Gateway), StartupSeconds: startupSeconds(md, &caps.ResolvedCapabilities, models, &l)}
	if b := capabilities.BuiltinFor(d.Provider); b != nil {
		l = append(l, checkEligible(b, md, d.Engine)...)
	}
	checkEngineArgs(md, d.Engine, p, req.Provider, &l)
	if l = append(l, p.Check(req)...); l.HasErrors() {
		return nil, nil, fits, l
	}
	rendered, rl := p.Render(req)
	if l = append(l, rl...); l.HasErrors() {
		return nil, nil, fits, l
	}
	gw, gl := gateway.Render(req, p)
	if l = append(l, gl...); l.HasErrors() {
		return nil, nil, fits, l
	}
	rendered = append(rendered, gw...)
	d.ServedName = servedName(p, req)
	if w, ok := p.(providers.WorkloadChooser); ok {
		d.Workload = w.Workload(req)
	}
	if e, ok := p.(providers.Endpointer); ok {
		d.Endpoint = e.Endpoint(md).String()
	}
	annotated, err := annotateModel(node, d)
	if err != nil {
		l.Errorf("metadata.annotations", "cannot annotate: %v", err)
		return nil, nil, fits, l
	}
	return annotated, rendered, fits, l
}

func decide(md *hub.ModelDeployment, caps *capabilities.Resolved, l *diag.List) (Decision, bool) {
	var d Decision
	if !checkProviderName(md, caps, l) {
		return d, false
	}
	d.Engine, d.EngineReason = selectEngine(md, caps, l)
	if d.Engine == "" {
		return d, false
	}
	n := len(*l)
	checkCompatibility(md, d.Engine, caps, l)
	if (*l)[n:].HasErrors() {
		return d, false
	}
	d.Provider, d.ProviderReason = selectProvider(md, d.Engine, caps, l)
	d.EngineReason = engineReason(d.EngineReason, d.Provider)
	return d, d.Provider != ""
}

// servedName is the model name the provider's server answers to: the
// provider's own when it decides it (KAITO's presets), none when the
// server ignores the name and the provider names none (llama.cpp), else
// spec.model.servedName or the id, as the engines are given it.
func servedName(p providers.Provider, req *providers.Request) string {
	if r, ok := p.(providers.Routable); ok {
		b := r.Backend(req)
		switch {
		case b.ServedName != "":
			return b.ServedName
		case b.IgnoresServedName:
			return ""
		}
	}
	if name := req.MD.Spec.Model.ServedName; name != "" {
		return name
	}
	return req.MD.Spec.Model.ID
}
