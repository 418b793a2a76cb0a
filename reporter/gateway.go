package reporter

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/gateway"
)

var (
	routeGVK   = schema.FromAPIVersionAndKind(gateway.RouteAPIVersion, "HTTPRoute")
	gatewayGVK = schema.FromAPIVersionAndKind(gateway.RouteAPIVersion, "Gateway")
)

// gatewayStatus reads where the gateway serves a ModelDeployment: the
// model name its rendered HTTPRoute matches on, the namespace of the
// Gateway it attaches to, and that Gateway's first address (as upstream).
// It is nil when no rendered HTTPRoute exists or HTTPRoutes are not served.
func (k *kinds) gatewayStatus(ctx context.Context, md types.NamespacedName) (*v1.GatewayStatus, error) {
	routes, ok := k.Reader(routeGVK)
	if !ok {
		return nil, nil
	}
	route := &unstructured.Unstructured{}
	route.SetGroupVersionKind(routeGVK)
	if err := routes.Get(ctx, md, route); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if route.GetAnnotations()[hub.AnnotationGeneratedFrom] != md.Name {
		return nil, nil
	}
	s := &v1.GatewayStatus{ModelName: modelName(route)}
	parents := parentGateways(route)
	if len(parents) == 0 {
		return s, nil
	}
	s.GatewayNamespace = parents[0].Namespace
	gateways, ok := k.Reader(gatewayGVK)
	if !ok {
		return s, nil
	}
	gw := &unstructured.Unstructured{}
	gw.SetGroupVersionKind(gatewayGVK)
	if err := gateways.Get(ctx, parents[0], gw); err != nil {
		return s, client.IgnoreNotFound(err)
	}
	addresses, _, _ := unstructured.NestedSlice(gw.Object, "status", "addresses")
	for _, a := range addresses {
		if m, ok := a.(map[string]any); ok {
			if value, _ := m["value"].(string); value != "" {
				s.Endpoint = value
				break
			}
		}
	}
	return s, nil
}

// modelName is the value the route's first rule matches the model header on.
func modelName(route *unstructured.Unstructured) string {
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	for _, r := range rules {
		matches, _, _ := unstructured.NestedSlice(asMap(r), "matches")
		for _, m := range matches {
			headers, _, _ := unstructured.NestedSlice(asMap(m), "headers")
			for _, h := range headers {
				hm := asMap(h)
				if name, _ := hm["name"].(string); strings.EqualFold(name, gateway.ModelHeader) {
					value, _ := hm["value"].(string)
					return value
				}
			}
		}
	}
	return ""
}

// parentGateways lists the Gateways a route attaches to, with the
// Gateway API defaults (group gateway.networking.k8s.io, kind Gateway,
// the route's namespace) filled in.
func parentGateways(route *unstructured.Unstructured) []types.NamespacedName {
	refs, _, _ := unstructured.NestedSlice(route.Object, "spec", "parentRefs")
	var out []types.NamespacedName
	for _, r := range refs {
		m := asMap(r)
		group, hasGroup := m["group"].(string)
		kind, hasKind := m["kind"].(string)
		if (hasGroup && group != gatewayGVK.Group) || (hasKind && kind != gatewayGVK.Kind) {
			continue
		}
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		if ns == "" {
			ns = route.GetNamespace()
		}
		out = append(out, types.NamespacedName{Namespace: ns, Name: name})
	}
	return out
}

// gatewayOwners maps a Gateway to the ModelDeployments whose rendered
// routes attach to it, so a new address reaches their status.
func gatewayOwners(k *kinds, gw *unstructured.Unstructured) []types.NamespacedName {
	routes, ok := k.Reader(routeGVK)
	if !ok {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(routeGVK.GroupVersion().WithKind("HTTPRouteList"))
	// Read only: the cache's own objects, not a copy of every route per
	// Gateway event.
	if err := routes.List(context.Background(), list, client.UnsafeDisableDeepCopy); err != nil {
		k.log.Error(err, "cannot list HTTPRoutes from the cache")
		return nil
	}
	self := types.NamespacedName{Namespace: gw.GetNamespace(), Name: gw.GetName()}
	var out []types.NamespacedName
	for i := range list.Items {
		for _, p := range parentGateways(&list.Items[i]) {
			if p == self {
				out = append(out, generatedFrom(k, &list.Items[i])...)
				break
			}
		}
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
