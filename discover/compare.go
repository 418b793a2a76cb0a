package discover

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/airunway-render/airunway-render/api/hub"
)

// Difference is one fact of a capability file that the live cluster
// contradicts.
type Difference struct {
	// Field is the fact's path in the file, list items named by their
	// name: spec.nodePools[l4].taints.
	Field string
	// Declared is what the file says, Live what the cluster has.
	Declared, Live string
	// Message says it in a sentence, naming the nodes and objects.
	Message string
	// Pool or Provider names the node pool or provider the difference is
	// about, so that the models placed there can be told; both empty for
	// the gateway.
	Pool, Provider string
}

// Compare returns the facts of the declared capability file that the
// cluster contradicts, sorted by field: per node pool, that its selector
// picks nodes, as many as `nodes` says, each with the pool's GPUs and
// taints; per provider, that its CRD is installed and its operator runs
// the declared release; for the gateway, the InferencePool API, the
// Gateway API bundle and channel, and the parent Gateway. What the file
// does not declare is never a difference: an undeclared pool or operator
// is the file's business, not drift.
func Compare(declared *hub.ClusterCapabilities, c *Cluster) []Difference {
	c.Sort()
	var out []Difference
	live := newLiveDevices(c)
	for i := range declared.Spec.NodePools {
		out = append(out, comparePool(&declared.Spec.NodePools[i], c, live)...)
	}
	for i := range declared.Spec.Providers {
		out = append(out, compareProvider(&declared.Spec.Providers[i], c)...)
	}
	if g := declared.Spec.Gateway; g != nil {
		out = append(out, compareGateway(g, c)...)
	}
	out = append(out, compareAutoscaling(declared.Spec.Autoscaling, c)...)
	slices.SortStableFunc(out, func(a, b Difference) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	return out
}

// poolNodes returns the nodes a pool's selector picks: for a pool without
// GPUs, only the nodes without GPUs, allocated or published as DRA
// devices (a CPU pool's kubernetes.io/os=linux picks every node, but CPU
// workloads go to the nodes without GPUs).
func poolNodes(p *hub.NodePool, nodes []corev1.Node, live *liveDevices) []*corev1.Node {
	if len(p.Selector) == 0 {
		return nil
	}
	sel := labels.SelectorFromSet(p.Selector)
	var out []*corev1.Node
	for i := range nodes {
		n := &nodes[i]
		if !sel.Matches(labels.Set(n.Labels)) {
			continue
		}
		if res, _ := gpuResource(n); p.GPU == nil && (res != "" || live.publishesGPUs(n.Name)) {
			continue
		}
		out = append(out, n)
	}
	return out
}

func comparePool(p *hub.NodePool, c *Cluster, live *liveDevices) []Difference {
	field := fmt.Sprintf("spec.nodePools[%s]", p.Name)
	diff := func(sub, declared, live, format string, args ...any) Difference {
		return Difference{Field: field + sub, Declared: declared, Live: live, Pool: p.Name, Message: fmt.Sprintf("pool %q: ", p.Name) + fmt.Sprintf(format, args...)}
	}
	if len(p.Selector) == 0 {
		return nil // places nothing, so nothing to hold against the nodes
	}
	nodes := poolNodes(p, c.Nodes, live)
	lo, hi, sized := p.Nodes.Range()
	selector := labels.SelectorFromSet(p.Selector).String()
	if len(nodes) == 0 {
		if sized && lo == 0 {
			return nil // an autoscaled pool at zero
		}
		kind := "node"
		if p.GPU == nil {
			kind = "node without GPUs"
		}
		return []Difference{diff(".selector", selector, "no node", "no %s has the labels %s", kind, selector)}
	}
	var out []Difference
	switch n := int32(len(nodes)); {
	case sized && lo == hi && n != lo:
		out = append(out, diff(".nodes.count", strconv.Itoa(int(lo)), strconv.Itoa(int(n)), "%d node(s) have the labels %s, the file says %d", n, selector, lo))
	case sized && (n < lo || n > hi):
		out = append(out, diff(".nodes", fmt.Sprintf("%d-%d", lo, hi), strconv.Itoa(int(n)), "%d node(s) have the labels %s, outside the file's %d to %d", n, selector, lo, hi))
	}
	switch {
	case p.HasDevices():
		out = append(out, compareDevices(p, nodes, live, diff)...)
	case p.GPU != nil:
		out = append(out, compareGPUs(p, nodes, diff)...)
	}
	want := FormatTaints(p.Taints)
	if live := byNode(nodes, func(n *corev1.Node) string { return FormatTaints(poolTaints(n.Spec.Taints)) }); live.differsFrom(want) {
		out = append(out, diff(".taints", orNone(want), live.String(), "the nodes' taints differ from the file's (%s): %s", orNone(want), live))
	}
	return out
}

func compareGPUs(p *hub.NodePool, nodes []*corev1.Node, diff func(sub, declared, live, format string, args ...any) Difference) []Difference {
	var out []Difference
	res := p.GPUResource()
	count := byNode(nodes, func(n *corev1.Node) string {
		q, ok := n.Status.Allocatable[corev1.ResourceName(res)]
		if !ok {
			return "none"
		}
		return strconv.FormatInt(q.Value(), 10)
	})
	switch {
	case count.has("none") || count.has("0"):
		out = append(out, diff(".gpu.resourceName", res, count.String(), "not every node offers %s: %s", res, count))
	case p.GPU.PerNode > 0 && count.differsFrom(strconv.Itoa(int(p.GPU.PerNode))):
		out = append(out, diff(".gpu.perNode", strconv.Itoa(int(p.GPU.PerNode)), count.String(), "allocatable %s differs from the file's %d per node: %s", res, p.GPU.PerNode, count))
	}
	productLabel := productLabelOf(res)
	if want := p.GPU.Product; want != "" {
		if live := byNode(nodes, labelOf(productLabel)); live.differsFrom(want) {
			out = append(out, diff(".gpu.product", want, live.String(), "label %s differs from the file's %s: %s", productLabel, want, live))
		}
	}
	if want, label := p.GPU.MemoryMiB, memoryLabelOf(res); want > 0 && label != "" {
		if live := byNode(nodes, labelOf(label)); live.differsFrom(strconv.FormatInt(want, 10)) {
			out = append(out, diff(".gpu.memoryMiB", strconv.FormatInt(want, 10), live.String(), "label %s differs from the file's %d: %s", label, want, live))
		}
	}
	return out
}

func labelOf(key string) func(*corev1.Node) string {
	return func(n *corev1.Node) string {
		if v, ok := n.Labels[key]; ok {
			return v
		}
		return "none"
	}
}

func orNone(s string) string { return cmp.Or(s, "none") }

// perNode is a value read from each node, grouped by value.
type perNode map[string][]string

func byNode(nodes []*corev1.Node, read func(*corev1.Node) string) perNode {
	out := perNode{}
	for _, n := range nodes {
		v := orNone(read(n))
		out[v] = append(out[v], n.Name)
	}
	return out
}

func (p perNode) has(v string) bool { return len(p[v]) > 0 }

// differsFrom reports whether some node's value is not want.
func (p perNode) differsFrom(want string) bool {
	return len(p) > 1 || !p.has(orNone(want))
}

// String lists the values and their nodes, at most three names a value:
// "1 on l4-0, l4-1; 2 on l4-2".
func (p perNode) String() string {
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(p)) {
		names := p[v]
		shown := strings.Join(names[:min(3, len(names))], ", ")
		if len(names) > 3 {
			shown += fmt.Sprintf(" and %d more", len(names)-3)
		}
		parts = append(parts, fmt.Sprintf("%s on %s", v, shown))
	}
	return strings.Join(parts, "; ")
}

func compareProvider(p *hub.ProviderCapability, c *Cluster) []Difference {
	o, ok := operatorFor(p.Name)
	if !ok || o.CRD == "" {
		return nil // vLLM and llm-d: nothing installed to hold the file against
	}
	field := fmt.Sprintf("spec.providers[%s]", p.Name)
	if !c.HasCRD(o.CRD) {
		return []Difference{{Field: field, Declared: "installed", Live: "no CRD " + o.CRD, Provider: p.Name,
			Message: fmt.Sprintf("provider %q: CRD %s is not installed", p.Name, o.CRD)}}
	}
	found, r, _ := o.findRelease(c.Deployments)
	if !found || r.version == "" || p.Version == "" || SameRelease(p.Version, r.version) {
		return nil // a release nobody can read is no difference
	}
	return []Difference{{Field: field + ".version", Declared: p.Version, Live: r.version, Provider: p.Name,
		Message: fmt.Sprintf("provider %q: %s runs release %s, the file says %s", p.Name, r.from, r.version, p.Version)}}
}

// SameRelease compares releases as versions when both parse (0.10 is
// 0.10.0), else as strings.
func SameRelease(a, b string) bool {
	va, errA := hub.ParseRelease(a)
	vb, errB := hub.ParseRelease(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return va.EqualTo(vb)
}

func compareGateway(g *hub.GatewayCapability, c *Cluster) []Difference {
	const field = "spec.gateway"
	var out []Difference
	if g.InferencePoolVersion != "" {
		live, _ := inferencePoolVersion(c)
		if i := slices.IndexFunc(inferencePoolVersions, func(v struct{ crd, apiVersion string }) bool { return v.apiVersion == g.InferencePoolVersion }); i >= 0 && !c.HasCRD(inferencePoolVersions[i].crd) {
			out = append(out, Difference{Field: field + ".inferencePoolVersion", Declared: g.InferencePoolVersion, Live: orNone(live),
				Message: fmt.Sprintf("gateway: CRD %s is not installed", inferencePoolVersions[i].crd)})
		}
	}
	if _, bundle := inferencePoolVersion(c); g.InferenceExtensionVersion != "" && bundle != "" && !SameRelease(bundle, g.InferenceExtensionVersion) {
		out = append(out, Difference{Field: field + ".inferenceExtensionVersion", Declared: g.InferenceExtensionVersion, Live: bundle,
			Message: fmt.Sprintf("gateway: the Inference Extension CRDs are bundle %s, the file says %s", bundle, g.InferenceExtensionVersion)})
	}
	api, ok := readGatewayAPI(c)
	if !ok {
		if g.GatewayAPIVersion != "" || g.ParentRef != nil {
			out = append(out, Difference{Field: field + ".gatewayAPIVersion", Declared: g.GatewayAPIVersion, Live: "none",
				Message: fmt.Sprintf("gateway: CRD %s is not installed", gatewayCRD)})
		}
		return out
	}
	if g.GatewayAPIVersion != "" && api.version != g.GatewayAPIVersion {
		out = append(out, Difference{Field: field + ".gatewayAPIVersion", Declared: g.GatewayAPIVersion, Live: orNone(api.version),
			Message: fmt.Sprintf("gateway: the Gateway API CRDs are bundle %s, the file says %s", orNone(api.version), g.GatewayAPIVersion)})
	}
	if g.Channel != "" && api.channel != g.Channel {
		out = append(out, Difference{Field: field + ".channel", Declared: g.Channel, Live: orNone(api.channel),
			Message: fmt.Sprintf("gateway: the Gateway API CRDs are the %s channel, the file says %s", orNone(api.channel), g.Channel)})
	}
	if ref := g.ParentRef; ref != nil && !c.HasGateway(ref) {
		out = append(out, Difference{Field: field + ".parentRef", Declared: ref.Namespace + "/" + ref.Name, Live: "none",
			Message: fmt.Sprintf("gateway: Gateway %s/%s does not exist", ref.Namespace, ref.Name)})
	}
	return out
}

// HasGateway reports whether the Gateway a parentRef names exists; a ref
// without a namespace matches the name in any namespace.
func (c *Cluster) HasGateway(ref *hub.GatewayRef) bool {
	return slices.ContainsFunc(c.Gateways, func(gw metav1.PartialObjectMetadata) bool {
		return gw.Name == ref.Name && (ref.Namespace == "" || gw.Namespace == ref.Namespace)
	})
}
