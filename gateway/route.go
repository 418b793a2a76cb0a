package gateway

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// Gateway API constants of the objects rendered here.
const (
	GatewayGroup        = "gateway.networking.k8s.io"
	RouteAPIVersion     = GatewayGroup + "/v1"
	GrantAPIVersion     = GatewayGroup + "/v1beta1"
	ChannelStandard     = "standard"
	ChannelExperimental = "experimental"
)

// RouteField is an HTTPRoute field the renderer writes that not every
// supported Gateway API release serves, with the first release serving it
// in each channel. Every other field the renderer writes is served by both
// channels of every supported release; TestRouteFieldsMatchSchemas checks
// both claims against the real CRD schemas.
type RouteField struct {
	// Path from the object root; "[]" steps into list items.
	Path                   []string
	Standard, Experimental string
}

// RouteFields are the release-dependent HTTPRoute fields.
var RouteFields = []RouteField{
	// Request timeouts went standard in Gateway API v1.2.0 (GEP-1742).
	{Path: []string{"spec", "rules", "[]", "timeouts"}, Standard: "1.2.0", Experimental: "1.0.0"},
}

// Served reports whether a Gateway API release and channel serve the field.
func (f RouteField) Served(release *version.Version, channel string) bool {
	since := f.Standard
	if channel == ChannelExperimental {
		since = f.Experimental
	}
	v, err := hub.ParseRelease(since)
	return err == nil && release.AtLeast(v)
}

// httpRoute renders the route from the parent Gateway (the model's own,
// else the capability file's) to the pool, matching the model name header,
// then drops what the declared Gateway API release and channel do not
// serve, with a warning: a field the API server does not know would be
// pruned or rejected in the cluster.
func (pl *plan) httpRoute() (providers.Object, diag.List) {
	ref := pl.caps.ParentRef
	if own := pl.md.Spec.GatewayParentRef(); own != nil {
		ref = own
	}
	parent := map[string]any{"name": ref.Name}
	if ref.Namespace != "" {
		parent["namespace"] = ref.Namespace
	}
	backend := map[string]any{"group": pl.group, "kind": PoolKind, "name": pl.pool.name}
	if pl.pool.namespace != pl.md.Namespace {
		backend["namespace"] = pl.pool.namespace
	}
	backends := []any{backend}
	timeouts := map[string]any{"request": RequestTimeout}
	// Each LoRA adapter is served by the model's pods under its own name:
	// one more match to the same pool, or, where the Inference Extension
	// has objectives, a rule of its own that names the adapter's.
	matches := []any{modelMatch(pl.modelName)}
	var adapterRules []any
	for _, a := range pl.md.Spec.Adapters {
		if pl.adapterKind != KindObjective {
			matches = append(matches, modelMatch(a.Name))
			continue
		}
		adapterRules = append(adapterRules, map[string]any{
			"matches": []any{modelMatch(a.Name)},
			"filters": []any{map[string]any{"type": "RequestHeaderModifier", "requestHeaderModifier": map[string]any{
				"set": []any{map[string]any{"name": ObjectiveHeader, "value": pl.adapterObjectName(a)}},
			}}},
			"backendRefs": backends,
			"timeouts":    timeouts,
		})
	}
	rules := append([]any{map[string]any{"matches": matches, "backendRefs": backends, "timeouts": timeouts}}, adapterRules...)
	route := providers.Object{
		"apiVersion": RouteAPIVersion,
		"kind":       "HTTPRoute",
		"metadata":   pl.meta(pl.md.Name, pl.md.Namespace, pl.objectLabels()),
		"spec": map[string]any{
			"parentRefs": []any{parent},
			"rules":      rules,
		},
	}
	return route, pl.limitToRelease(route)
}

func (pl *plan) limitToRelease(route providers.Object) diag.List {
	var l diag.List
	release, err := hub.ParseRelease(pl.caps.GatewayAPIVersion)
	if err != nil {
		return l // the capability file was validated; nothing to limit by
	}
	channel := pl.channel()
	for _, f := range RouteFields {
		if f.Served(release, channel) {
			continue
		}
		if deleteAt(route, f.Path) {
			l.Warnf(diag.GatewayAPIVersion, "spec.gateway", "the HTTPRoute is rendered without `%s`: Gateway API %s (%s channel, from the capability file) does not serve it before %s, and the API server would drop it", pathString(f.Path), pl.caps.GatewayAPIVersion, channel, sinceFor(f, channel))
		}
	}
	return l
}

func (pl *plan) channel() string {
	if pl.caps.Channel == "" {
		return ChannelStandard
	}
	return pl.caps.Channel
}

func sinceFor(f RouteField, channel string) string {
	if channel == ChannelExperimental {
		return "v" + f.Experimental
	}
	return "v" + f.Standard
}

// deleteAt removes the field at path from every list item on the way and
// reports whether it removed anything.
func deleteAt(m map[string]any, path []string) bool {
	if len(path) == 1 {
		_, ok := m[path[0]]
		delete(m, path[0])
		return ok
	}
	next := m[path[0]]
	if len(path) > 2 && path[1] == "[]" {
		list, _ := next.([]any)
		deleted := false
		for _, item := range list {
			if im, ok := item.(map[string]any); ok && deleteAt(im, path[2:]) {
				deleted = true
			}
		}
		return deleted
	}
	child, ok := next.(map[string]any)
	return ok && deleteAt(child, path[1:])
}

func pathString(path []string) string {
	s := ""
	for _, p := range path {
		switch {
		case p == "[]":
			s += "[*]"
		case s == "":
			s = p
		default:
			s += "." + p
		}
	}
	return s
}

// referenceGrant lets the route in the ModelDeployment's namespace reach a
// provider-managed pool in another namespace, as upstream creates it.
func (pl *plan) referenceGrant() providers.Object {
	return providers.Object{
		"apiVersion": GrantAPIVersion,
		"kind":       "ReferenceGrant",
		"metadata":   pl.meta(fmt.Sprintf("%s-referencegrant", pl.pool.name), pl.pool.namespace, pl.objectLabels()),
		"spec": map[string]any{
			"from": []any{map[string]any{"group": GatewayGroup, "kind": "HTTPRoute", "namespace": pl.md.Namespace}},
			"to":   []any{map[string]any{"group": pl.group, "kind": PoolKind, "name": pl.pool.name}},
		},
	}
}

// modelMatch matches requests for one model name.
func modelMatch(name string) map[string]any {
	return map[string]any{
		"path":    map[string]any{"type": "PathPrefix", "value": "/"},
		"headers": []any{map[string]any{"type": "Exact", "name": ModelHeader, "value": name}},
	}
}
