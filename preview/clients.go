package preview

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

// What an upgrade changes for a model's clients, beyond what the cluster
// refuses to update: the provider that serves it, the Service and port
// they call, the model name they send, the gateway route they reach, and
// objects of a kind that disappear. Each breaks every client at once, the
// moment the GitOps tool applies (and prunes) the new objects, so
// `preview` marks each BREAKING even where every update is accepted.

// clientView is what clients of one model see at one side.
type clientView struct {
	provider, providerReason string
	servedName               string
	// endpoint is the Service clients call, "service:port"
	// (hub.AnnotationEndpoint).
	endpoint string
	// formats are the API formats its engine answers
	// (hub.AnnotationAPIFormats).
	formats []string
	// routes are its gateway routes: each HTTPRoute's name with what a
	// request must carry to match it.
	routes map[string]routeView
	// objects are its generated objects, "Kind/ns/name".
	objects []string
}

// clientViews reads, per model ("ns/name"), what its clients see in a
// side's rendered objects.
func clientViews(objs []*yaml.RNode) map[string]*clientView {
	views := map[string]*clientView{}
	view := func(key string) *clientView {
		if views[key] == nil {
			views[key] = &clientView{routes: map[string]routeView{}}
		}
		return views[key]
	}
	for _, o := range objs {
		a := o.GetAnnotations()
		ns := o.GetNamespace()
		if o.GetKind() == hub.KindModelDeployment && strings.HasPrefix(o.GetApiVersion(), hub.Group+"/") {
			v := view(ns + "/" + o.GetName())
			v.provider, v.providerReason = a[hub.AnnotationProvider], a[hub.AnnotationProviderReason]
			v.servedName, v.endpoint = a[hub.AnnotationServedName], a[hub.AnnotationEndpoint]
			v.formats = hub.SplitAPIFormats(a[hub.AnnotationAPIFormats])
			continue
		}
		model := a[hub.AnnotationGeneratedFrom]
		if model == "" {
			continue
		}
		v := view(ns + "/" + model)
		id := o.GetKind() + "/" + ns + "/" + o.GetName()
		v.objects = append(v.objects, id)
		if o.GetKind() == "HTTPRoute" {
			v.routes[id] = routeView{parents: fieldText(o, "spec.parentRefs") + fieldText(o, "spec.hostnames"), matches: routeMatches(o)}
		}
	}
	for _, v := range views {
		slices.Sort(v.objects)
	}
	return views
}

// routeView is what a request must carry to reach a model through one
// HTTPRoute: its parent Gateways and hostnames, and any of its matches.
type routeView struct {
	parents string
	matches []string
}

// routeMatches lists the matches of an HTTPRoute's rules, without the
// backends they lead to (a backend the gateway resolves is no change for
// clients).
func routeMatches(route *yaml.RNode) []string {
	rules, err := route.Pipe(yaml.Lookup("spec", "rules"))
	if err != nil || rules == nil {
		return nil
	}
	elems, _ := rules.Elements()
	var out []string
	for _, r := range elems {
		matches, err := r.Pipe(yaml.Lookup("matches"))
		if err != nil || matches == nil {
			continue
		}
		each, _ := matches.Elements()
		for _, m := range each {
			out = append(out, m.MustString())
		}
	}
	return out
}

// narrows reports whether a request that matched the route before may
// match it no more: its parents or hostnames change, or a match is gone.
// A match added (an API format the engine now declares) breaks no client.
func (b routeView) narrows(a routeView) bool {
	if b.parents != a.parents {
		return true
	}
	for _, m := range b.matches {
		if !slices.Contains(a.matches, m) {
			return true
		}
	}
	return false
}

// clientFindings compares what each model's clients see before and after.
func clientFindings(before, after Side) []Finding {
	old, updated := clientViews(before.Objects), clientViews(after.Objects)
	var out []Finding
	for _, key := range slices.Sorted(maps.Keys(old)) {
		b, a := old[key], updated[key]
		if a == nil || b.provider == "" || a.provider == "" {
			continue // a model rendered on one side only: the render's errors say why
		}
		object := hub.KindModelDeployment + "/" + key
		if b.provider != a.provider {
			out = append(out, Finding{Object: object, Breaking: true, Message: switchMessage(key, b, a, before, after)})
		}
		if b.servedName != a.servedName {
			out = append(out, Finding{Object: object, Breaking: true, Message: fmt.Sprintf("the model name clients send (OpenAI `model`) changes from %q to %q: every request naming %q fails; set `spec.model.servedName` where the provider honours it, or keep the provider", b.servedName, a.servedName, b.servedName)})
		}
		if b.endpoint != "" && b.endpoint != a.endpoint {
			out = append(out, Finding{Object: object, Breaking: true, Message: fmt.Sprintf("clients call it at %s (Service:port in its namespace); after the upgrade it is at %s: every client and route naming the old address breaks", b.endpoint, orNone(nonEmpty(a.endpoint)))})
		}
		if lost := missing(b.formats, a.formats); len(lost) > 0 && len(a.formats) > 0 {
			out = append(out, Finding{Object: object, Breaking: true, Message: fmt.Sprintf("its engine no longer answers %s through provider %s (it answers %s): clients sending those requests fail", strings.Join(lost, ", "), a.provider, strings.Join(a.formats, ", "))})
		}
		for _, id := range slices.Sorted(maps.Keys(b.routes)) {
			switch match, ok := a.routes[id]; {
			case !ok:
				out = append(out, Finding{Object: id, Breaking: true, Message: "the gateway route is removed: requests through the gateway for this model find no route"})
			case b.routes[id].narrows(match):
				out = append(out, Finding{Object: id, Breaking: true, Message: "what a request must carry to match the route (parent gateway, hostname, path or header) changes: clients sending the old match reach no model"})
			}
		}
		if b.provider == a.provider { // a switch lists its objects itself
			if gone := removedKinds(b.objects, a.objects); len(gone) > 0 {
				out = append(out, Finding{Object: object, Breaking: true, Message: fmt.Sprintf("%s removed, with nothing of the same kind in its place: what relied on them (clients, monitors, autoscalers) breaks when the GitOps tool prunes them", strings.Join(gone, ", "))})
			}
		}
	}
	return out
}

// switchMessage words a provider switch: what replaces what, why (the
// capability file's change) and how to keep the old provider.
func switchMessage(key string, b, a *clientView, before, after Side) string {
	name := key[strings.Index(key, "/")+1:]
	msg := fmt.Sprintf("the provider serving the model switches from %s to %s: %s", b.provider, a.provider, switchCause(b.provider, a.provider, before, after))
	if gone := missing(b.objects, a.objects); len(gone) > 0 {
		msg += fmt.Sprintf("; %s are deleted and %s created, so the model stops serving until the new provider's pods have loaded it", strings.Join(gone, ", "), orNone(missing(a.objects, b.objects)))
	}
	return msg + fmt.Sprintf(". To keep %s, pin it: `spec.provider.name: %s` on ModelDeployment %s (in its file, or a patch in the cluster's overlay)", b.provider, b.provider, name)
}

// switchCause names the change of the capability file that moves a model
// from one provider to another.
func switchCause(old, updated string, before, after Side) string {
	to := after.CapsFile
	switch {
	case !before.declares(updated) && after.declares(updated):
		return fmt.Sprintf("%s adds provider %s, which the selection rules prefer", to, updated)
	case before.declares(old) && !after.declares(old):
		return fmt.Sprintf("%s no longer declares provider %s", to, old)
	}
	return fmt.Sprintf("the selection rules and priorities of %s now prefer %s", to, updated)
}

// missing lists what of want is not in have.
func missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// removedKinds lists the objects of a kind the model has no object of
// after: an object renamed within its kind is an update, not a removal.
func removedKinds(before, after []string) []string {
	kinds := map[string]bool{}
	for _, id := range after {
		kinds[strings.SplitN(id, "/", 2)[0]] = true
	}
	var out []string
	for _, id := range before {
		if !kinds[strings.SplitN(id, "/", 2)[0]] {
			out = append(out, id)
		}
	}
	return out
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "nothing"
	}
	return strings.Join(list, ", ")
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
