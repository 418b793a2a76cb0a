package discover

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	pooldev "github.com/airunway-render/airunway-render/api/dra"
	"github.com/airunway-render/airunway-render/api/hub"
)

// liveDevices is the cluster's DRA devices as Compare reads them: each
// node's slices and the classes by name.
type liveDevices struct {
	c       *Cluster
	byNode  map[string][]*ResourceSlice
	classes map[string]*DeviceClass
}

// publishesGPUs reports whether a node's slices hold whole GPUs of a GPU
// driver, whatever class picks them: a node a CPU pool does not count,
// even while its DeviceClass is gone.
func (l *liveDevices) publishesGPUs(node string) bool {
	for _, s := range l.byNode[node] {
		for i := range s.Devices {
			if wholeGPU(s.Driver, &s.Devices[i]) {
				return true
			}
		}
	}
	return false
}

func newLiveDevices(c *Cluster) *liveDevices {
	l := &liveDevices{c: c, byNode: map[string][]*ResourceSlice{}, classes: map[string]*DeviceClass{}}
	for i := range c.ResourceSlices {
		if s := &c.ResourceSlices[i]; s.Node != "" {
			l.byNode[s.Node] = append(l.byNode[s.Node], s)
		}
	}
	for i := range c.DeviceClasses {
		l.classes[c.DeviceClasses[i].Name] = &c.DeviceClasses[i]
	}
	return l
}

// classDevice is devices of a node that a class's selectors pick.
type classDevice struct {
	driver string
	*Devices
}

// ofClass returns a node's devices that the class's selectors pick, as
// the scheduler evaluates them, and the first evaluation error.
func (l *liveDevices) ofClass(node string, class *DeviceClass) ([]classDevice, error) {
	var out []classDevice
	var first error
	for _, s := range l.byNode[node] {
		for i := range s.Devices {
			ok, err := matches(class.Selectors, s.Driver, &s.Devices[i])
			if err != nil && first == nil {
				first = err
			}
			if ok {
				out = append(out, classDevice{driver: s.Driver, Devices: &s.Devices[i]})
			}
		}
	}
	return out, first
}

// compareDevices holds a DRA pool to its nodes' ResourceSlices: the
// DeviceClass exists, every node publishes perNode devices of it, with
// the declared memory and attributes, and every declared selector picks
// a device on every node (else the pool's pods stay Pending there).
func compareDevices(p *hub.NodePool, nodes []*corev1.Node, l *liveDevices, diff func(sub, declared, live, format string, args ...any) Difference) []Difference {
	g := p.GPU
	if !l.c.DRA {
		return []Difference{diff(".gpu.deviceClassName", g.DeviceClassName, "no resource.k8s.io/v1", "the cluster serves no resource.k8s.io/v1 (Dynamic Resource Allocation, Kubernetes 1.34 and later): no node publishes DRA devices")}
	}
	class := l.classes[g.DeviceClassName]
	if class == nil {
		return []Difference{diff(".gpu.deviceClassName", g.DeviceClassName, "none", "DeviceClass %s does not exist", g.DeviceClassName)}
	}
	var out []Difference
	if g.ExtendedResource && class.ExtendedResource != p.GPUResource() {
		// The pool's pods request the resource: with no class serving it,
		// and the nodes listing none, they stay Pending.
		out = append(out, diff(".gpu.extendedResource", p.GPUResource(), orNone(class.ExtendedResource), "DeviceClass %s serves %s as an extended resource, not %s (its spec.extendedResourceName), so the pool's pods that request %s stay Pending", g.DeviceClassName, orNone(class.ExtendedResource), p.GPUResource(), p.GPUResource()))
	}
	devices := map[string][]classDevice{}
	var evalErr error
	count := byNode(nodes, func(n *corev1.Node) string {
		ds, err := l.ofClass(n.Name, class)
		if err != nil && evalErr == nil {
			evalErr = err
		}
		devices[n.Name] = ds
		total := 0
		for _, d := range ds {
			total += d.Count
		}
		return strconv.Itoa(total)
	})
	if count.has("0") {
		msg := fmt.Sprintf("not every node publishes devices of DeviceClass %s: %s", g.DeviceClassName, count)
		if evalErr != nil {
			msg += fmt.Sprintf(" (its selector %v)", evalErr)
		}
		return append(out, diff(".gpu.deviceClassName", g.DeviceClassName, count.String(), "%s", msg))
	}
	if g.PerNode > 0 && count.differsFrom(strconv.Itoa(int(g.PerNode))) {
		out = append(out, diff(".gpu.perNode", strconv.Itoa(int(g.PerNode)), count.String(), "devices of DeviceClass %s differ from the file's %d per node: %s", g.DeviceClassName, g.PerNode, count))
	}
	// Each node's devices read one value; devices of a node that differ
	// read as their values joined, so a mixed node is a difference too.
	values := func(read func(classDevice) string) perNode {
		return byNode(nodes, func(n *corev1.Node) string {
			var vs []string
			for _, d := range devices[n.Name] {
				if v := read(d); !slices.Contains(vs, v) {
					vs = append(vs, v)
				}
			}
			slices.Sort(vs)
			return strings.Join(vs, "|")
		})
	}
	if want := g.MemoryMiB; want > 0 {
		live := values(func(d classDevice) string { return orNone(strconv.FormatInt(deviceMemoryMiB(d.Devices, d.driver), 10)) })
		if live.differsFrom(strconv.FormatInt(want, 10)) {
			out = append(out, diff(".gpu.memoryMiB", strconv.FormatInt(want, 10), live.String(), "the devices' capacity memory (MiB) differs from the file's %d: %s", want, live))
		}
	}
	if want := g.Product; want != "" {
		label := productLabelOf(g.ResourceName)
		if live := byNode(nodes, labelOf(label)); live.differsFrom(want) {
			out = append(out, diff(".gpu.product", want, live.String(), "label %s differs from the file's %s: %s", label, want, live))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.Attributes)) {
		want := g.Attributes[name]
		live := values(func(d classDevice) string { return attributeText(d, g.DeviceClassName, name) })
		if live.differsFrom(want) {
			out = append(out, diff(".gpu.attributes."+name, want, live.String(), "the devices' attribute %s differs from the file's %s: %s", name, want, live))
		}
	}
	for i, expr := range g.Selectors {
		var why error
		picked := byNode(nodes, func(n *corev1.Node) string {
			total := 0
			for _, d := range devices[n.Name] {
				ok, err := matches([]string{expr}, d.driver, d.Devices)
				if err != nil && why == nil {
					why = err
				}
				if ok {
					total += d.Count
				}
			}
			return strconv.Itoa(total)
		})
		if picked.has("0") {
			msg := fmt.Sprintf("selector %s picks no device of DeviceClass %s on some nodes, where the pool's pods would stay Pending (devices picked: %s)", expr, g.DeviceClassName, picked)
			if why != nil {
				msg += fmt.Sprintf("; %v", why)
			}
			out = append(out, diff(fmt.Sprintf(".gpu.selectors[%d]", i), expr, picked.String(), "%s", msg))
		}
	}
	return out
}

// attributeText is a device's attribute as a capability file names and
// writes it (pooldev.Declared reads a plain name in the domain of
// a driver named like the class), "none" when the device has none.
func attributeText(d classDevice, class, name string) string {
	domain, id := splitName(name)
	if domain == "" {
		domain = class
	}
	var a resourcev1.DeviceAttribute
	var ok bool
	if domain == d.driver {
		a, ok = lookupAttribute(d.Attributes, d.driver, id)
	} else {
		a, ok = d.Attributes[resourcev1.QualifiedName(domain+"/"+id)]
	}
	if !ok {
		return "none"
	}
	text, _ := pooldev.AttributeText(a)
	return text
}
