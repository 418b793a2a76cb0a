package gateway

import (
	"fmt"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// Facts of the Gateway API Inference Extension integration.
const (
	// ModelHeader is the header the routes match; the Body-Based Router the
	// platform team installs copies the request body's `model` into it.
	ModelHeader = "X-Gateway-Model-Name"
	// RequestTimeout bounds one request through the gateway; generation of
	// long completions needs far more than proxies' usual 15 s.
	RequestTimeout = "300s"
	// EndpointPickerPort is the gRPC ext-proc port of the endpoint picker,
	// EndpointPickerHealthPort its gRPC health port.
	EndpointPickerPort       = 9002
	EndpointPickerHealthPort = 9003

	PoolGroupV1       = "inference.networking.k8s.io"
	PoolGroupV1Alpha2 = "inference.networking.x-k8s.io"
	PoolKind          = "InferencePool"
)

// plan is every decision behind one ModelDeployment's gateway objects.
type plan struct {
	md   *hub.ModelDeployment
	caps *hub.GatewayCapability
	// engine is the provider's gateway behaviour for the engine, never nil.
	engine *hub.GatewayCapabilities
	// group and version of the InferencePool API the cluster serves.
	group, version string
	pool           poolRef
	backend        providers.Backend
	modelName      string
	placement      *providers.PoolPlacement
	// adapterKind names each LoRA adapter to the picker: InferenceModel,
	// InferenceObjective, or "" for no object (adapters.go).
	adapterKind string
	// formats are the API formats the engine answers through the provider
	// (hub.EffectiveAPIFormats): what the route sends to the pool.
	formats []string
}

// poolRef names the InferencePool the route sends traffic to.
type poolRef struct {
	name, namespace string
	// managed is true when the provider's operator creates the pool.
	managed bool
}

// Render returns the gateway objects of one ModelDeployment: nothing when
// the capability file declares no Gateway API Inference Extension or
// `spec.gateway.enabled` is false; otherwise the InferencePool and its
// endpoint picker (unless the provider manages its own pool), the LoRA
// adapters' InferenceObjectives or InferenceModels (adapters.go), the
// HTTPRoute (unless `spec.gateway.httpRouteRef` names the user's own), and
// a ReferenceGrant for a pool in another namespace.
func Render(req *providers.Request, p providers.Provider) ([]providers.Object, diag.List) {
	var l diag.List
	pl, ok := newPlan(req, p, &l)
	if !ok {
		return nil, l
	}
	var objs []providers.Object
	if !pl.pool.managed {
		picker, err := pl.endpointPicker()
		if err != nil {
			l.Errorf("", "internal error rendering the endpoint picker: %v", err)
			return nil, l
		}
		objs = append(objs, pl.inferencePool())
		objs = append(objs, picker...)
	}
	// Also beside a pool the provider manages (Dynamo's): its picker reads
	// the objectives the route's adapter rules name.
	objs = append(objs, pl.adapterObjects()...)
	if pl.md.Spec.Gateway == nil || pl.md.Spec.Gateway.HTTPRouteRef == "" {
		route, rl := pl.httpRoute()
		l = append(l, rl...)
		objs = append(objs, route)
	}
	if pl.pool.namespace != pl.md.Namespace {
		objs = append(objs, pl.referenceGrant())
	}
	return objs, l
}

func newPlan(req *providers.Request, p providers.Provider, l *diag.List) (*plan, bool) {
	md := req.MD
	caps := req.Caps.Gateway
	switch {
	case caps == nil:
		unserved(req, l)
		return nil, false
	case !req.GatewayEnabled && hub.IsMocker(md):
		l.Infof("spec.gateway", "no gateway objects: the Dynamo mocker serves no real model, and upstream AI Runway routes nothing to it")
		return nil, false
	case !req.GatewayEnabled:
		return nil, false
	}
	pl := &plan{md: md, caps: caps, engine: engineGateway(req), placement: req.Placement.ForCPU(), formats: routedFormats(req)}
	pl.group, pl.version, _ = strings.Cut(caps.InferencePoolVersion, "/")
	pl.pool = poolFor(md, pl.engine)
	pl.adapterKind = pl.adapterKindFor()
	n := len(*l)
	if !pl.pool.managed {
		r, ok := p.(providers.Routable)
		if !ok {
			l.Errorf("spec.gateway", "the %s provider neither manages its own InferencePool nor tells which pods an InferencePool should select; keep `managesInferencePool: true` in its engine capabilities, or set `spec.gateway.enabled: false`", req.Provider.Name)
			return nil, false
		}
		pl.backend = r.Backend(req)
		checkNames(md, l)
	}
	if pl.pool.managed && pl.group != PoolGroupV1 {
		l.Errorf("spec.gateway.enabled", "the %s provider's operator creates its InferencePool %q as %s/v1, but the capability file declares %s pools (`spec.gateway.inferencePoolVersion`); set `spec.gateway.enabled: false` to serve through the provider's own frontend, or upgrade the cluster to the v1 InferencePool", req.Provider.Name, pl.pool.name, PoolGroupV1, caps.InferencePoolVersion)
	}
	if routed := md.Spec.Gateway == nil || md.Spec.Gateway.HTTPRouteRef == ""; routed {
		pl.modelName = modelName(md, pl.engine, pl.backend, l)
	}
	if pl.pool.namespace != md.Namespace && md.Namespace == "" {
		l.Errorf("metadata.namespace", "must be set: the InferencePool %q of the %s provider lives in namespace %q, and the ReferenceGrant that lets this ModelDeployment's HTTPRoute reach it must name the route's namespace", pl.pool.name, req.Provider.Name, pl.pool.namespace)
	}
	return pl, !(*l)[n:].HasErrors()
}

// routedFormats are the API formats the engine answers through the
// provider; Chat Completions alone for an engine the provider does not
// declare (selection refused that before the gateway renders anything).
func routedFormats(req *providers.Request) []string {
	if f := req.Provider.Engine(req.Engine).EffectiveAPIFormats(); len(f) > 0 {
		return f
	}
	return []string{hub.APIFormatOpenAIChat}
}

// noGateway is why nothing a model asks of a gateway is rendered.
const noGateway = "the capability file declares no Gateway API Inference Extension (`spec.gateway`)"

// unserved reports what a model asks of the gateway of a cluster that has
// none. `spec.gateway.parentRef` is an error: the model names the Gateway
// it is to be reached through, and a render without the route would look
// like a success. The other fields only tune routing, so a model that
// clusters with and without a gateway share still renders on both, with a
// warning. `spec.gateway.enabled: false` (a patch in the overlay of a
// cluster without a gateway) asks for nothing.
func unserved(req *providers.Request, l *diag.List) {
	md := req.MD
	g := md.Spec.Gateway
	if g == nil || hub.IsMocker(md) || g.Enabled != nil && !*g.Enabled {
		return
	}
	if g.ParentRef != nil && g.HTTPRouteRef == "" {
		l.Errorf("spec.gateway.parentRef", "names the Gateway %s, but %s, so no HTTPRoute to it can be rendered; declare the cluster's gateway in the capability file (`airunway-render capabilities discover` writes it), or set `spec.gateway.enabled: false` for a cluster that serves the model without one", gatewayName(g.ParentRef), noGateway)
	}
	if g.HTTPRouteRef != "" {
		l.Warnf(diag.IgnoredField, "spec.gateway.httpRouteRef", "is ignored: %s, so no InferencePool is rendered for HTTPRoute %q to send requests to", noGateway, g.HTTPRouteRef)
	}
	if g.ModelName != "" {
		l.Warnf(diag.IgnoredField, "spec.gateway.modelName", "is ignored: %s, so no HTTPRoute matches it", noGateway)
	}
	// A provider managing its own pool reports its own topology choice.
	if g.Enabled != nil && *g.Enabled && !engineGateway(req).ManagesInferencePool {
		l.Warnf(diag.IgnoredField, "spec.gateway.enabled", "is true, but %s, so no InferencePool or HTTPRoute is rendered", noGateway)
	}
}

// gatewayName is a Gateway reference as messages name it.
func gatewayName(ref *hub.GatewayRef) string {
	if ref.Namespace == "" {
		return fmt.Sprintf("%q (in the model's namespace)", ref.Name)
	}
	return fmt.Sprintf("%q in namespace %q", ref.Name, ref.Namespace)
}

// engineGateway is the provider's gateway capability for the engine from
// the capability file (built-in or overridden), never nil.
func engineGateway(req *providers.Request) *hub.GatewayCapabilities {
	if e := req.Provider.Engine(req.Engine); e != nil && e.Gateway != nil {
		return e.Gateway
	}
	return &hub.GatewayCapabilities{}
}

// poolFor names the pool: the provider's own (its name pattern with
// `{name}` and `{namespace}` substituted, as upstream does), else one named
// like the ModelDeployment.
func poolFor(md *hub.ModelDeployment, g *hub.GatewayCapabilities) poolRef {
	if !g.ManagesInferencePool {
		return poolRef{name: md.Name, namespace: md.Namespace}
	}
	expand := strings.NewReplacer("{name}", md.Name, "{namespace}", md.Namespace).Replace
	ref := poolRef{name: expand(g.InferencePoolNamePattern), namespace: expand(g.InferencePoolNamespace), managed: true}
	if ref.name == "" {
		ref.name = md.Name
	}
	if ref.namespace == "" {
		ref.namespace = md.Namespace
	}
	return ref
}

// checkNames refuses a ModelDeployment name that cannot name the endpoint
// picker's Service, which only the API server would otherwise reject: one
// that starts with a digit (the length is handled by eppName).
func checkNames(md *hub.ModelDeployment, l *diag.List) {
	if msgs := utilvalidation.IsDNS1035Label(eppName(md)); len(msgs) > 0 {
		l.Errorf("metadata.name", "%q cannot name the endpoint picker's Service %q: %s", md.Name, eppName(md), strings.Join(msgs, "; "))
	}
}

// modelName is the name the route matches in the model header:
// `spec.gateway.modelName` > `spec.model.servedName` (unless the provider
// ignores it) > the provider's own rule > `spec.model.id`. Upstream asks the
// running server (`/v1/models`) before falling back to the id; a renderer
// cannot, so a model without any of them is an error.
func modelName(md *hub.ModelDeployment, g *hub.GatewayCapabilities, b providers.Backend, l *diag.List) string {
	s := &md.Spec
	switch {
	case s.Gateway != nil && s.Gateway.ModelName != "":
		return s.Gateway.ModelName
	case s.Model.ServedName != "" && !g.IgnoresServedName && !b.IgnoresServedName:
		return s.Model.ServedName
	case b.ServedName != "":
		return b.ServedName
	case s.Model.ID != "":
		return s.Model.ID
	}
	l.Errorf("spec.gateway.modelName", "must be set: the HTTPRoute matches requests by model name, and a %s model without `spec.model.id` or `spec.model.servedName` gives the renderer no name to match (upstream would ask the running server)", fmt.Sprintf("%q", s.Model.Source))
	return ""
}

// labels of every endpoint-picker object; the pods must not carry
// `airunway.ai/model-deployment`, or the pool would route to its own picker.
func (pl *plan) labels() map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       eppName(pl.md),
		"app.kubernetes.io/instance":   pl.md.Name,
		"app.kubernetes.io/managed-by": hub.ManagedByValue,
	}
}

// objectLabels are the labels of the pool, route and grant: the upstream
// provider labels, so the status reporter finds them like provider objects.
func (pl *plan) objectLabels() map[string]string {
	return map[string]string{
		hub.LabelManagedBy:  hub.ManagedByValue,
		hub.LabelDeployment: pl.md.Name,
	}
}

func (pl *plan) meta(name, namespace string, labels map[string]string) map[string]any {
	m := map[string]any{
		"name":        name,
		"labels":      providers.StringMap(labels),
		"annotations": providers.StringMap(providers.GeneratedAnnotations(pl.md, nil)),
	}
	if namespace != "" {
		m["namespace"] = namespace
	}
	return m
}
