package manifest

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestObjectJSONReportsDuplicateKeys: a key set twice is an error at its
// field path (yamlerr.DuplicateKeys), where kyaml would keep the last.
func TestObjectJSONReportsDuplicateKeys(t *testing.T) {
	n, err := yaml.Parse("a: 1\nb:\n  list:\n  - {x: 1, x: 2}\n  c: &c {y: 1, y: 2}\n  d: *c\na: 3\n")
	require.NoError(t, err)
	js, l := ObjectJSON(n)
	require.Nil(t, js)
	require.Len(t, l, 3)
	require.Equal(t, "b.list[0].x", l[0].Field)
	require.Equal(t, "is set twice at line 4; a key must appear only once in a mapping", l[0].Message)
}

// TestAppendJSONString holds appendJSONString to encoding/json over
// strings of the bytes it treats apart: quotes, backslashes, control
// characters, HTML's, U+2028 and U+2029, and invalid UTF-8.
func TestAppendJSONString(t *testing.T) {
	pieces := []string{"a", "Z", " ", "\"", "\\", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "<", ">", "&",
		"é", "\u2028", "\u2029", "\u2027", "\ufffd", "\xff", "\xe2\x80", "\xc3", "😀", "/", "'"}
	r := rand.New(rand.NewPCG(1, 2))
	values := slices.Clone(pieces)
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		values = append(values, b.String())
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, v)), "%q", v)
	}
}

// TestNodeJSONWritesWhatTheDecoderGives: the JSON nodeJSON writes from the
// tree is that of decoding it into maps and marshalling them, for the
// scalars it writes itself and those it hands to the decoder.
func TestNodeJSONWritesWhatTheDecoderGives(t *testing.T) {
	for _, doc := range []string{
		"a: 1\nb: x\n",
		"z: [1, -2, 0x1F, 0o17, 1_000, 1e3, .5, -0.0, 12345678901234567890]\ny: {t: true, f: False, n: null, e: ~, s: '1', q: \"<&>\"}\n",
		"when: 2001-12-14\nat: 2001-12-14t21:59:43.10-05:00\nempty: \nlist: []\nmap: {}\n",
		"anchored: &a {k: v}\nother: !!str 12\nbig: 1e400\nkey with spaces: \"\\u2028\\t\"\n",
		"b: 2\na: 1\nc: {z: 1, \"y\": 2, x: [a, {w: 3}]}\n",
	} {
		n, err := yaml.Parse(doc)
		require.NoError(t, err)
		m := map[string]any{}
		require.NoError(t, n.YNode().Decode(&m))
		want, err := json.Marshal(m)
		require.NoError(t, err)
		got, err := nodeJSON(n)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got))
		require.Equal(t, string(want), string(got))
	}
}
