package manifest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// encoderDocument is what kyaml's encoder writes of doc: the reference
// blockWriter is held to.
func encoderDocument(doc *yaml.Node, wide bool) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the encoder panics: %v", r)
		}
	}()
	style := yaml.CompactSequenceStyle
	if wide {
		style = yaml.WideSequenceStyle
	}
	var b bytes.Buffer
	e := yaml.NewEncoderWithOptions(&b, &yaml.EncoderOptions{SeqIndent: style})
	if err := e.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), e.Close()
}

// encoderEntry is what the encoder writes of n as the one item under a
// key, without the key's line: encodeEntry's old way, and its fallback.
func encoderEntry(n *yaml.Node) ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: "items"},
		{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: []*yaml.Node{n}},
	}}}}
	b, err := encoderDocument(doc, false)
	if err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(b, []byte("items:\n"))
	if !ok {
		return nil, fmt.Errorf("the encoder wrote %q on the key's line", firstLine(b))
	}
	return rest, nil
}

// checkBlockWriter compares blockWriter with the encoder on doc, as a
// document in both sequence styles and as an entry. It returns how many of
// the three blockWriter wrote itself.
func checkBlockWriter(doc *yaml.Node) (written int, err error) {
	for _, wide := range []bool{false, true} {
		w := blockWriter{wide: wide}
		if !w.document(doc) {
			continue
		}
		written++
		want, err := encoderDocument(doc, wide)
		if err != nil {
			return written, fmt.Errorf("blockWriter writes what the encoder refuses (%v):\n%s", err, w.buf)
		}
		if !bytes.Equal(w.buf, want) {
			return written, fmt.Errorf("document (wide %v): blockWriter wrote\n%q\nthe encoder\n%q", wide, w.buf, want)
		}
	}
	root := doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	w := blockWriter{}
	if !w.entry(root) {
		return written, nil
	}
	written++
	want, err := encoderEntry(root)
	if err != nil {
		return written, fmt.Errorf("blockWriter writes what the encoder refuses (%v):\n%s", err, w.buf)
	}
	if !bytes.Equal(w.buf, want) {
		return written, fmt.Errorf("entry: blockWriter wrote\n%q\nthe encoder\n%q", w.buf, want)
	}
	return written, nil
}

// trickyScalars are values at the edges of the emitter's rules: indicators
// first, inside and last, spaces and breaks at the ends, characters only
// double quotes carry, strings that read back as other types, long keys.
var trickyScalars = []string{
	"", "a", "plain words", "key: value", "a:b", "a #b", "a#b", "#a", "- a", "-a", "-", "--", "---", "---a", "...", "? a", "?a", ":a", ": a", "a:",
	",a", "a,b", "[a]", "{a}", "a}", "&a", "*a", "!a", "|a", ">a", "'a", "\"a", "%a", "@a", "`a", "a'b", "a\"b", "a\\b",
	" a", "a ", " ", "  ", "a  b", "\ta", "a\tb", "a\t", "\t",
	"\n", "\n\n", "a\n", "a\nb", "a\nb\n", "a\n\nb", "\na", "a\n\n", " a\nb", "a \nb", "a\n b", "a\r\nb", "a\rb", "a\u0085b", "a\u2028b", "a\u2029b",
	"\x00", "a\x01b", "\x7f", "\x1b[0m", "é", "日本語", "\u00a0", "a\u00a0b", "\ufeff", "a\ufeffb", "\ufeffa", "\U0001F642", "\u0080", "\uFFFE", "\uFFFD",
	"true", "True", "false", "yes", "no", "on", "null", "Null", "~", "0", "1", "-1", "+1", "0x1F", "0o17", "0b1", "1_000", "1.5", ".5", "1e3", ".inf", "-.Inf", ".nan",
	"2001-12-14", "2001-12-14T21:59:43.10-05:00", "<<", "=", "1Gi", "v0.11.0", "vllm/vllm-openai:v0.11.0", "--max-model-len=8192", "{\"a\":1}",
	strings.Repeat("k", maxSimpleKey), strings.Repeat("k", maxSimpleKey+1), strings.Repeat("long value ", 20),
}

// commonScalars are values as objects have them.
var commonScalars = []string{"name", "vllm", "8000", "true", "a b", "--port=8000", "nvidia.com/gpu", "http://x:80/", "", "0.9", "key: value"}

var scalarStyles = []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle, yaml.LiteralStyle, yaml.FoldedStyle, yaml.TaggedStyle, yaml.FlowStyle}

var scalarTags = []string{"", yaml.NodeTagString, yaml.NodeTagInt, yaml.NodeTagBool, yaml.NodeTagNull, yaml.NodeTagFloat, "tag:yaml.org,2002:str", "!!timestamp", "!custom", "!"}

// TestBlockWriterScalars: every tricky value, in every style and tag, as
// a key, as a mapping's value, as a sequence's item and nested, is
// written as the encoder writes it, and most of them by blockWriter.
func TestBlockWriterScalars(t *testing.T) {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v} }
	mapping := func(c ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: c}
	}
	seq := func(c ...*yaml.Node) *yaml.Node {
		return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: c}
	}
	places := map[string]func(s func() *yaml.Node) *yaml.Node{
		"key":   func(s func() *yaml.Node) *yaml.Node { return mapping(s(), str("x"), str("next"), str("y")) },
		"value": func(s func() *yaml.Node) *yaml.Node { return mapping(str("k"), s(), str("next"), str("y")) },
		"nested": func(s func() *yaml.Node) *yaml.Node {
			return mapping(str("a"), mapping(str("b"), mapping(s(), s())), str("next"), str("y"))
		},
		"item": func(s func() *yaml.Node) *yaml.Node {
			return mapping(str("list"), seq(s(), s()), str("next"), str("y"))
		},
		"item's pair": func(s func() *yaml.Node) *yaml.Node {
			return mapping(str("list"), seq(mapping(s(), s(), str("k"), s())), str("next"), str("y"))
		},
		"deep item": func(s func() *yaml.Node) *yaml.Node {
			return mapping(str("list"), seq(seq(s(), seq(s())), mapping(str("k"), seq(s()))))
		},
		"last": func(s func() *yaml.Node) *yaml.Node { return mapping(str("a"), mapping(str("b"), s())) },
	}
	tried, written := 0, 0
	for _, v := range trickyScalars {
		for _, style := range scalarStyles {
			for _, tag := range scalarTags {
				s := func() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Style: style, Tag: tag, Value: v} }
				for place, tree := range places {
					n, err := checkBlockWriter(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{tree(s)}})
					if err != nil {
						t.Fatalf("value %q, style %v, tag %q, %s: %v", v, style, tag, place, err)
					}
					if style != yaml.TaggedStyle && style <= yaml.LiteralStyle && (tag == "" || shortTag(tag) == yaml.NodeTagString) {
						tried, written = tried+3, written+n
					}
				}
			}
		}
	}
	// Tags the encoder writes, and styles beyond the four, are its own.
	t.Logf("of the strings in the four styles, blockWriter wrote %d of %d", written, tried)
	if written < tried*3/4 {
		t.Errorf("blockWriter wrote only %d of %d strings: the comparison covers little", written, tried)
	}
}

// TestBlockWriterRandomTrees: random trees of collections (empty, nested,
// sequences in sequences) and tricky scalars are written as the encoder
// writes them.
func TestBlockWriterRandomTrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	written := 0
	const trees = 3000
	for i := range trees {
		doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{randomMapping(r, 4)}}
		n, err := checkBlockWriter(doc)
		if err != nil {
			t.Fatalf("tree %d: %v", i, err)
		}
		written += n
	}
	t.Logf("blockWriter wrote %d of %d", written, 3*trees)
	if written < trees {
		t.Errorf("blockWriter wrote only %d of %d: the comparison covers little", written, 3*trees)
	}
}

func randomScalar(r *rand.Rand) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: commonScalars[r.IntN(len(commonScalars))]}
	if r.IntN(6) == 0 {
		n.Value = trickyScalars[r.IntN(len(trickyScalars))]
	}
	if r.IntN(4) == 0 {
		n.Value += trickyScalars[r.IntN(len(trickyScalars))]
	}
	if r.IntN(8) == 0 {
		n.Style = scalarStyles[r.IntN(4)]
	}
	if r.IntN(8) == 0 {
		n.Tag = scalarTags[r.IntN(2)]
	}
	if r.IntN(64) == 0 { // mostly one the encoder writes
		n.Tag = scalarTags[r.IntN(len(scalarTags))]
	}
	return n
}

func randomNode(r *rand.Rand, depth int) *yaml.Node {
	if depth == 0 || r.IntN(2) == 0 {
		return randomScalar(r)
	}
	if r.IntN(2) == 0 {
		return randomMapping(r, depth-1)
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
	for range r.IntN(4) {
		n.Content = append(n.Content, randomNode(r, depth-1))
	}
	randomFlow(r, n)
	return n
}

// randomFlow sets flow style on half the empty collections, and on a
// few others, which the encoder writes.
func randomFlow(r *rand.Rand, n *yaml.Node) {
	if len(n.Content) == 0 && r.IntN(2) == 0 || r.IntN(32) == 0 {
		n.Style = yaml.FlowStyle
	}
}

func randomMapping(r *rand.Rand, depth int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for range r.IntN(5) {
		n.Content = append(n.Content, randomScalar(r), randomNode(r, depth))
	}
	randomFlow(r, n)
	return n
}

// blockWriterSeeds are YAML files: the golden cases' inputs and outputs,
// the examples, and the fuzz corpora.
func blockWriterSeeds(tb testing.TB) [][]byte {
	return append(seedFiles(tb), corpusSeeds(tb)...)
}

// checkBlockWriterOn parses in as kio's reader does and compares
// blockWriter with the encoder on each of its documents.
func checkBlockWriterOn(in []byte) (written, documents int, err error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(in), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return 0, 0, nil // what kio cannot read, nothing writes
	}
	for _, n := range nodes {
		w, err := checkBlockWriter(n.Document())
		if err != nil {
			return written, documents, err
		}
		written, documents = written+w, documents+1
	}
	return written, documents, nil
}

// TestBlockWriterWritesTheSeeds: on every seed blockWriter writes what
// the encoder writes, and it writes every object the renderer generated
// in the golden outputs itself, in a stream and in a ResourceList.
func TestBlockWriterWritesTheSeeds(t *testing.T) {
	for i, in := range blockWriterSeeds(t) {
		if _, _, err := checkBlockWriterOn(in); err != nil {
			t.Errorf("seed %d: %v\n%s", i, err, in)
		}
	}
	generated := 0
	for _, in := range seedFiles(t) {
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(in), OmitReaderAnnotations: true}).Read()
		if err != nil {
			continue
		}
		for _, n := range nodes {
			objects := []*yaml.RNode{n}
			if n.GetKind() == "ResourceList" {
				items, err := n.Pipe(yaml.Lookup("items"))
				if err != nil || items == nil {
					continue
				}
				objects, _ = items.Elements()
			}
			for _, o := range objects {
				if o.GetAnnotations()[generatedFrom] == "" || hasComments(o.YNode()) {
					continue
				}
				generated++
				if w := (blockWriter{}); !w.entry(o.YNode()) {
					t.Errorf("blockWriter leaves a generated object to the encoder:\n%s", o.MustString())
				}
			}
		}
	}
	if generated < 100 {
		t.Fatalf("found %d generated objects in the golden outputs", generated)
	}
}

// hasComments: n or a node below it has a comment (an object given as
// input, not rendered).
func hasComments(n *yaml.Node) bool {
	if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return true
	}
	return slices.ContainsFunc(n.Content, hasComments)
}

// generatedFrom is the renderer's annotation on what it generates
// (hub.AnnotationGeneratedFrom, which this package must not import).
const generatedFrom = "render.airunway.ai/generated-from"

// FuzzBlockWriterMatchesEncoder: whatever YAML kio reads, blockWriter
// writes each document as the encoder does, or leaves it to the encoder.
func FuzzBlockWriterMatchesEncoder(f *testing.F) {
	for _, s := range blockWriterSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzcheck.Bounded(t, func() error {
			_, _, err := checkBlockWriterOn(in)
			return err
		})
	})
}

// TestDirectResultNode: a result built straight into nodes is written as
// the one built through JSON and YAML text (the SDK's way), for results
// of tricky text, empty and missing parts, numbers and tags; results it
// cannot build (field values, text that is not UTF-8) go the old way.
func TestDirectResultNode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	text := func() string {
		switch r.IntN(6) {
		case 0:
			return ""
		case 1:
			return "a\xffb"
		}
		return trickyScalars[r.IntN(len(trickyScalars))]
	}
	built := 0
	for i := range 4000 {
		res := &Result{Message: text(), Severity: text()}
		if r.IntN(2) == 0 {
			res.ResourceRef = &ResultRef{APIVersion: text(), Kind: text(), Name: text(), Namespace: text()}
		}
		if r.IntN(2) == 0 {
			res.Field = &ResultField{Path: text()}
			if r.IntN(8) == 0 {
				res.Field.CurrentValue = map[string]any{"a": 1.5}
			}
		}
		if r.IntN(2) == 0 {
			res.File = &ResultFile{Path: text(), Index: []int{0, 1, 12, -3, 1 << 60}[r.IntN(5)]}
		}
		if r.IntN(2) == 0 {
			res.Tags = map[string]string{}
			for range r.IntN(3) {
				res.Tags[text()] = text()
			}
		}
		want, err := roundTripResultNode(res)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		got, ok := directResultNode(res)
		if !ok {
			continue
		}
		built++
		wantYAML, err1 := encoderEntry(want)
		gotYAML, err2 := encodeEntry("results", got)
		if err1 != nil || err2 != nil || !bytes.Equal(gotYAML, wantYAML) {
			t.Fatalf("result %d %+v:\nbuilt\n%s(%v)\nthrough JSON\n%s(%v)", i, res, gotYAML, err2, wantYAML, err1)
		}
	}
	if built < 1000 {
		t.Errorf("built only %d of 4000 results", built)
	}
}

// TestShortcuts: the shortcuts that skip the emitter's analysis and the
// resolver agree with them on the tricky values and on random words.
func TestShortcuts(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	values := slices.Clone(trickyScalars)
	// The words of yaml.v3's resolve map, and their near misses.
	for _, w := range []string{"true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL", "yes", "no", "on", "off", "y", "n", ".inf", "-.Inf", ".nan", "<<"} {
		values = append(values, w, w+"x", w[:len(w)-1], strings.ToLower(w)+" ", "~"+w, strings.ToUpper(w[:1])+strings.ToLower(w[1:]))
	}
	const alphabet = "aZyYnNtTfFoO09._/-~+: #'\"\t\né"
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		values = append(values, b.String())
	}
	words := 0
	for _, v := range values {
		if got, want := resolvedTag(v), (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag(); got != want {
			t.Errorf("resolvedTag(%q) = %s, the resolver says %s", v, got, want)
		}
		if wordLike(v) {
			words++
			if got := analyzeChars(v); got != wordAnalysis {
				t.Errorf("%q is word-like, but analyzeChars gives %+v", v, got)
			}
		}
	}
	if words < 100 {
		t.Errorf("only %d word-like values tried", words)
	}
}
