package budget

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func parse(t testing.TB, s string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.NewDecoder(strings.NewReader(s)).Decode(&doc))
	return &doc
}

// TestReadAll: one run reads MaxBytes in all, across readers; the byte
// past it is an error, and ReadAll never reads more than that byte from
// an endless reader.
func TestReadAll(t *testing.T) {
	b := New()
	data, err := b.ReadAll(io.LimitReader(zeros{}, MaxBytes-10))
	require.NoError(t, err)
	require.Len(t, data, MaxBytes-10)
	data, err = b.ReadAll(io.LimitReader(zeros{}, 10))
	require.NoError(t, err, "exactly the limit")
	require.Len(t, data, 10)
	_, err = b.ReadAll(strings.NewReader("x"))
	require.EqualError(t, err, "brings the input past 64 MiB; one run must read at most 64 MiB (render fewer paths per run, or split the package)")
	require.True(t, IsExceeded(err))

	_, err = New().ReadAll(zeros{})
	require.True(t, IsExceeded(err), "an endless reader is cut at the limit")
}

// TestReadAllSizesItsBuffer: a file is read into one buffer of its size,
// not grown (and copied) as it is read.
func TestReadAllSizesItsBuffer(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f.yaml")
	require.NoError(t, os.WriteFile(name, bytes.Repeat([]byte("a: 1\n"), 2<<20), 0o644))
	allocs := testing.AllocsPerRun(3, func() {
		f, err := os.Open(name)
		require.NoError(t, err)
		defer f.Close()
		data, err := New().ReadAll(f)
		require.NoError(t, err)
		require.Len(t, data, 10<<20)
	})
	require.LessOrEqual(t, allocs, 8.0, "10 MiB read with %v allocations", allocs)
}

// TestExpect: documents announced ahead are refused past what is left, and
// charge nothing.
func TestExpect(t *testing.T) {
	b := New()
	require.NoError(t, b.Expect(MaxDocuments))
	require.NoError(t, b.Expect(MaxDocuments), "Expect charges nothing")
	require.NoError(t, b.Document(parse(t, "{}")))
	err := b.Expect(MaxDocuments)
	require.EqualError(t, err, fmt.Sprintf("brings the input past %d YAML documents; one run must read at most %d (render fewer paths per run, or split the package)", MaxDocuments, MaxDocuments))
	require.True(t, IsExceeded(err))
}

// TestDocumentChargesDocuments: MaxDocuments documents fit, one more does
// not, however small.
func TestDocumentChargesDocuments(t *testing.T) {
	b := New()
	doc := parse(t, "{}")
	for range MaxDocuments {
		require.NoError(t, b.Document(doc))
	}
	err := b.Document(doc)
	var e *Exceeded
	require.ErrorAs(t, err, &e)
	require.Equal(t, LimitDocuments, e.Limit)
}

// aliased is a document of about 1.2·10^(levels+1) nodes once its
// aliases are expanded: levels of ten aliases of the level below, written
// in a few hundred bytes.
func aliased(levels int) string {
	s := "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i <= levels; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		s += fmt.Sprintf("a%d: &a%d [%s]\n", i, i, strings.Repeat(p+", ", 9)+p)
	}
	return s
}

// TestDocumentChargesExpandedNodes: nodes are counted with aliases
// expanded, so a few hundred bytes that stand for most of an object's
// alias limit use up the run's nodes in a few documents; each of them is
// no alias bomb, and the document that crosses the limit is refused.
func TestDocumentChargesExpandedNodes(t *testing.T) {
	doc := parse(t, aliased(4))
	size := yamlerr.ExpandedNodes(doc)
	require.Greater(t, size, 100_000)
	require.LessOrEqual(t, size, yamlerr.MaxExpandedNodes)
	b := New()
	for range MaxNodes / size {
		require.NoError(t, b.Document(doc))
	}
	err := b.Document(doc)
	require.EqualError(t, err, fmt.Sprintf("brings the input past %d YAML nodes, counted with aliases expanded; one run must read at most %d (render fewer paths per run, split the package, or write out values that YAML aliases repeat)", MaxNodes, MaxNodes))
	require.True(t, IsExceeded(err))
	require.True(t, IsExceeded(b.Document(parse(t, "{}"))), "nothing is left")
}

// TestDocumentAliasBomb: a document whose aliases expand past an object's
// limit is an alias bomb, refused whatever is left; its nodes are not
// charged.
func TestDocumentAliasBomb(t *testing.T) {
	b := New()
	err := b.Document(parse(t, aliased(9)))
	require.ErrorContains(t, err, "an alias bomb")
	require.False(t, IsExceeded(err))
	require.NoError(t, b.Document(parse(t, aliased(4))), "the bomb's nodes were not charged")
}

// TestDocumentCountsWithoutAliases: a document without aliases is charged
// every node it has.
func TestDocumentCountsWithoutAliases(t *testing.T) {
	doc := parse(t, "["+strings.Repeat("1,", 199_999)+"1]")
	require.Equal(t, 200_002, yamlerr.ExpandedNodes(doc), "the document, the list, its items")
	b := New()
	for range MaxNodes / 200_001 {
		require.NoError(t, b.Document(doc))
	}
	var e *Exceeded
	require.ErrorAs(t, b.Document(doc), &e, "the list and its items, once more")
	require.Equal(t, LimitNodes, e.Limit)
}

// TestDocumentPastTheObjectLimit: an object of more nodes than any real
// one is refused on its own, whatever is left; the nodes it has are
// charged all the same, since a reader keeps it until it is reported.
func TestDocumentPastTheObjectLimit(t *testing.T) {
	doc := parse(t, "["+strings.Repeat("1,", yamlerr.MaxExpandedNodes)+"1]")
	b := New()
	for range MaxNodes / (yamlerr.MaxExpandedNodes + 2) {
		err := b.Document(doc)
		require.EqualError(t, err, "has more than 262144 YAML nodes, the most an object may have; the largest real objects, CRDs of more than 1 MB, have about 36000: move data out of it, or split it")
		require.False(t, IsExceeded(err))
	}
	require.True(t, IsExceeded(b.Document(doc)), "the refused objects' nodes were charged")
}

// TestLargestDocument: documents are cut at document start markers only.
func TestLargestDocument(t *testing.T) {
	for in, want := range map[string]int{
		"":                       0,
		"a: 1\n":                 5,
		"---\na: 1\n":            9,
		"a\n---\nbbbb\n":         9, // the second document, marker included
		"a\n--- bb\n":            7,
		"aaaa\n---\r\nb\n":       7,
		"a\n---x\nbbbb\n":        12, // not a marker
		"a\n ---\nbbbb\n":        12, // not at the start of a line
		"aaaaaa\n---\n---\n":     7,
		"a\n---":                 3, // the first document is "a\n"
		"a: |\n  x\n---\nb: 1\n": 9,
	} {
		require.Equal(t, want, LargestDocument([]byte(in)), "%q", in)
	}
}

// TestStream: a stream is charged document by document; what is not YAML
// costs nothing; a document past MaxDocumentBytes is refused before it is
// parsed.
func TestStream(t *testing.T) {
	b := New()
	require.NoError(t, b.Stream([]byte("a: 1\n---\nb: 2\n")))
	require.NoError(t, b.Stream([]byte("key: [unclosed\n")), "not YAML: its reader refuses it")
	require.NoError(t, b.Expect(MaxDocuments-2))
	require.Error(t, b.Expect(MaxDocuments-1), "two documents were charged")

	err := b.Stream(bytes.Repeat([]byte("#"), MaxDocumentBytes+1))
	require.EqualError(t, err, "holds a YAML document of more than 4 MiB; a document must be at most 4 MiB (the API server stores at most 1.5 MiB per object, so no Kubernetes object comes near it)")
	require.True(t, IsExceeded(err))

	err = New().Stream([]byte(strings.Repeat("{}\n---\n", MaxDocuments+1)))
	var e *Exceeded
	require.ErrorAs(t, err, &e)
	require.Equal(t, LimitDocuments, e.Limit)

	require.ErrorContains(t, New().Stream([]byte(aliased(9))), "an alias bomb")
}

// FuzzLargestDocument holds the bound that makes MaxDocumentBytes a bound
// on memory: no document the parser reads from a stream has more nodes
// than LargestDocument's bytes, give or take a few (the document node, an
// empty scalar at the end).
func FuzzLargestDocument(f *testing.F) {
	for _, s := range []string{"a: 1\n---\nb: [1, 2, 3]\n", "{a,b,c}", "? ? ? ? ?", "[?,?,?]", "- - - - -", "a\n---\n{a, b, c, d, e, f}\n", "'a\n---\nb'", "[a,\n---\nb]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bounded(t, func() error {
			largest := LargestDocument(data)
			dec := yaml.NewDecoder(bytes.NewReader(data))
			for {
				var doc yaml.Node
				err := dec.Decode(&doc)
				if errors.Is(err, io.EOF) || err != nil {
					return nil
				}
				if n := yamlerr.ExpandedNodes(&doc); !hasAlias(&doc) && n > largest+4 {
					return fmt.Errorf("a document of %d nodes in a stream whose largest document is %d bytes: %q", n, largest, data)
				}
			}
		})
	})
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// TestNodesAtMost: the count ahead is never below the nodes the parser
// makes, whatever the shape; and for real objects it is a few times them.
func TestNodesAtMost(t *testing.T) {
	for _, doc := range []string{
		"a", "{}", "[]", "{a}", "{a, b, c}", "[a, b, [c, {d}]]", "- a\n- b\n- - c\n", "a: b\nc:\n  d: e\n",
		"? a\n: b\n", "a: &x [1, 2]\nb: *x\n", "a\n...\nb\n...\nc\n", "--- a\n--- b\n", "a: |\n  text\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n",
	} {
		dec := yaml.NewDecoder(strings.NewReader(doc))
		nodes := 0
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				break
			}
			raw, _ := yamlerr.CountNodes(&n)
			nodes += raw - 1 // the parser's document node is no node of the text
		}
		require.GreaterOrEqual(t, NodesAtMost([]byte(doc)), nodes, "%q", doc)
	}
}

// FuzzNodesAtMost: whatever the bytes, the parser never makes more nodes
// than NodesAtMost counts ahead (which is what lets the function bound its
// parse before it parses).
func FuzzNodesAtMost(f *testing.F) {
	for _, seed := range []string{"a", "{a, b}", "- [a, {b: c}]\n", "a: &x [1]\nb: *x\n", "a\n...\nb\n", "? a\n: b\n", "{a: b, c}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		nodes := 0
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				break
			}
			raw, _ := yamlerr.CountNodes(&n)
			nodes += raw - 1
		}
		if at := NodesAtMost(data); nodes > at {
			t.Fatalf("%q parses to %d nodes, more than the %d counted ahead", data, nodes, at)
		}
	})
}
