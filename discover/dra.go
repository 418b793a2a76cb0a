package discover

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	pooldev "github.com/airunway-render/airunway-render/api/dra"
	"github.com/airunway-render/airunway-render/api/gpus"
	"github.com/airunway-render/airunway-render/api/hub"
)

// Dynamic Resource Allocation (resource.k8s.io/v1, GA in Kubernetes 1.34).
// A DRA driver publishes each node's devices in ResourceSlices; a
// DeviceClass picks devices by CEL selectors. NVIDIA's driver
// (github.com/NVIDIA/k8s-dra-driver-gpu, cmd/gpu-kubelet-plugin/deviceinfo.go
// and the chart's templates/deviceclass-*.yaml) publishes every GPU as a
// device of driver gpu.nvidia.com with the attributes type ("gpu", "mig",
// "vfio"), uuid, productName, brand, architecture, cudaComputeCapability,
// driverVersion, cudaDriverVersion (the last three semantic versions) and
// the capacity memory, and installs the DeviceClass gpu.nvidia.com:
// `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`.

// What Read lists of DRA.
var (
	deviceClassesResource  = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses"}
	resourceSlicesResource = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"}
)

// draResource is the extended resource a pool of a GPU driver's devices
// serves (spec.resources.gpu.type): "" for the default, nvidia.com/gpu.
// A device of a driver that is no vendor's (a NIC, an FPGA) is never a
// pool's GPU, whatever class picks it (gpus.ForDriver).
func draResource(driver string) string {
	if v := gpus.ForDriver(driver); v != nil && v.Resources[0] != hub.DefaultGPUResource {
		return v.Resources[0]
	}
	return ""
}

// identityAttributes name one device rather than a kind of device (NVIDIA
// publishes uuid; older releases index and minor; the PCI attributes are
// Kubernetes' standard resource.kubernetes.io/pciBusID and pcieRoot). They
// are not kept: no pool can declare them, and without them the GPUs of a
// node are identical, so they are kept once (Devices.Count).
var identityAttributes = map[string]bool{"uuid": true, "parentUUID": true, "index": true, "minor": true, "pciBusID": true, "pcieRoot": true, "serial": true}

// DeviceClass is what discover reads of a DeviceClass: its name and the
// CEL expressions of its selectors.
type DeviceClass struct {
	Name      string
	Selectors []string
	// ExtendedResource is the extended resource the class serves
	// (spec.extendedResourceName, Kubernetes 1.36 and later), "" for none.
	ExtendedResource string
}

// ResourceSlice is what discover keeps of a ResourceSlice: its driver, the
// node its devices are on, and its devices, identical ones once with a
// count. A slice whose devices are not on one node (spec.nodeSelector,
// allNodes or perDeviceNodeSelection) keeps no devices: no pool can hold
// them.
type ResourceSlice struct {
	Name, Driver string
	// Node is spec.nodeName; empty when Spread says how the slice picks
	// its nodes instead.
	Node, Spread string
	Devices      []Devices
}

// Devices are Count identical devices of a slice: the same attributes
// (identity attributes aside) and capacity. Devices of equal content
// share their maps, which are never modified.
type Devices struct {
	Count      int
	Attributes map[resourcev1.QualifiedName]resourcev1.DeviceAttribute
	Capacity   map[resourcev1.QualifiedName]resourcev1.DeviceCapacity
}

// DeviceBudget bounds the bytes of distinct device contents Read keeps, as
// interner.intern charges them (about what their maps weigh). A real
// cluster's GPUs are a few kinds, kept once each; whoever can publish
// ResourceSlices (a node's driver) could otherwise make every one of
// 150,000 slices × 128 devices distinct.
const DeviceBudget = 32 << 20

// resourceSlicePage is the slices one list request asks for: a slice holds
// up to 128 devices of up to 32 attributes, so a page of 500 could be a
// few hundred MiB as JSON.
const resourceSlicePage = 25

// readDRA lists DeviceClasses and ResourceSlices into c. A cluster that
// serves no resource.k8s.io/v1 (before Kubernetes 1.34, or with DRA off)
// answers 404: it has no DRA devices, which is no error.
func readDRA(ctx context.Context, dyn dynamic.Interface, c *Cluster) error {
	classes, err := listTyped[resourcev1.DeviceClass](ctx, dyn, deviceClassesResource, "")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	c.DRA = true
	for i := range classes {
		c.DeviceClasses = append(c.DeviceClasses, ClassOf(&classes[i]))
	}
	in := &interner{seen: map[string]*Devices{}, budget: DeviceBudget}
	return listPages(resourceSlicesResource, "", resourceSlicePage, func(opts metav1.ListOptions) (string, int, error) {
		list, err := dyn.Resource(resourceSlicesResource).List(ctx, opts)
		if err != nil {
			return "", 0, err
		}
		for i := range list.Items {
			var rs resourcev1.ResourceSlice
			at := fmt.Sprintf("%s %q", resourceSlicesResource.GroupResource(), list.Items[i].GetName())
			if err := hub.CheckQuantities(list.Items[i].Object, &rs, ""); err != nil {
				return "", 0, fmt.Errorf("reading %s: %w", at, err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &rs); err != nil {
				return "", 0, fmt.Errorf("reading %s: %w", at, err)
			}
			s, err := sliceOf(&rs, in)
			if err != nil {
				return "", 0, fmt.Errorf("reading %s: %w", at, err)
			}
			c.ResourceSlices = append(c.ResourceSlices, s)
		}
		return list.GetContinue(), len(list.Items), nil
	})
}

// ClassOf is what discover reads of a DeviceClass.
func ClassOf(dc *resourcev1.DeviceClass) DeviceClass {
	out := DeviceClass{Name: dc.Name, ExtendedResource: derefString(dc.Spec.ExtendedResourceName)}
	for _, s := range dc.Spec.Selectors {
		if s.CEL != nil {
			out.Selectors = append(out.Selectors, s.CEL.Expression)
		}
	}
	return out
}

// SliceOf keeps what discover reads of a ResourceSlice (the status
// reporter's cache keeps this much). A slice past the API server's own
// limits is refused: the API server stores none.
func SliceOf(rs *resourcev1.ResourceSlice) (ResourceSlice, error) {
	return sliceOf(rs, &interner{seen: map[string]*Devices{}, budget: -1})
}

func sliceOf(rs *resourcev1.ResourceSlice, in *interner) (ResourceSlice, error) {
	out := ResourceSlice{Name: rs.Name, Driver: rs.Spec.Driver, Node: derefString(rs.Spec.NodeName)}
	switch {
	case out.Node != "":
	case rs.Spec.NodeSelector != nil:
		out.Spread = "nodeSelector"
	case derefBool(rs.Spec.AllNodes):
		out.Spread = "allNodes"
	case derefBool(rs.Spec.PerDeviceNodeSelection):
		out.Spread = "perDeviceNodeSelection"
	default:
		out.Spread = "no node"
	}
	if len(rs.Spec.Devices) > resourcev1.ResourceSliceMaxDevices {
		return out, fmt.Errorf("it has %d devices; the API server accepts at most %d in a slice", len(rs.Spec.Devices), resourcev1.ResourceSliceMaxDevices)
	}
	if out.Node == "" {
		return out, nil
	}
	index := map[*Devices]int{}
	for i := range rs.Spec.Devices {
		d, err := in.intern(&rs.Spec.Devices[i])
		if err != nil {
			return out, fmt.Errorf("device %q: %w", rs.Spec.Devices[i].Name, err)
		}
		if j, ok := index[d]; ok {
			out.Devices[j].Count++
			continue
		}
		index[d] = len(out.Devices)
		out.Devices = append(out.Devices, Devices{Count: 1, Attributes: d.Attributes, Capacity: d.Capacity})
	}
	return out, nil
}

// interner keeps each distinct device content once, charging its bytes to
// a budget (a negative budget is none).
type interner struct {
	seen   map[string]*Devices
	budget int
}

func (in *interner) intern(d *resourcev1.Device) (*Devices, error) {
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		return nil, fmt.Errorf("it has %d attributes and capacities; the API server accepts at most %d", n, resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)
	}
	var key strings.Builder
	attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
	for _, name := range slices.Sorted(maps.Keys(d.Attributes)) {
		if err := checkName(string(name)); err != nil {
			return nil, err
		}
		a := d.Attributes[name]
		if v := cmp.Or(derefString(a.StringValue), derefString(a.VersionValue)); len(v) > resourcev1.DeviceAttributeMaxValueLength {
			return nil, fmt.Errorf("attribute %s is %d characters long; the API server accepts at most %d", name, len(v), resourcev1.DeviceAttributeMaxValueLength)
		}
		if _, id := splitName(string(name)); identityAttributes[id] {
			continue
		}
		attrs[name] = a
		fmt.Fprintf(&key, "a%s=%s\x00", name, attributeKey(a))
	}
	capacity := map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{}
	for _, name := range slices.Sorted(maps.Keys(d.Capacity)) {
		if err := checkName(string(name)); err != nil {
			return nil, err
		}
		q := d.Capacity[name].Value
		capacity[name] = resourcev1.DeviceCapacity{Value: q}
		fmt.Fprintf(&key, "c%s=%s\x00", name, q.String())
	}
	if kept, ok := in.seen[key.String()]; ok {
		return kept, nil
	}
	if in.budget >= 0 {
		if in.budget -= 512 + 4*key.Len(); in.budget < 0 {
			return nil, fmt.Errorf("the cluster's devices are more than discover keeps: their distinct attributes and capacities pass %d MiB; a real cluster's GPUs are a few kinds (its identity attributes, %s, aside)", DeviceBudget>>20, strings.Join(slices.Sorted(maps.Keys(identityAttributes)), ", "))
		}
	}
	kept := &Devices{Attributes: attrs, Capacity: capacity}
	in.seen[key.String()] = kept
	return kept, nil
}

// IdentityAttribute reports whether an attribute name ("uuid",
// "resource.kubernetes.io/pciBusID") names one device rather than a kind
// of device: discover keeps none (the status reporter's cache neither).
func IdentityAttribute(name string) bool {
	_, id := splitName(name)
	return identityAttributes[id]
}

// checkName refuses an attribute or capacity name longer than the API
// server allows.
func checkName(name string) error {
	domain, id := splitName(name)
	if len(domain) > resourcev1.DeviceMaxDomainLength || len(id) > resourcev1.DeviceMaxIDLength {
		return fmt.Errorf("the name %.80q is longer than the API server accepts (a domain of %d characters and a name of %d)", name, resourcev1.DeviceMaxDomainLength, resourcev1.DeviceMaxIDLength)
	}
	return nil
}

// splitName splits "gpu.nvidia.com/productName"; an unqualified name is in
// the driver's domain, "".
func splitName(name string) (domain, id string) {
	if d, i, ok := strings.Cut(name, "/"); ok {
		return d, i
	}
	return "", name
}

// attributeKey is an attribute's type and value, as a key.
func attributeKey(a resourcev1.DeviceAttribute) string {
	switch {
	case a.IntValue != nil:
		return fmt.Sprintf("i%d", *a.IntValue)
	case a.BoolValue != nil:
		return fmt.Sprintf("b%t", *a.BoolValue)
	case a.VersionValue != nil:
		return "v" + *a.VersionValue
	case a.StringValue != nil:
		return "s" + *a.StringValue
	}
	return "?"
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefBool(b *bool) bool { return b != nil && *b }

// selectors compiles DeviceClass and pool selectors as the scheduler does
// (k8s.io/dynamic-resource-allocation/structured: its CEL cache, the
// stored-expressions environment, the API server's cost limit at run time).
var selectors = dracel.NewCache(256, dracel.Features{})

// matches evaluates CEL selectors on a device of driver as the scheduler
// does; a selector that does not compile or fails is no match, with why.
func matches(exprs []string, driver string, d *Devices) (bool, error) {
	for _, expr := range exprs {
		res := selectors.GetOrCompile(expr)
		if res.Error != nil {
			return false, fmt.Errorf("%q does not compile: %s", expr, res.Error.Detail)
		}
		ok, _, err := res.DeviceMatches(context.Background(), dracel.Device{Driver: driver, Attributes: d.Attributes, Capacity: d.Capacity})
		if err != nil {
			return false, fmt.Errorf("%q fails: %w", expr, err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// wholeGPU reports whether a device of a GPU driver is a whole GPU by its
// type attribute (gpus.Vendor.WholeGPUType), when it has one: NVIDIA's
// driver publishes MIG devices and GPUs bound for virtual machines under
// the same driver, with type "mig" and "vfio", which a DeviceClass written
// by hand, say on productName alone, would pick too. A device without the
// attribute is judged by its classes alone.
func wholeGPU(driver string, d *Devices) bool {
	v := gpus.ForDriver(driver)
	if v == nil {
		return false
	}
	t, ok := lookupAttribute(d.Attributes, driver, "type")
	return !ok || t.StringValue == nil || v.WholeGPUType == "" || *t.StringValue == v.WholeGPUType
}

// nodeGPU is one kind of DRA GPU on a node: devices of one class, product
// and memory.
type nodeGPU struct {
	class, driver, product string
	memoryMiB              int64
	count                  int32
	// attrs are the attributes every device of the kind shares.
	attrs map[resourcev1.QualifiedName]resourcev1.DeviceAttribute
}

// draNode is what a node's ResourceSlices offer as GPUs: the most
// numerous kind, and the others.
type draNode struct {
	gpu    nodeGPU
	others []nodeGPU
}

// draIndex is each node's DRA GPUs, by node name.
type draIndex map[string]*draNode

// gpuClass is the class a GPU device is claimed by: a DeviceClass whose
// selectors it satisfies and that holds whole GPUs, the one named like
// its driver first (NVIDIA's gpu.nvidia.com), else the first by name.
func gpuClass(classes []DeviceClass, driver string, d *Devices) string {
	var found []string
	for _, cl := range classes {
		if _, _, refused := gpus.RefusedClass(cl.Name); refused {
			continue
		}
		if ok, _ := matches(cl.Selectors, driver, d); ok {
			found = append(found, cl.Name)
		}
	}
	if slices.Contains(found, driver) {
		return driver
	}
	if len(found) > 0 {
		return slices.Min(found)
	}
	return ""
}

// indexDRA reads each node's GPUs from the slices bound to it, each
// device classified by evaluating every DeviceClass's selectors on it.
func indexDRA(c *Cluster) draIndex {
	ix := draIndex{}
	if len(c.ResourceSlices) == 0 {
		return ix
	}
	type kindKey struct {
		class, driver, product string
		memoryMiB              int64
	}
	// Identical devices share their maps: one evaluation per content.
	memo := map[string]string{}
	perNode := map[string]map[kindKey]*nodeGPU{}
	for _, s := range c.ResourceSlices {
		if s.Node == "" {
			continue
		}
		if gpus.ForDriver(s.Driver) == nil {
			continue
		}
		for i := range s.Devices {
			d := &s.Devices[i]
			mk := fmt.Sprintf("%s\x00%p", s.Driver, d.Attributes)
			class, ok := memo[mk]
			if !ok {
				if wholeGPU(s.Driver, d) {
					class = gpuClass(c.DeviceClasses, s.Driver, d)
				}
				memo[mk] = class
			}
			if class == "" {
				continue
			}
			k := kindKey{class: class, driver: s.Driver, product: deviceProduct(d, s.Driver), memoryMiB: deviceMemoryMiB(d, s.Driver)}
			kinds := perNode[s.Node]
			if kinds == nil {
				kinds = map[kindKey]*nodeGPU{}
				perNode[s.Node] = kinds
			}
			g := kinds[k]
			if g == nil {
				g = &nodeGPU{class: k.class, driver: k.driver, product: k.product, memoryMiB: k.memoryMiB, attrs: maps.Clone(d.Attributes)}
				kinds[k] = g
			} else {
				g.attrs = shared(g.attrs, d.Attributes)
			}
			g.count = min(g.count+int32(d.Count), 1<<20)
		}
	}
	for node, kinds := range perNode {
		all := slices.Collect(maps.Values(kinds))
		slices.SortFunc(all, func(a, b *nodeGPU) int {
			return cmp.Or(cmp.Compare(b.count, a.count), cmp.Compare(a.class, b.class), cmp.Compare(a.product, b.product), cmp.Compare(a.memoryMiB, b.memoryMiB))
		})
		n := &draNode{gpu: *all[0]}
		for _, o := range all[1:] {
			n.others = append(n.others, *o)
		}
		ix[node] = n
	}
	return ix
}

// shared is the attributes of a that b has with the same value.
func shared(a, b map[resourcev1.QualifiedName]resourcev1.DeviceAttribute) map[resourcev1.QualifiedName]resourcev1.DeviceAttribute {
	for name, v := range a {
		if w, ok := b[name]; !ok || attributeKey(v) != attributeKey(w) {
			delete(a, name)
		}
	}
	return a
}

// deviceProduct is a device's productName attribute, in its driver's
// domain.
func deviceProduct(d *Devices, driver string) string {
	a, ok := lookupAttribute(d.Attributes, driver, "productName")
	if !ok || a.StringValue == nil {
		return ""
	}
	return *a.StringValue
}

// lookupAttribute finds an attribute by its name in the driver's domain,
// written plain or qualified, as the CEL environment does.
func lookupAttribute(attrs map[resourcev1.QualifiedName]resourcev1.DeviceAttribute, driver, id string) (resourcev1.DeviceAttribute, bool) {
	if a, ok := attrs[resourcev1.QualifiedName(id)]; ok {
		return a, true
	}
	a, ok := attrs[resourcev1.QualifiedName(driver+"/"+id)]
	return a, ok
}

// deviceMemoryMiB is a device's capacity memory in MiB, 0 when it has none.
func deviceMemoryMiB(d *Devices, driver string) int64 {
	q, ok := d.Capacity["memory"]
	if !ok {
		q, ok = d.Capacity[resourcev1.QualifiedName(driver+"/memory")]
	}
	if !ok || q.Value.Sign() <= 0 {
		return 0
	}
	return q.Value.Value() >> 20
}

// fileAttributes writes a pool's shared attributes as a capability file
// holds them (pooldev.AttributeText): the driver's own attributes
// by their plain name when the class is named like the driver (as the
// renderer reads them, pooldev.Declared), else qualified. An
// attribute the file cannot hold as its type (a string that reads back
// as a number or version) is left out, with a note.
func fileAttributes(g nodeGPU, attrs map[resourcev1.QualifiedName]resourcev1.DeviceAttribute) (map[string]string, []string) {
	out := map[string]string{}
	var skipped []string
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		text, ok := pooldev.AttributeText(attrs[name])
		domain, id := splitName(string(name))
		key := string(name)
		switch {
		case (domain == "" || domain == g.driver) && g.class == g.driver:
			key = id
		case domain == "":
			key = g.driver + "/" + id
		}
		if !ok {
			skipped = append(skipped, fmt.Sprintf("%s (%q)", key, text))
			continue
		}
		out[key] = text
	}
	if len(out) == 0 {
		out = nil
	}
	return out, skipped
}

// productSelector is the selector that holds a pool's claims to its GPU
// product, as the example files write it.
func productSelector(driver, product string) string {
	return fmt.Sprintf("device.attributes[%q].productName == %q", driver, product)
}

// devices fills a DRA pool's attributes and selector from its nodes'
// devices, and says where its GPUs come from.
func (g *group) devices(gpu *hub.PoolGPU, dra draIndex, field string) []Note {
	first := dra[g.nodes[0].Name].gpu
	attrs := maps.Clone(first.attrs)
	var others []string
	for _, n := range g.nodes {
		d := dra[n.Name]
		attrs = shared(attrs, d.gpu.attrs)
		for _, o := range d.others {
			others = append(others, fmt.Sprintf("%s: %d %s", n.Name, o.count, orNone(cmp.Or(o.product, o.class))))
		}
	}
	notes := []Note{{Field: field + ".gpu.deviceClassName", Text: fmt.Sprintf("the GPUs are DRA devices of driver %s in the nodes' ResourceSlices: pods claim them through a ResourceClaimTemplate", first.driver)}}
	var skipped []string
	gpu.Attributes, skipped = fileAttributes(first, attrs)
	if len(skipped) > 0 {
		notes = append(notes, Note{Field: field + ".gpu.attributes", Text: "left out, as a capability file would read them back as another type: " + strings.Join(skipped, ", ")})
	}
	if first.product != "" {
		expr := productSelector(first.driver, first.product)
		if err := HoldsTo(expr, gpu); err != nil {
			notes = append(notes, Note{Field: field + ".gpu", Text: fmt.Sprintf("no selector: %s", err)})
		} else {
			gpu.Selectors = []string{expr}
		}
	}
	if len(others) > 0 {
		notes = append(notes, Note{Field: field + ".gpu.perNode", Text: "the nodes have other DRA GPUs too, not in this pool: " + listSome(others)})
	}
	return notes
}

// HoldsTo checks a selector as the renderer does (capabilities'
// checkSelector and checkAttributes): it compiles for a new object, and
// the pool's declared device (pooldev.Declared) satisfies it.
func HoldsTo(expr string, gpu *hub.PoolGPU) error {
	res := pooldev.CompileSelector(expr)
	if res.Error != nil {
		return fmt.Errorf("%s does not compile: %s", expr, res.Error.Detail)
	}
	ok, _, err := res.DeviceMatches(context.Background(), pooldev.Declared(gpu))
	switch {
	case err != nil:
		return fmt.Errorf("%s fails on the pool's device: %w", expr, err)
	case !ok:
		return fmt.Errorf("%s is false for the pool's device", expr)
	}
	return nil
}

// listSome lists at most five items, then how many more.
func listSome(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}

// draNotes says what of the cluster's DRA devices no pool holds: slices
// not bound to one node, nodes that allocate GPUs by the device plugin
// too, and GPU nodes without GPUs in a cluster that serves no DRA.
func draNotes(c *Cluster, dra draIndex) []Note {
	var notes []Note
	var spread []string
	for _, s := range c.ResourceSlices {
		if gpus.ForDriver(s.Driver) != nil && s.Node == "" {
			spread = append(spread, fmt.Sprintf("%s (%s)", s.Name, s.Spread))
		}
	}
	if len(spread) > 0 {
		notes = append(notes, Note{Field: "spec.nodePools", Text: "ResourceSlices whose devices are not on one named node are in no pool: " + listSome(spread)})
	}
	var both, unserved []string
	for i := range c.Nodes {
		n := &c.Nodes[i]
		res, _ := gpuResource(n)
		switch {
		case res != "" && dra[n.Name] != nil:
			both = append(both, n.Name)
		case res == "" && !c.DRA && gpus.HasGPUs(n.Labels):
			unserved = append(unserved, n.Name)
		}
	}
	if len(both) > 0 {
		notes = append(notes, Note{Field: "spec.nodePools", Text: "these nodes allocate GPUs by the device plugin and publish them as DRA devices too; their pools keep the extended resource (run one of NVIDIA's device plugin and DRA driver, not both): " + listSome(both)})
	}
	if len(unserved) > 0 {
		notes = append(notes, Note{Field: "spec.nodePools", Text: "these nodes have GPU labels but allocate no GPU, and the cluster serves no resource.k8s.io/v1 to publish them as DRA devices: " + listSome(unserved)})
	}
	return notes
}
