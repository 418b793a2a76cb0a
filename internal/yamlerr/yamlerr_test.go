package yamlerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestDescribe feeds the parser's real errors, produced from real input,
// through Describe.
func TestDescribe(t *testing.T) {
	parseErr := func(doc string) error {
		_, err := yaml.Parse(doc)
		require.Error(t, err, doc)
		return err
	}
	convertErr := func(doc string) error {
		n, err := yaml.Parse(doc)
		require.NoError(t, err)
		_, err = n.MarshalJSON()
		require.Error(t, err, doc)
		return err
	}
	readErr := func(doc string) error {
		_, err := (&kio.ByteReader{Reader: strings.NewReader(doc), SetAnnotations: map[string]string{"config.kubernetes.io/path": "x.yaml"}}).Read()
		require.Error(t, err, doc)
		return err
	}
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\n"
	for i, prev := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n"
	}
	deep := ""
	for range 10001 {
		deep += "["
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"alias bomb", convertErr(bomb), "its YAML aliases expand to far more data than the document holds (an alias bomb); YAML anchors and aliases must not multiply the document, so write the values out"},
		{"nesting", parseErr("a: " + deep), "nests more than 10000 levels deep; YAML input must nest at most 10000 levels"},
		{"key twice", convertErr("a: 1\nb: 2\na: 3\n"), `line 3: key "a" is already defined at line 1; a key must appear only once in a mapping`},
		{"not UTF-8", parseErr("a: \xff\n"), "is not valid UTF-8; YAML input must be UTF-8 text"},
		{"metadata not a mapping", readErr("metadata: {annotations: [x]}\n"), "an object's `metadata` and `metadata.annotations` must be mappings, got a sequence"},
		{"anything else loses the prefixes", errors.New("MalformedYAMLError: yaml: line 2: did not find expected key"), "line 2: did not find expected key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Describe(tc.err))
		})
	}
}

func TestDuplicateKeys(t *testing.T) {
	n, err := yaml.Parse("a: 1\nb:\n  list:\n  - {x: 1, x: 2}\n  c: &c {y: 1, y: 2}\n  d: *c\na: 3\n")
	require.NoError(t, err)
	require.Equal(t, []Duplicate{
		{Field: "b.list[0].x", FirstLine: 4, Line: 4},
		{Field: "b.c.y", FirstLine: 5, Line: 5},
		{Field: "a", FirstLine: 1, Line: 7},
	}, DuplicateKeys(n.YNode()), "aliases are not followed, so d is not reported again")
}

func TestOutsideAlias(t *testing.T) {
	list, err := yaml.Parse("items:\n- {a: &x 1, b: *x}\n- {c: *x}\n")
	require.NoError(t, err)
	items := list.YNode().Content[1].Content
	require.Nil(t, OutsideAlias(items[0]), "an alias to an anchor in the same item")
	a := OutsideAlias(items[1])
	require.NotNil(t, a)
	require.Equal(t, "x", a.Value)
}

// TestAliasBombs: ten levels of ten aliases each stand for 10^10 nodes,
// written in a few hundred bytes; four levels, and a plain big list, are
// fine.
func TestAliasBombs(t *testing.T) {
	bomb := func(levels int) string {
		s := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
		for i := 1; i <= levels; i++ {
			p := fmt.Sprintf("*a%d", i-1)
			s += fmt.Sprintf("a%d: &a%d [%s, %s, %s, %s, %s, %s, %s, %s, %s, %s]\n", i, i, p, p, p, p, p, p, p, p, p, p)
		}
		return s
	}
	for levels, bad := range map[int]bool{1: false, 4: false, 6: true, 9: true} {
		n, err := yaml.Parse(bomb(levels))
		require.NoError(t, err)
		err = CheckNodes(n.YNode())
		if bad {
			require.ErrorContains(t, err, "an alias bomb", "levels=%d", levels)
		} else {
			require.NoError(t, err, "levels=%d", levels)
		}
	}
	big := "items:\n" + strings.Repeat("- x\n", 200000)
	n, err := yaml.Parse(big)
	require.NoError(t, err)
	require.NoError(t, CheckNodes(n.YNode()), "200,000 nodes without aliases are fine")
}

// TestCheckNodes: an object may have MaxExpandedNodes nodes, counted with
// aliases expanded, and not one more, aliases or not; CountNodes counts a
// tree as it is and as it stands for.
func TestCheckNodes(t *testing.T) {
	list := func(items int) *yaml.Node {
		n, err := yaml.Parse("[" + strings.Repeat("1,", items-1) + "1]")
		require.NoError(t, err)
		return n.YNode()
	}
	require.NoError(t, CheckNodes(list(MaxExpandedNodes-1)), "the list and its items: the limit")
	require.EqualError(t, CheckNodes(list(MaxExpandedNodes)), "has more than 262144 YAML nodes, the most an object may have; the largest real objects, CRDs of more than 1 MB, have about 36000: move data out of it, or split it")

	n, err := yaml.Parse("a: &a [1, 2, 3]\nb: [*a, *a]\n")
	require.NoError(t, err)
	raw, expanded := CountNodes(n.YNode())
	require.Equal(t, 1+2+4+3, raw, "the mapping, its keys, the list of three, the list of two aliases")
	require.Equal(t, raw+2*4, expanded, "each alias stands for the list it names")
	require.Equal(t, expanded, ExpandedNodes(n.YNode()))
}
