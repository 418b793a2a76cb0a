package manifest

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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
	var b bytes.Buffer
	if err := w.Stream(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Stream writes the ResourceList to out as Write gives it, without
// holding it whole: at 10,000 models it is 50 MiB, next to the items'
// own. Everything is encoded before the first byte is written, so an
// error of encoding writes nothing; an error of out is returned as a
// *WriteError.
func (w *ResourceListWriter) Stream(out io.Writer) error {
	sortLikeSDK(w.Items)
	var config []byte
	if w.FunctionConfig != nil && len(w.FunctionConfig.Content) > 0 {
		// Written whole: a flow-style config starts on the key's line.
		var err error
		if config, err = encode("functionConfig", w.FunctionConfig); err != nil {
			return err
		}
	}
	results, err := encodeResults(w.Results)
	if err != nil {
		return err
	}
	const header = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	size := len(header) + len("items:\n") + len(config) + len("results:\n")
	for _, it := range w.Items {
		size += len(it.YAML)
	}
	for _, r := range results {
		size += len(r)
	}
	if b, ok := out.(*bytes.Buffer); ok {
		// One allocation of the exact size: growing a buffer to 50 MiB
		// copies it over and over.
		b.Grow(size)
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	// A bufio.Writer keeps its first error and Flush returns it.
	write := func(b []byte) { _, _ = bw.Write(b) }
	write([]byte(header))
	if len(w.Items) > 0 {
		write([]byte("items:\n"))
		for _, it := range w.Items {
			write(it.YAML)
		}
	}
	write(config)
	if len(results) > 0 {
		write([]byte("results:\n"))
		for _, r := range results {
			write(r)
		}
	}
	if err := bw.Flush(); err != nil {
		return &WriteError{Err: err}
	}
	return nil
}

// WriteError is an error of the writer Stream writes to.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// encodeResults encodes the results, each on its own, on as many
// goroutines as the process may run at once: a run over thousands of
// models has a result for each of their warnings (23,000 at 10,000
// models), and writing them was most of writing the ResourceList, after
// the items were encoded as they were rendered.
func encodeResults(rs []*Result) ([][]byte, error) {
	out := make([][]byte, len(rs))
	errs := make([]error, len(rs))
	encodeRange := func(from, to int) {
		for i := from; i < to; i++ {
			n, err := resultNode(rs[i])
			if err == nil {
				out[i], err = encodeEntry("results", n)
			}
			errs[i] = err
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(rs)/256+1)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() { encodeRange(k*len(rs)/workers, (k+1)*len(rs)/workers) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first, as one goroutine would stop at it
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
	if b, ok := writeBlocks(func(w *blockWriter) bool { return w.entry(n) }); ok {
		return b, nil
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
	if n, ok := directResultNode(r); ok {
		return n, nil
	}
	return roundTripResultNode(r)
}

// roundTripResultNode is resultNode the SDK's way: JSON text, a map, YAML
// text (yaml.Node.Encode writes the map and parses what it wrote).
func roundTripResultNode(r *Result) (*yaml.Node, error) {
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

// directResultNode builds the node roundTripResultNode builds, straight
// from the result: a tenth of a run's CPU went to the round trip. It
// leaves to the round trip a nil result, one whose field values could be anything,
// text that is not UTF-8 (JSON replaces it), and a file index beyond
// what JSON's float64 holds exactly.
func directResultNode(r *Result) (*yaml.Node, bool) {
	const exact = 1 << 53
	if r == nil || r.Field != nil && (r.Field.CurrentValue != nil || r.Field.ProposedValue != nil) ||
		r.File != nil && (r.File.Index > exact || r.File.Index < -exact) {
		return nil, false
	}
	b := resultBuilder{ok: true}
	n := b.mapping(
		"message", b.str(r.Message),
		"severity", b.str(r.Severity),
	)
	if ref := r.ResourceRef; ref != nil {
		b.add(n, "resourceRef", b.mapping("apiVersion", b.str(ref.APIVersion), "kind", b.str(ref.Kind), "name", b.str(ref.Name), "namespace", b.str(ref.Namespace)))
	}
	if f := r.Field; f != nil {
		b.add(n, "field", b.mapping("path", b.str(f.Path)))
	}
	if f := r.File; f != nil {
		index := (*yaml.Node)(nil)
		if f.Index != 0 {
			index = &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.Itoa(f.Index)}
		}
		b.add(n, "file", b.mapping("path", b.str(f.Path), "index", index))
	}
	if len(r.Tags) > 0 {
		tags := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for k, v := range r.Tags {
			tags.Content = append(tags.Content, b.value(k), b.value(v))
		}
		b.add(n, "tags", tags)
	}
	if !b.ok {
		return nil, false
	}
	orderFields(n)
	return n, true
}

// resultBuilder builds a result's nodes as yaml.v3 writes a map of JSON
// values and reads it back; ok turns false on text JSON would change.
type resultBuilder struct{ ok bool }

// str is a string field's node, nil when it is empty (omitempty).
func (b *resultBuilder) str(s string) *yaml.Node {
	if s == "" {
		return nil
	}
	return b.value(s)
}

// value is a string as yaml.v3 marshals one: literal over several lines,
// plain when it reads back as a string (and not as a YAML 1.1 boolean or
// sexagesimal number), else double-quoted.
func (b *resultBuilder) value(s string) *yaml.Node {
	// yaml.v3 reads `"<<"` back as a merge key (`!!merge <<`).
	if !utf8.ValidString(s) || s == "<<" {
		b.ok = false
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
	switch {
	case strings.Contains(s, "\n"):
		n.Style = yaml.LiteralStyle
	case !plainString(s):
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// mapping is a mapping of the pairs whose value is not nil; an object
// whose fields are all empty is an empty mapping, as JSON writes `{}`.
func (b *resultBuilder) mapping(pairs ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i < len(pairs); i += 2 {
		if v := pairs[i+1].(*yaml.Node); v != nil {
			b.add(n, pairs[i].(string), v)
		}
	}
	return n
}

func (b *resultBuilder) add(n *yaml.Node, key string, value *yaml.Node) {
	n.Content = append(n.Content, b.value(key), value)
}

// plainString: yaml.v3 marshals s unquoted (its stringv): s reads back as
// a string, and YAML 1.1 would not read it as a boolean or a base 60
// number.
func plainString(s string) bool {
	if resolvedTag(s) != yaml.NodeTagString {
		return false
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false
	}
	return !sexagesimal.MatchString(s)
}

// sexagesimal is a YAML 1.1 base 60 float (`1:30.5`), as yaml.v3 tests it.
var sexagesimal = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

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
