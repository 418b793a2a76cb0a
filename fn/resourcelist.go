package fn

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/render"
)

// resourceListWriter writes a ResourceList byte for byte as the SDK's
// ResourceList.ToYAML does, without its cost. The SDK hands the whole list
// to the YAML encoder as one document, about ten times the cost per item
// of encoding items one at a time (BenchmarkOutputEncoding); it was 1.4 s
// of the 1.7 s a 1,000-model run took. Here
// every item, the function config and every result is encoded alone,
// inside a one-entry mapping of the key it sits under: the emitter sees the
// same context (column, sequence style) as in the whole document, so the
// bytes are the same once the key's line is dropped.
// TestResourceListWriterMatchesSDK and FuzzResourceList hold the two equal.
type resourceListWriter struct {
	items          []render.Encoded // each from encodeItem
	functionConfig *yaml.Node       // a mapping, written unless nil or empty
	results        []*result
}

func (w *resourceListWriter) write() ([]byte, error) {
	sortLikeSDK(w.items)
	var config []byte
	if w.functionConfig != nil && len(w.functionConfig.Content) > 0 {
		// Written whole: a flow-style config starts on the key's line.
		var err error
		if config, err = encode("functionConfig", w.functionConfig); err != nil {
			return nil, err
		}
	}
	var results [][]byte
	for _, r := range w.results {
		n, err := resultNode(r)
		if err != nil {
			return nil, err
		}
		b, err := encodeEntry("results", n)
		if err != nil {
			return nil, err
		}
		results = append(results, b)
	}
	// One allocation of the exact size: the output of 10,000 models is
	// 29 MiB, and growing a buffer to that copies it over and over.
	const header = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	size := len(header) + len("items:\n") + len(config) + len("results:\n")
	for _, it := range w.items {
		size += len(it.YAML)
	}
	for _, r := range results {
		size += len(r)
	}
	out := make([]byte, 0, size)
	out = append(out, header...)
	if len(w.items) > 0 {
		out = append(out, "items:\n"...)
		for _, it := range w.items {
			out = append(out, it.YAML...)
		}
	}
	out = append(out, config...)
	if len(results) > 0 {
		out = append(out, "results:\n"...)
		for _, r := range results {
			out = append(out, r...)
		}
	}
	return out, nil
}

// encodeItem is render.Options.Encode for the function: an item's entry
// under `items:` and the key the SDK sorts it by.
func encodeItem(n *yaml.RNode) ([]byte, string, error) {
	b, err := encodeEntry("items", n.YNode())
	return b, sdkSortKey(n.YNode()), err
}

// encode encodes `key: value` as one document with kyaml's encoder
// settings.
func encode(key string, value *yaml.Node) ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: key}, value,
	}}
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, fmt.Errorf("cannot encode `%s`: %w", key, err)
	}
	return buf.Bytes(), nil
}

// encodeEntry encodes n as the entry of a block sequence under key: what
// follows the key's own line.
func encodeEntry(key string, n *yaml.Node) ([]byte, error) {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	b, err := encode(key, &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: []*yaml.Node{n}})
	if err != nil {
		return nil, err
	}
	head := key + ":\n"
	if !bytes.HasPrefix(b, []byte(head)) {
		return nil, fmt.Errorf("cannot encode `%s`: the encoder wrote %q on the key's line", key, firstLine(b))
	}
	return b[len(head):], nil
}

// resultNode converts a result the way the SDK does: through JSON into a
// map, then keys in kyaml's field order.
func resultNode(r *result) (*yaml.Node, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	n := &yaml.Node{}
	if err := n.Encode(m); err != nil {
		return nil, err
	}
	orderFields(n)
	return n, nil
}

// orderFields puts the keys of every mapping below n in kyaml's
// FieldOrder: known fields first by rank (`apiVersion`, `kind`, `name`...),
// then the rest by name. Keys are unique, so the order is total.
func orderFields(n *yaml.Node) {
	for _, c := range n.Content {
		orderFields(c)
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	pairs := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	slices.SortFunc(pairs, func(a, b [2]*yaml.Node) int {
		ra, okA := yaml.FieldOrder[a[0].Value]
		rb, okB := yaml.FieldOrder[b[0].Value]
		switch {
		case okA && okB:
			return cmp.Compare(ra, rb)
		case okA:
			return -1
		case okB:
			return 1
		}
		return strings.Compare(a[0].Value, b[0].Value)
	})
	n.Content = n.Content[:0]
	for _, p := range pairs {
		n.Content = append(n.Content, p[0], p[1])
	}
}

// sdkSortKey is the key the SDK's ResourceList.Sort orders items by:
// apiVersion, kind, metadata.namespace and metadata.name joined by spaces,
// each taken only when it is a string scalar (anything else is empty).
func sdkSortKey(item *yaml.Node) string {
	meta := mapField(item, "metadata")
	return stringValue(mapField(item, "apiVersion")) + " " + stringValue(mapField(item, "kind")) + " " +
		stringValue(mapField(meta, "namespace")) + " " + stringValue(mapField(meta, "name"))
}

// mapField returns the value of the first key equal to key in mapping m;
// like the SDK, it matches only string (or untagged) scalar keys.
func mapField(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.ScalarNode && (k.Tag == yaml.NodeTagString || k.Tag == "") && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func stringValue(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagString {
		return n.Value
	}
	return ""
}

// sortLikeSDK orders items as the SDK's ResourceList.Sort does: the same
// keys and the same (unstable) sort.Sort, so even ties land where they
// would, but each key computed once instead of twice per comparison.
func sortLikeSDK(items []render.Encoded) { sort.Sort(bySDKKey(items)) }

type bySDKKey []render.Encoded

func (s bySDKKey) Len() int           { return len(s) }
func (s bySDKKey) Less(i, j int) bool { return s[i].CallerKey < s[j].CallerKey }
func (s bySDKKey) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}
