package gateway

import (
	"fmt"
	"slices"
	"strings"

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
	var l diag.List
	rules := pl.routeRules(backends)
	if pl.overLimits(rules) != "" && slices.Contains(pl.formats, hub.APIFormatOpenAIChat) && len(pl.formats) > 1 {
		// Routing each format apart multiplies the matches by the
		// formats; when that is more than the release allows, match
		// every path, as upstream does, rather than refuse the model.
		l.Warnf(diag.GatewayAPIVersion, "spec.adapters", "the HTTPRoute matches the %d model names on every path, not on each API format's own (%s): %s; every format reaches this model, and where another ModelDeployment answers to one of these names, the older route decides which serves it",
			1+len(pl.md.Spec.Adapters), strings.Join(pl.formats, ", "), pl.overLimits(rules))
		pl.formats = []string{hub.APIFormatOpenAIChat}
		rules = pl.routeRules(backends)
	}
	route := providers.Object{
		"apiVersion": RouteAPIVersion,
		"kind":       "HTTPRoute",
		"metadata":   pl.meta(pl.md.Name, pl.md.Namespace, pl.objectLabels()),
		"spec": map[string]any{
			"parentRefs": []any{parent},
			"rules":      rules,
		},
	}
	l = append(l, pl.limitToRelease(route)...)
	if why := pl.overLimits(rules); why != "" {
		l.Errorf("spec.adapters", "%s; serve fewer adapters per ModelDeployment", why)
	}
	return route, l
}

// routeRules are the route's rules: the model's name and each LoRA
// adapter's (served by the model's pods under its own name) in one rule,
// or, where the Inference Extension has objectives, a rule per adapter
// that names the adapter's.
func (pl *plan) routeRules(backends []any) []any {
	timeouts := map[string]any{"request": RequestTimeout}
	matches := pl.modelMatches(pl.modelName)
	var adapterRules []any
	for _, a := range pl.md.Spec.Adapters {
		if pl.adapterKind != KindObjective {
			matches = append(matches, pl.modelMatches(a.Name)...)
			continue
		}
		adapterRules = append(adapterRules, map[string]any{
			"matches": pl.modelMatches(a.Name),
			"filters": []any{map[string]any{"type": "RequestHeaderModifier", "requestHeaderModifier": map[string]any{
				"set": []any{map[string]any{"name": ObjectiveHeader, "value": pl.adapterObjectName(a)}},
			}}},
			"backendRefs": backends,
			"timeouts":    timeouts,
		})
	}
	return append([]any{map[string]any{"matches": matches, "backendRefs": backends, "timeouts": timeouts}}, adapterRules...)
}

// Route size limits of the Gateway API's HTTPRoute CRD: rules per route
// (every release), matches per rule (8 before v1.2.0, 64 from it) and, from
// v1.2.0, a CEL rule on the matches of all rules together.
// TestMatchLimitsMatchSchemas holds them to the embedded schemas.
const (
	maxRules           = 16
	maxMatchesBefore12 = 8
	maxMatches         = 64
	maxTotalMatches    = 128
	matchLimitsSince   = "1.2.0"
)

// matchLimits are the most matches one rule and the whole route may have
// in the declared Gateway API release (total 0: no limit of its own).
func (pl *plan) matchLimits() (perRule, total int) {
	release, err := hub.ParseRelease(pl.caps.GatewayAPIVersion)
	if err != nil || !release.AtLeast(version.MustParseGeneric(matchLimitsSince)) {
		return maxMatchesBefore12, 0
	}
	return maxMatches, maxTotalMatches
}

// overLimits says how the rules exceed what the API server accepts in the
// declared Gateway API release, "" when they do not. Only LoRA adapters
// add names and rules: without them a route has one rule of at most one
// match per API format.
func (pl *plan) overLimits(rules []any) string {
	perRule, total := pl.matchLimits()
	sum, most := 0, 0
	for _, r := range rules {
		n := len(r.(map[string]any)["matches"].([]any))
		sum += n
		most = max(most, n)
	}
	names, paths := 1+len(pl.md.Spec.Adapters), len(pl.modelMatches(pl.modelName))
	switch {
	case len(rules) > maxRules:
		return fmt.Sprintf("the HTTPRoute would have %d rules (the model's and one per LoRA adapter with its own objective), more than the %d Gateway API allows", len(rules), maxRules)
	case most > perRule:
		return fmt.Sprintf("the HTTPRoute would have %d matches in one rule (%d model names × %d paths), more than the %d Gateway API %s allows", most, names, paths, perRule, pl.caps.GatewayAPIVersion)
	case total > 0 && sum > total:
		return fmt.Sprintf("the HTTPRoute would have %d matches in all (%d model names × %d paths), more than the %d Gateway API %s allows in one route", sum, names, paths, total, pl.caps.GatewayAPIVersion)
	}
	return ""
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

// modelMatches matches the requests for one model name in the API formats
// the engine answers. Chat Completions is every path ("/", as upstream
// routes every format); each other format served adds its own path
// prefix, which Gateway API ranks above "/" (the longest prefix wins, in
// every route of the listener). So where two ModelDeployments answer to
// one model name, a format only one of them serves is sent to that one,
// wherever the routes' ages would otherwise decide; and a model that does
// not serve Chat Completions gets only its formats' paths.
func (pl *plan) modelMatches(name string) []any {
	var out []any
	if slices.Contains(pl.formats, hub.APIFormatOpenAIChat) {
		out = append(out, pathMatch("/", name))
	}
	for _, f := range pl.formats {
		if prefix := hub.APIFormatPaths[f]; prefix != "" {
			out = append(out, pathMatch(prefix, name))
		}
	}
	return out
}

// pathMatch matches requests for one model name under a path prefix.
func pathMatch(prefix, name string) map[string]any {
	return map[string]any{
		"path":    map[string]any{"type": "PathPrefix", "value": prefix},
		"headers": []any{map[string]any{"type": "Exact", "name": ModelHeader, "value": name}},
	}
}
