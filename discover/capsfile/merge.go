package capsfile

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/discover"
)

// Merge updates a hand-written capability file (its text, and declared,
// the same file decoded) with what the cluster says, and returns the new
// text and a note per change. It keeps what only people know — names,
// selectors, prices, autoscaling ranges, images, engines, selection rules,
// comments, layout — and updates the facts: operator releases, the
// providers installed, the gateway's versions and parent Gateway, and each
// pool's taints, GPUs, capacity and node count. A pool is matched to the
// discovered pool whose every node its selector picks; a declared pool
// that picks no node is dropped unless it scales from zero, a discovered
// pool no declared one matches is added. vLLM and llm-d show no operator,
// so they stay as declared. A result the renderer would refuse to read is
// a *TooLargeError instead.
func Merge(text []byte, declared *hub.ClusterCapabilities, c *discover.Cluster) ([]byte, []discover.Note, error) {
	doc, err := yaml.Parse(string(text))
	if err != nil {
		return nil, nil, err
	}
	m := &merger{doc: doc, c: c}
	found, _ := discover.Discover(c, declared.Name)
	steps := []func() error{
		func() error { return m.providers(declared.Spec.Providers, found.Spec.Providers) },
		func() error { return m.gateway(declared.Spec.Gateway, found.Spec.Gateway) },
		func() error { return m.pools(declared.Spec.NodePools) },
		func() error { return m.autoscaling(declared.Spec.Autoscaling, found.Spec.Autoscaling) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	out := []byte(doc.MustString())
	if err := checkReadable(out, len(found.Spec.NodePools), len(c.Nodes)); err != nil {
		return nil, nil, err
	}
	return out, m.changes, nil
}

// unset is how a change names a value the file did not have: a note
// reads "<unset> → 1", never "→ 1", which looks as if a word were lost.
const unset = "<unset>"

// orUnset is s, or unset for the zero values of a field the file left
// out ("" and "0").
func orUnset(s string) string {
	if s == "" || s == "0" {
		return unset
	}
	return s
}

type merger struct {
	doc     *yaml.RNode
	c       *discover.Cluster
	changes []discover.Note
}

func (m *merger) changed(field, format string, args ...any) {
	m.changes = append(m.changes, discover.Note{Field: field, Text: fmt.Sprintf(format, args...)})
}

// listOf returns the spec's list field, created when create is set.
func (m *merger) listOf(field string, create bool) (*yaml.RNode, error) {
	if create {
		return m.doc.Pipe(yaml.LookupCreate(yaml.SequenceNode, "spec", field))
	}
	return m.doc.Pipe(yaml.Lookup("spec", field))
}

func (m *merger) providers(declared, found []hub.ProviderCapability) error {
	byName := func(list []hub.ProviderCapability, name string) *hub.ProviderCapability {
		if i := slices.IndexFunc(list, func(p hub.ProviderCapability) bool { return p.Name == name }); i >= 0 {
			return &list[i]
		}
		return nil
	}
	list, err := m.listOf("providers", false)
	if err != nil {
		return err
	}
	for _, p := range declared {
		field := fmt.Sprintf("spec.providers[%s]", p.Name)
		crd := discover.ProviderCRD(p.Name)
		f := byName(found, p.Name)
		switch {
		case crd != "" && f == nil:
			if err := list.PipeE(yaml.ElementSetter{Keys: []string{"name"}, Values: []string{p.Name}}); err != nil {
				return err
			}
			m.changed(field, "removed: CRD %s is not installed", crd)
		case f != nil && f.Version != "" && !discover.SameRelease(p.Version, f.Version):
			item, err := list.Pipe(yaml.Lookup("[name=" + p.Name + "]"))
			if err != nil {
				return err
			}
			if err := setScalar(item, "version", f.Version, yaml.NodeTagString); err != nil {
				return err
			}
			m.changed(field+".version", "%s → %s", cmp.Or(p.Version, "none"), f.Version)
		}
	}
	for _, f := range found {
		if discover.NeedsNothing(f.Name) || byName(declared, f.Name) != nil {
			continue // a provider that needs nothing installed is a choice, not a fact
		}
		if list, err = m.listOf("providers", true); err != nil {
			return err
		}
		if err := appendItem(list, f); err != nil {
			return err
		}
		m.changed(fmt.Sprintf("spec.providers[%s]", f.Name), "added: installed in the cluster")
	}
	return nil
}

func (m *merger) gateway(declared, found *hub.GatewayCapability) error {
	const field = "spec.gateway"
	spec, err := m.doc.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"))
	if err != nil {
		return err
	}
	if merge, err := m.section(spec, "gateway", declared != nil, found != nil, found,
		"removed: the cluster has no InferencePool CRD, Gateway API or Gateway",
		"added: the cluster has the Inference Extension and a Gateway"); !merge || err != nil {
		return err
	}
	g, err := spec.Pipe(yaml.Lookup("gateway"))
	if err != nil {
		return err
	}
	for _, f := range []struct{ key, was, now string }{
		{"inferencePoolVersion", declared.InferencePoolVersion, found.InferencePoolVersion},
		{"inferenceExtensionVersion", declared.InferenceExtensionVersion, found.InferenceExtensionVersion},
		{"gatewayAPIVersion", declared.GatewayAPIVersion, found.GatewayAPIVersion},
		{"channel", declared.Channel, found.Channel},
	} {
		if f.now != "" && f.now != f.was {
			if err := setScalar(g, f.key, f.now, yaml.NodeTagString); err != nil {
				return err
			}
			m.changed(field+"."+f.key, "%s → %s", cmp.Or(f.was, "none"), f.now)
		}
	}
	switch ref := declared.ParentRef; {
	case ref == nil:
		m.changed(field+".parentRef", "%s → %s/%s", unset, found.ParentRef.Namespace, found.ParentRef.Name)
		return setValue(g, "parentRef", found.ParentRef)
	case !m.c.HasGateway(ref):
		m.changed(field+".parentRef", "%s/%s → %s/%s: the declared Gateway does not exist", ref.Namespace, ref.Name, found.ParentRef.Namespace, found.ParentRef.Name)
		return setValue(g, "parentRef", found.ParentRef)
	}
	return nil
}

func (m *merger) pools(declared []hub.NodePool) error {
	found, _ := discover.Pools(m.c)
	taken := make([]bool, len(found))
	list, err := m.listOf("nodePools", false)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for i := range declared {
		d := &declared[i]
		names[d.Name] = true
		field := fmt.Sprintf("spec.nodePools[%s]", d.Name)
		j := matchPool(d, found, taken)
		if j < 0 {
			if len(d.Selector) == 0 {
				continue // places nothing; nothing to match
			}
			if lo, _, ok := d.Nodes.Range(); ok && lo == 0 {
				m.changed(field, "kept without nodes: it scales from zero")
				continue
			}
			m.changed(field, "removed: no node has its labels %s", labels.SelectorFromSet(d.Selector))
			if err := list.PipeE(yaml.ElementSetter{Keys: []string{"name"}, Values: []string{d.Name}}); err != nil {
				return err
			}
			continue
		}
		taken[j] = true
		item, err := list.Pipe(yaml.Lookup("[name=" + d.Name + "]"))
		if err != nil {
			return err
		}
		if err := m.poolFacts(item, field, d, &found[j].NodePool); err != nil {
			return err
		}
	}
	for j, f := range found {
		if taken[j] {
			continue
		}
		p := f.NodePool
		for base, n := p.Name, 2; names[p.Name]; n++ {
			p.Name = fmt.Sprintf("%s-%d", base, n)
		}
		names[p.Name] = true
		if list, err = m.listOf("nodePools", true); err != nil {
			return err
		}
		if err := appendItem(list, p); err != nil {
			return err
		}
		m.changed(fmt.Sprintf("spec.nodePools[%s]", p.Name), "added: %d node(s) no declared pool picks", len(f.Nodes))
	}
	return nil
}

// matchPool picks the discovered pool, not yet taken, with GPUs when the
// declared one has them, whose every node the declared selector picks; a
// pool of the declared GPU product first.
func matchPool(d *hub.NodePool, found []discover.FoundPool, taken []bool) int {
	if len(d.Selector) == 0 {
		return -1
	}
	sel := labels.SelectorFromSet(d.Selector)
	best := -1
	for j, f := range found {
		if taken[j] || (d.GPU == nil) != (f.GPU == nil) {
			continue
		}
		if slices.ContainsFunc(f.Nodes, func(n *corev1.Node) bool { return !sel.Matches(labels.Set(n.Labels)) }) {
			continue
		}
		if d.GPU != nil && d.GPU.Product != "" && f.GPU.Product == d.GPU.Product {
			return j
		}
		if best < 0 {
			best = j
		}
	}
	return best
}

// poolFacts updates a declared pool's taints, GPUs, capacity and node
// count from the discovered pool.
func (m *merger) poolFacts(item *yaml.RNode, field string, d, f *hub.NodePool) error {
	if was, now := discover.FormatTaints(d.Taints), discover.FormatTaints(f.Taints); was != now {
		m.changed(field+".taints", "%s → %s", cmp.Or(was, "none"), cmp.Or(now, "none"))
		if err := setValue(item, "taints", f.Taints); err != nil {
			return err
		}
	}
	if f.GPU != nil {
		g, err := item.Pipe(yaml.LookupCreate(yaml.MappingNode, "gpu"))
		if err != nil {
			return err
		}
		var was hub.PoolGPU
		if d.GPU != nil {
			was = *d.GPU
		}
		for _, s := range []struct {
			key, was, now, tag string
		}{
			{"deviceClassName", was.DeviceClassName, f.GPU.DeviceClassName, yaml.NodeTagString},
			{"resourceName", d.GPUResource(), f.GPU.ResourceName, yaml.NodeTagString},
			{"product", was.Product, f.GPU.Product, yaml.NodeTagString},
			{"memoryMiB", strconv.FormatInt(was.MemoryMiB, 10), strconv.FormatInt(f.GPU.MemoryMiB, 10), yaml.NodeTagInt},
			{"perNode", strconv.Itoa(int(was.PerNode)), strconv.Itoa(int(f.GPU.PerNode)), yaml.NodeTagInt},
		} {
			if s.now == "" || s.now == "0" || s.now == s.was {
				continue
			}
			if err := setScalar(g, s.key, s.now, s.tag); err != nil {
				return err
			}
			m.changed(field+".gpu."+s.key, "%s → %s", orUnset(s.was), s.now)
		}
		if err := m.devices(g, field+".gpu", &was, f.GPU); err != nil {
			return err
		}
	}
	if c := f.Capacity; c != nil && (d.Capacity == nil || *d.Capacity != *c) {
		if err := setValue(item, "capacity", c); err != nil {
			return err
		}
		was := unset
		if d.Capacity != nil {
			was = fmt.Sprintf("cpu %s, memory %s", d.Capacity.CPU, d.Capacity.Memory)
		}
		m.changed(field+".capacity", "%s → cpu %s, memory %s (the least a node allocates)", was, c.CPU, c.Memory)
	}
	live := *f.Nodes.Count
	switch lo, hi, ok := d.Nodes.Range(); {
	case d.Nodes.Autoscaled():
		if live < lo || live > hi {
			m.changed(field+".nodes", "kept %d to %d, though the cluster has %d node(s) now", lo, hi, live)
		}
	case !ok || lo != live:
		if err := setValue(item, "nodes", f.Nodes); err != nil {
			return err
		}
		was := unset
		if ok {
			was = strconv.Itoa(int(lo))
		}
		m.changed(field+".nodes.count", "%s → %d", was, live)
	}
	return nil
}

// autoscaling updates what autoscales: KEDA (and its release) and the
// custom metrics API come and go with the cluster; the Prometheus address,
// which no cluster says, is kept.
func (m *merger) autoscaling(declared, found *hub.AutoscalingCapability) error {
	const field = "spec.autoscaling"
	spec, err := m.doc.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"))
	if err != nil {
		return err
	}
	added := ""
	if found != nil {
		added = "added: the cluster can autoscale (" + autoscalers(found) + ")"
	}
	if merge, err := m.section(spec, "autoscaling", declared != nil, found != nil, found,
		"removed: the cluster has neither KEDA nor a custom metrics API", added); !merge || err != nil {
		return err
	}
	a, err := spec.Pipe(yaml.Lookup("autoscaling"))
	if err != nil {
		return err
	}
	switch {
	case found.KEDA == nil && declared.KEDA != nil:
		m.changed(field+".keda", "removed: KEDA's ScaledObject CRD is not installed")
		if err := a.PipeE(yaml.Clear("keda")); err != nil {
			return err
		}
	case found.KEDA != nil && declared.KEDA == nil:
		m.changed(field+".keda", "added: KEDA is installed")
		if err := setValue(a, "keda", found.KEDA); err != nil {
			return err
		}
	case found.KEDA != nil && found.KEDA.Version != "" && !discover.SameRelease(found.KEDA.Version, declared.KEDA.Version):
		k, err := a.Pipe(yaml.Lookup("keda"))
		if err != nil {
			return err
		}
		m.changed(field+".keda.version", "%s → %s", cmp.Or(declared.KEDA.Version, "none"), found.KEDA.Version)
		if err := setScalar(k, "version", found.KEDA.Version, yaml.NodeTagString); err != nil {
			return err
		}
	}
	if found.MetricsAPI != declared.MetricsAPI {
		m.changed(field+".metricsAPI", "%s → %s", cmp.Or(declared.MetricsAPI, "none"), cmp.Or(found.MetricsAPI, "none"))
		if found.MetricsAPI == "" {
			return a.PipeE(yaml.Clear("metricsAPI"))
		}
		return setScalar(a, "metricsAPI", found.MetricsAPI, yaml.NodeTagString)
	}
	return nil
}

// section settles a spec section (key) the cluster gained or lost: it is
// removed when nothing was found, added whole when nothing was declared.
// merge is true when both exist and the caller merges field by field.
func (m *merger) section(spec *yaml.RNode, key string, declared, found bool, value any, removed, added string) (merge bool, err error) {
	field := "spec." + key
	switch {
	case !declared && !found:
		return false, nil
	case !found:
		m.changed(field, "%s", removed)
		return false, spec.PipeE(yaml.Clear(key))
	case !declared:
		m.changed(field, "%s", added)
		return false, setValue(spec, key, value)
	}
	return true, nil
}

// autoscalers names what autoscales, for a change note.
func autoscalers(a *hub.AutoscalingCapability) string {
	var names []string
	if a.KEDA != nil {
		names = append(names, "KEDA")
	}
	if a.MetricsAPI != "" {
		names = append(names, a.MetricsAPI)
	}
	return strings.Join(names, ", ")
}

// setScalar sets a scalar field in place, keeping its quoting and
// comments, or adds it.
func setScalar(n *yaml.RNode, key, value, tag string) error {
	if f := n.Field(key); f != nil && f.Value.YNode().Kind == yaml.ScalarNode {
		f.Value.YNode().Value = value
		f.Value.YNode().Tag = tag
		return nil
	}
	return setField(n, key, yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}))
}

// setField replaces a field's value, or inserts the field where keyOrder
// puts it (before the first key that comes after it), so that an added
// fact does not land below a pool's price.
func setField(n *yaml.RNode, key string, value *yaml.RNode) error {
	if n.Field(key) != nil {
		return n.PipeE(yaml.SetField(key, value))
	}
	content := n.YNode().Content
	at := len(content)
	for i := 0; i+1 < len(content); i += 2 {
		if keyRank(content[i].Value) > keyRank(key) {
			at = i
			break
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: key}
	n.YNode().Content = slices.Insert(content, at, k, value.YNode())
	return nil
}

// setValue replaces a field with a value encoded as the file's keys go.
func setValue(n *yaml.RNode, key string, value any) error {
	v, err := encodeValue(value)
	if err != nil {
		return err
	}
	return setField(n, key, v)
}

func appendItem(list *yaml.RNode, value any) error {
	v, err := encodeValue(value)
	if err != nil {
		return err
	}
	return list.PipeE(yaml.Append(v.YNode()))
}

// devices updates a pool's DRA facts past its deviceClassName: each
// attribute follows the devices (changed, added, removed one by one, so
// the comments on the others stay); a declared selector stays while the
// devices satisfy it, and the discovered product selector stands in when
// none is left. A pool whose GPUs are no longer DRA devices loses all
// three.
func (m *merger) devices(g *yaml.RNode, field string, was, now *hub.PoolGPU) error {
	if now.DeviceClassName == "" {
		for _, key := range []string{"deviceClassName", "selectors", "attributes"} {
			if g.Field(key) == nil {
				continue
			}
			m.changed(field+"."+key, "removed: the nodes' GPUs are not DRA devices")
			if err := g.PipeE(yaml.Clear(key)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(now.Attributes) > 0 || len(was.Attributes) > 0 {
		attrs, err := g.Pipe(yaml.LookupCreate(yaml.MappingNode, "attributes"))
		if err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(was.Attributes)) {
			if _, ok := now.Attributes[name]; !ok {
				m.changed(field+".attributes."+name, "removed: the devices no longer share it (was %s)", was.Attributes[name])
				if err := attrs.PipeE(yaml.Clear(name)); err != nil {
					return err
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(now.Attributes)) {
			if v, ok := was.Attributes[name]; ok && v == now.Attributes[name] {
				continue
			}
			m.changed(field+".attributes."+name, "%s → %s", orUnset(was.Attributes[name]), now.Attributes[name])
			if err := setScalar(attrs, name, now.Attributes[name], yaml.NodeTagString); err != nil {
				return err
			}
		}
		if len(attrs.YNode().Content) == 0 {
			if err := g.PipeE(yaml.Clear("attributes")); err != nil {
				return err
			}
		}
	}
	merged := *now
	var kept []string
	for _, expr := range was.Selectors {
		if err := discover.HoldsTo(expr, &merged); err != nil {
			m.changed(field+".selectors", "removed %s: %v", expr, err)
			continue
		}
		kept = append(kept, expr)
	}
	if len(kept) == 0 {
		kept = now.Selectors
	}
	if slices.Equal(kept, was.Selectors) {
		return nil
	}
	if len(kept) == 0 {
		return g.PipeE(yaml.Clear("selectors"))
	}
	m.changed(field+".selectors", "%s → %s", orUnset(strings.Join(was.Selectors, ", ")), strings.Join(kept, ", "))
	return setValue(g, "selectors", kept)
}
