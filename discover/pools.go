package discover

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/airunway-render/airunway-render/api/gpus"
	"github.com/airunway-render/airunway-render/api/hub"
)

// poolLabels name a node's pool, the first a node carries winning: the
// label of the Nodes `capabilities nodes` generates (the cluster twin,
// KWOK, kind), then Karpenter's (which AKS node auto-provisioning and EKS
// Auto Mode use too, so it comes before the clouds'), AKS's current and
// legacy labels, EKS managed node groups', GKE's, and Karpenter's before
// v0.33.
var poolLabels = []string{
	hub.LabelNodePool,
	"karpenter.sh/nodepool",
	"kubernetes.azure.com/agentpool",
	"agentpool",
	"eks.amazonaws.com/nodegroup",
	"cloud.google.com/gke-nodepool",
	"karpenter.sh/provisioner-name",
}

const labelOS = "kubernetes.io/os"

// productLabelOf is the node label that names the GPU product of a GPU
// resource: its vendor's (package gpus), else NVIDIA's.
func productLabelOf(resource string) string {
	if v := gpus.ForResource(resource); v != nil {
		return v.ProductLabel
	}
	return gpus.Vendors[0].ProductLabel
}

// memoryLabelOf is the node label that gives a whole GPU's memory in MiB
// for a GPU resource; "" for a slice's (its memory is in its name) and for
// a vendor whose labeller publishes none.
func memoryLabelOf(resource string) string {
	if v := gpus.ForResource(resource); v != nil && !gpus.IsSlice(resource) {
		return v.MemoryLabel
	}
	return ""
}

// transientTaints are put on and taken off by the node lifecycle, the
// cluster autoscaler, Karpenter or a CNI; they say nothing about the pool.
var transientTaints = []string{
	"node.kubernetes.io/", "node.cloudprovider.kubernetes.io/", "node.cilium.io/",
	"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler",
	"karpenter.sh/disrupted", "karpenter.sh/disruption", "karpenter.sh/unregistered",
}

// shape is what makes nodes one pool: the pool label they carry, their
// GPUs and their taints.
type shape struct {
	poolLabel, poolValue string
	gpu                  gpuShape // none(): no GPUs
	taints               string   // FormatTaints of the pool's taints
}

// gpuShape is the comparable part of a pool's GPUs, as read from a node:
// an extended resource (ResourceName), or DRA devices of DeviceClass whose
// driver is Driver, of the productName DeviceProduct (Product stays GPU
// Feature Discovery's label, which DRA nodes may carry too).
type gpuShape struct {
	ResourceName, Product string
	DeviceClass, Driver   string
	DeviceProduct         string
	MemoryMiB             int64
	PerNode               int32
}

// none reports a node or pool without GPUs.
func (g gpuShape) none() bool { return g.ResourceName == "" && g.DeviceClass == "" }

func (g gpuShape) poolGPU() *hub.PoolGPU {
	return &hub.PoolGPU{ResourceName: g.ResourceName, Product: g.Product, MemoryMiB: g.MemoryMiB, PerNode: g.PerNode, DeviceClassName: g.DeviceClass}
}

// group is the nodes of one shape.
type group struct {
	shape
	taintList []hub.Taint
	nodes     []*corev1.Node
}

// nodeShape reads a node's pool label, GPUs and taints. A node's GPUs are
// the extended resource it allocates, else the DRA devices its slices
// publish (dra).
func nodeShape(n *corev1.Node, dra draIndex) (shape, []hub.Taint) {
	s := shape{}
	for _, key := range poolLabels {
		if v := n.Labels[key]; v != "" {
			s.poolLabel, s.poolValue = key, v
			break
		}
	}
	if name, count := gpuResource(n); name != "" {
		s.gpu = gpuShape{ResourceName: name, PerNode: int32(min(count, 1<<20))}
		s.gpu.Product = gpus.ProductOf(n.Labels)
		// The memory label is a whole GPU's; a MIG slice's is in its name.
		if label := memoryLabelOf(name); label != "" {
			if mib, err := strconv.ParseInt(n.Labels[label], 10, 64); err == nil && mib > 0 {
				s.gpu.MemoryMiB = mib
			}
		}
	} else if d := dra[n.Name]; d != nil {
		g := d.gpu
		s.gpu = gpuShape{ResourceName: draResource(g.driver), DeviceClass: g.class, Driver: g.driver, DeviceProduct: g.product, MemoryMiB: g.memoryMiB, PerNode: g.count,
			Product: gpus.ProductOf(n.Labels)}
	}
	taints := poolTaints(n.Spec.Taints)
	s.taints = FormatTaints(taints)
	return s, taints
}

// gpuResource is the GPU resource a node offers and how many: the first
// of the vendors' resources (package gpus) with a positive allocatable
// count, else the first slice resource (NVIDIA's MIG) by name.
func gpuResource(n *corev1.Node) (string, int64) {
	for _, name := range gpus.Resources() {
		if q, ok := n.Status.Allocatable[corev1.ResourceName(name)]; ok && q.Value() > 0 {
			return name, q.Value()
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.Status.Allocatable)) {
		if q := n.Status.Allocatable[name]; gpus.IsSlice(string(name)) && q.Value() > 0 {
			return string(name), q.Value()
		}
	}
	return "", 0
}

// poolTaints are a node's taints without the transient ones, sorted.
func poolTaints(taints []corev1.Taint) []hub.Taint {
	var out []hub.Taint
	for _, t := range taints {
		if slices.ContainsFunc(transientTaints, func(prefix string) bool { return strings.HasPrefix(t.Key, prefix) }) {
			continue
		}
		out = append(out, hub.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	slices.SortFunc(out, compareTaints)
	return slices.CompactFunc(out, func(a, b hub.Taint) bool { return a == b })
}

func compareTaints(a, b hub.Taint) int {
	return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Value, b.Value), cmp.Compare(a.Effect, b.Effect))
}

// FormatTaints writes taints as kubectl does, comma-separated; sorted
// taints give the same text, so it doubles as a key.
func FormatTaints(taints []hub.Taint) string {
	var parts []string
	for _, t := range taints {
		parts = append(parts, formatTaint(t))
	}
	return strings.Join(parts, ",")
}

// formatTaint writes a taint as kubectl does: key=value:Effect.
func formatTaint(t hub.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

// groupNodes groups nodes by shape, sorted: GPU pools before CPU pools,
// then by pool label value, GPU resource, product and count.
func groupNodes(nodes []corev1.Node, dra draIndex) []*group {
	byShape := map[shape]*group{}
	for i := range nodes {
		s, taints := nodeShape(&nodes[i], dra)
		g := byShape[s]
		if g == nil {
			g = &group{shape: s, taintList: taints}
			byShape[s] = g
		}
		g.nodes = append(g.nodes, &nodes[i])
	}
	groups := slices.Collect(maps.Values(byShape))
	slices.SortFunc(groups, func(a, b *group) int {
		return cmp.Or(
			cmp.Compare(gpuLast(a), gpuLast(b)),
			cmp.Compare(a.poolValue, b.poolValue), cmp.Compare(a.poolLabel, b.poolLabel),
			cmp.Compare(a.gpu.ResourceName, b.gpu.ResourceName), cmp.Compare(a.gpu.DeviceClass, b.gpu.DeviceClass),
			cmp.Compare(a.gpu.DeviceProduct, b.gpu.DeviceProduct), cmp.Compare(a.gpu.Product, b.gpu.Product),
			cmp.Compare(a.gpu.PerNode, b.gpu.PerNode), cmp.Compare(a.gpu.MemoryMiB, b.gpu.MemoryMiB),
			cmp.Compare(a.taints, b.taints))
	})
	return groups
}

// gpuLast sorts GPU pools before CPU pools.
func gpuLast(g *group) int {
	if g.gpu.none() {
		return 1
	}
	return 0
}

// FoundPool is a discovered node pool and its nodes.
type FoundPool struct {
	hub.NodePool
	Nodes []*corev1.Node
}

// Pools groups the cluster's nodes into node pools, with notes on what
// was guessed.
func Pools(c *Cluster) ([]FoundPool, []Note) {
	c.Sort()
	dra := indexDRA(c)
	groups := groupNodes(c.Nodes, dra)
	names := poolNames(groups)
	index := indexNodes(c.Nodes, groups)
	split := map[string]int{}
	for _, g := range groups {
		if g.poolValue != "" {
			split[g.poolLabel+"="+g.poolValue]++
		}
	}
	var pools []FoundPool
	notes := draNotes(c, dra)
	for i, g := range groups {
		p := hub.NodePool{Name: names[i], Taints: g.taintList}
		field := fmt.Sprintf("spec.nodePools[%s]", p.Name)
		var why string
		p.Selector, why = g.selector(index)
		if why != "" {
			notes = append(notes, Note{Field: field + ".selector", Text: why})
		}
		if !g.gpu.none() {
			p.GPU = g.gpu.poolGPU()
			notes = append(notes, g.gpuNotes(field)...)
		}
		if g.gpu.DeviceClass != "" {
			notes = append(notes, g.devices(p.GPU, dra, field)...)
		}
		p.Capacity = smallestCapacity(g.nodes)
		count := int32(len(g.nodes))
		p.Nodes = &hub.PoolNodes{Count: &count}
		origin := g.origin()
		if split[g.poolLabel+"="+g.poolValue] > 1 {
			origin += "; its other nodes have other GPUs or taints, so it is split"
		}
		notes = append(notes, Note{Field: field, Text: origin})
		pools = append(pools, FoundPool{NodePool: p, Nodes: g.nodes})
	}
	return pools, notes
}

// poolNames names each group after its pool label's value, its GPU
// product or resource, or "cpu", as a DNS label; groups that would share a
// name are numbered in order.
func poolNames(groups []*group) []string {
	base := make([]string, len(groups))
	count := map[string]int{}
	for i, g := range groups {
		switch {
		case g.poolValue != "":
			base[i] = dnsLabel(g.poolValue)
		case g.gpu.Product != "":
			base[i] = dnsLabel(g.gpu.Product)
		case g.gpu.DeviceProduct != "":
			base[i] = dnsLabel(g.gpu.DeviceProduct)
		case g.gpu.ResourceName != "":
			base[i] = dnsLabel(g.gpu.ResourceName)
		case g.gpu.DeviceClass != "":
			base[i] = dnsLabel(g.gpu.DeviceClass)
		default:
			base[i] = "cpu"
		}
		count[base[i]]++
	}
	names := make([]string, len(groups))
	seen := map[string]int{}
	for i, b := range base {
		seen[b]++
		names[i] = b
		if count[b] > 1 {
			names[i] = fmt.Sprintf("%s-%d", b, seen[b])
		}
	}
	return names
}

var notDNS = regexp.MustCompile(`[^a-z0-9]+`)

// dnsLabel lowercases a label value into an RFC 1123 label.
func dnsLabel(s string) string {
	s = strings.Trim(notDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	if s == "" {
		return "pool"
	}
	return s
}

// origin says where a pool came from, as a comment on it.
func (g *group) origin() string {
	nodes := fmt.Sprintf("%d node(s)", len(g.nodes))
	if g.poolLabel != "" {
		return fmt.Sprintf("%s labelled %s=%s", nodes, g.poolLabel, g.poolValue)
	}
	if !g.gpu.none() {
		return fmt.Sprintf("%s without a node-pool label, grouped by their GPUs", nodes)
	}
	return fmt.Sprintf("%s without GPUs or a node-pool label", nodes)
}

// gpuNotes flags GPUs that are not whole: time-sliced or MPS-shared, and
// MIG slices.
func (g *group) gpuNotes(field string) []Note {
	var notes []Note
	replicas := 0
	if v := gpus.ForResource(g.gpu.ResourceName); v != nil && v.ReplicasLabel != "" {
		replicas, _ = strconv.Atoi(g.nodes[0].Labels[v.ReplicasLabel])
	}
	switch {
	case replicas > 1 || strings.HasSuffix(g.gpu.Product, "-SHARED") || gpus.IsShared(g.gpu.ResourceName):
		notes = append(notes, Note{Field: field + ".gpu.perNode", Text: "shared GPUs (time-slicing or MPS): perNode counts the shares, not physical GPUs"})
	case strings.Contains(g.gpu.Product, "-MIG-") || gpus.IsSlice(g.gpu.ResourceName):
		notes = append(notes, Note{Field: field + ".gpu.perNode", Text: "MIG slices: perNode counts the slices, not physical GPUs"})
	}
	if g.gpu.Product == "" && g.gpu.DeviceClass == "" {
		notes = append(notes, Note{Field: field + ".gpu", Text: "no GPU Feature Discovery product label: product and memory unknown"})
	}
	return notes
}

// nodeIndex finds the nodes a selector picks, and their groups, without
// a scan of every node per selector: with a pool per node (a label value
// or taint of each node's own) that scan made discover quadratic in the
// nodes.
type nodeIndex struct {
	byLabel map[string][]*corev1.Node // by "key=value"
	groupOf map[*corev1.Node]*group
}

func indexNodes(nodes []corev1.Node, groups []*group) nodeIndex {
	ix := nodeIndex{byLabel: map[string][]*corev1.Node{}, groupOf: map[*corev1.Node]*group{}}
	for i := range nodes {
		for k, v := range nodes[i].Labels {
			ix.byLabel[k+"="+v] = append(ix.byLabel[k+"="+v], &nodes[i])
		}
	}
	for _, g := range groups {
		for _, n := range g.nodes {
			ix.groupOf[n] = g
		}
	}
	return ix
}

// picks returns the nodes sel picks: those with its rarest label, then
// the other labels checked.
func (ix nodeIndex) picks(sel map[string]string) []*corev1.Node {
	var rarest []*corev1.Node
	for k, v := range sel {
		if nodes := ix.byLabel[k+"="+v]; rarest == nil || len(nodes) < len(rarest) {
			rarest = nodes
		}
	}
	s := labels.SelectorFromSet(sel)
	var out []*corev1.Node
	for _, n := range rarest {
		if s.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}
	return out
}

// selector picks the labels that select exactly the group's nodes: a GPU
// pool's product label (portable across clusters), else its pool label,
// else both; a CPU pool's pool label, else kubernetes.io/os=linux. A
// selector that also picks other nodes comes with a note saying so.
func (g *group) selector(ix nodeIndex) (map[string]string, string) {
	var candidates []map[string]string
	productLabel := productLabelOf(g.gpu.ResourceName)
	if g.gpu.Product != "" {
		candidates = append(candidates, map[string]string{productLabel: g.gpu.Product})
	}
	if g.poolLabel != "" {
		candidates = append(candidates, map[string]string{g.poolLabel: g.poolValue})
		if g.gpu.Product != "" {
			candidates = append(candidates, map[string]string{g.poolLabel: g.poolValue, productLabel: g.gpu.Product})
		}
	}
	for _, s := range candidates {
		if g.selectsOnlyItself(s, ix) {
			return s, ""
		}
	}
	if g.gpu.none() {
		return map[string]string{labelOS: "linux"}, "no label picks these nodes alone: kubernetes.io/os=linux picks the GPU nodes too, and only their taints keep CPU workloads off them"
	}
	if len(candidates) > 0 {
		return candidates[len(candidates)-1], "these labels pick other nodes too: give the pool a label of its own and select it"
	}
	return nil, "no label picks these nodes: give the pool a label and select it, or the renderer places nothing here"
}

// selectsOnlyItself reports whether every node the selector picks is one
// of the group's.
func (g *group) selectsOnlyItself(sel map[string]string, ix nodeIndex) bool {
	for _, n := range ix.picks(sel) {
		if ix.groupOf[n] != g {
			return false
		}
	}
	return true
}

// smallestCapacity is the least allocatable cpu and memory among the
// nodes: what one pod can be sure to get.
func smallestCapacity(nodes []*corev1.Node) *hub.NodeCapacity {
	var cpu, memory *resource.Quantity
	for _, n := range nodes {
		if q, ok := n.Status.Allocatable[corev1.ResourceCPU]; ok && (cpu == nil || q.Cmp(*cpu) < 0) {
			cpu = &q
		}
		if q, ok := n.Status.Allocatable[corev1.ResourceMemory]; ok && (memory == nil || q.Cmp(*memory) < 0) {
			memory = &q
		}
	}
	if cpu == nil && memory == nil {
		return nil
	}
	c := &hub.NodeCapacity{}
	if cpu != nil {
		c.CPU = cpu.String()
	}
	if memory != nil {
		c.Memory = memory.String()
	}
	return c
}
