package capsfile

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/discover"
)

// keyOrder is the order a capability file's keys are written in, as the
// examples and docs/capability-file.md write them; other keys follow in
// the order they came.
var keyOrder = []string{
	"apiVersion", "kind", "metadata", "name", "namespace", "annotations", "spec",
	"providers", "version", "gateway", "inferencePoolVersion", "inferenceExtensionVersion", "gatewayAPIVersion", "channel", "parentRef",
	"nodePools", "selector", "taints", "key", "value", "effect", "gpu", "deviceClassName", "selectors", "attributes", "resourceName", "product", "memoryMiB", "perNode",
	"capacity", "cpu", "memory", "nodes", "count", "min", "max", "pricePerNodeHour", "amount", "currency",
	"autoscaling", "keda", "prometheus", "serverAddress", "metricsAPI",
}

// keyRank is a key's place in keyOrder; unknown keys come last.
func keyRank(k string) int {
	if i := slices.Index(keyOrder, k); i >= 0 {
		return i
	}
	return len(keyOrder)
}

// encodeValue encodes a value (a whole capability file, or one field's
// value) as a YAML node, keys in keyOrder.
func encodeValue(value any) (*yaml.RNode, error) {
	data, err := sigsyaml.Marshal(value)
	if err != nil {
		return nil, err
	}
	v, err := yaml.Parse(string(data))
	if err != nil {
		return nil, err
	}
	orderKeys(v.YNode())
	return v, nil
}

// orderKeys sorts every mapping's keys by keyOrder, recursively.
func orderKeys(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		type pair struct{ k, v *yaml.Node }
		var pairs []pair
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, pair{n.Content[i], n.Content[i+1]})
		}
		slices.SortStableFunc(pairs, func(a, b pair) int { return keyRank(a.k.Value) - keyRank(b.k.Value) })
		n.Content = n.Content[:0]
		for _, p := range pairs {
			n.Content = append(n.Content, p.k, p.v)
		}
	}
	for _, c := range n.Content {
		orderKeys(c)
	}
}

// Encode writes a discovered capability file with each note as a comment
// above the field it explains (a note on a field the file lacks goes on
// its nearest parent). A file the renderer would refuse to read is a
// *TooLargeError instead.
func Encode(caps *hub.ClusterCapabilities, notes []discover.Note, header string) ([]byte, error) {
	rn, err := encodeValue(caps)
	if err != nil {
		return nil, err
	}
	if err := addNotes(rn, notes); err != nil {
		return nil, err
	}
	out := rn.MustString()
	if header != "" {
		out = commentLines(header) + out
	}
	nodes := 0
	for _, p := range caps.Spec.NodePools {
		if p.Nodes != nil && p.Nodes.Count != nil {
			nodes += int(*p.Nodes.Count)
		}
	}
	if err := checkReadable([]byte(out), len(caps.Spec.NodePools), nodes); err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// commentLines turns text into YAML comment lines.
func commentLines(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	return b.String()
}

// addNotes puts each note on the key of the field it names, in the order
// given; notes on one field are joined.
func addNotes(rn *yaml.RNode, notes []discover.Note) error {
	items := itemIndex{}
	for _, n := range notes {
		key, err := keyNode(rn, n.Field, items)
		if err != nil {
			return err
		}
		if key.HeadComment != "" {
			key.HeadComment += "\n"
		}
		key.HeadComment += "# " + strings.ReplaceAll(n.Text, "\n", "\n# ")
	}
	return nil
}

// itemIndex holds each list's items by name, built on the first lookup:
// a pool's notes name it, and searching the list for each note made a
// file of thousands of pools take minutes.
type itemIndex map[*yaml.Node]map[string]*yaml.RNode

// item returns the item of list named name, nil when there is none.
func (ix itemIndex) item(list *yaml.RNode, name string) (*yaml.RNode, error) {
	byName, ok := ix[list.YNode()]
	if !ok {
		elements, err := list.Elements()
		if err != nil {
			return nil, err
		}
		byName = map[string]*yaml.RNode{}
		for _, e := range elements {
			if v := e.Field("name"); v != nil {
				if _, dup := byName[v.Value.YNode().Value]; !dup {
					byName[v.Value.YNode().Value] = e
				}
			}
		}
		ix[list.YNode()] = byName
	}
	return byName[name], nil
}

// keyNode finds the node a comment on field belongs to: the key of a
// mapping field, or a list item; the nearest existing
// parent when the field is absent.
func keyNode(root *yaml.RNode, field string, items itemIndex) (*yaml.Node, error) {
	parts := splitField(field)
	node, key := root, root.YNode()
	for _, p := range parts {
		if name, ok := strings.CutPrefix(p, "["); ok {
			item, err := items.item(node, strings.TrimSuffix(name, "]"))
			if err != nil {
				return nil, err
			}
			if item == nil || len(item.YNode().Content) == 0 {
				break
			}
			node, key = item, item.YNode()
			continue
		}
		f := node.Field(p)
		if f == nil {
			break
		}
		node, key = f.Value, f.Key.YNode()
	}
	if key == root.YNode() {
		return nil, fmt.Errorf("no field %s to comment on", field)
	}
	return key, nil
}

// splitField splits spec.nodePools[l4].gpu into spec, nodePools, [l4], gpu.
func splitField(field string) []string {
	var parts []string
	for _, p := range strings.Split(field, ".") {
		if i := strings.Index(p, "["); i > 0 {
			parts = append(parts, p[:i], p[i:])
			continue
		}
		parts = append(parts, p)
	}
	return parts
}
