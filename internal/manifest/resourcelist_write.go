package manifest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceListWriter writes a ResourceList byte for byte as the SDK's
// ResourceList.ToYAML does, without its cost. The SDK hands the whole list
// to the YAML encoder as one document, about ten times the cost per item
// of encoding items one at a time (BenchmarkOutputEncoding); it was 1.4 s
// of the 1.7 s a 1,000-model run took. Here every item (EncodeItem, as
// soon as it is rendered), the function config and every result is
// encoded alone, inside a one-entry mapping of the key it sits under: the
// emitter sees the same context (column, sequence style) as in the whole
// document, so the bytes are the same once the key's line is dropped.
// TestResourceListWriterMatchesSDK and FuzzResourceListMatchesSDK hold
// the two equal.
type ResourceListWriter struct {
	Items          []Item     // each from EncodeItem
	FunctionConfig *yaml.Node // a mapping, written unless nil or empty
	Results        []*Result
}

// Item is one item of a ResourceList as EncodeItem wrote it.
type Item struct {
	YAML    []byte // the entry under `items:`
	SortKey string // the key the SDK sorts the item by
}

// Write returns the ResourceList's bytes. It sorts Items, as the SDK sorts
// its list before it writes it.
func (w *ResourceListWriter) Write() ([]byte, error) {
	sortLikeSDK(w.Items)
	var config []byte
	if w.FunctionConfig != nil && len(w.FunctionConfig.Content) > 0 {
		// Written whole: a flow-style config starts on the key's line.
		var err error
		if config, err = encode("functionConfig", w.FunctionConfig); err != nil {
			return nil, err
		}
	}
	var results [][]byte
	for _, r := range w.Results {
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
	for _, it := range w.Items {
		size += len(it.YAML)
	}
	for _, r := range results {
		size += len(r)
	}
	out := make([]byte, 0, size)
	out = append(out, header...)
	if len(w.Items) > 0 {
		out = append(out, "items:\n"...)
		for _, it := range w.Items {
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

// EncodeItem encodes an item of a ResourceList for ResourceListWriter: its
// entry under `items:` and the key the SDK sorts it by. (Its signature is
// render.Options.Encode's.) An item that uses an anchor outside it is
// written with the alias but not the anchor: a function refuses such
// items first (yamlerr.OutsideAlias).
func EncodeItem(n *yaml.RNode) ([]byte, string, error) {
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
	// A copy of the length written: callers keep thousands of these, and
	// the buffer's spare room would be a third of what they hold.
	return bytes.Clone(b[len(head):]), nil
}

// resultNode converts a result the way the SDK does: through JSON into a
// map, then keys in kyaml's field order.
func resultNode(r *Result) (*yaml.Node, error) {
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
	meta := Field(item, "metadata")
	return StringScalar(Field(item, "apiVersion")) + " " + StringScalar(Field(item, "kind")) + " " +
		StringScalar(Field(meta, "namespace")) + " " + StringScalar(Field(meta, "name"))
}

// sortLikeSDK orders items as the SDK's ResourceList.Sort does: the same
// keys and the same (unstable) sort.Sort, so even ties land where they
// would, but each key computed once instead of twice per comparison.
func sortLikeSDK(items []Item) { sort.Sort(bySDKKey(items)) }

type bySDKKey []Item

func (s bySDKKey) Len() int           { return len(s) }
func (s bySDKKey) Less(i, j int) bool { return s[i].SortKey < s[j].SortKey }
func (s bySDKKey) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}
