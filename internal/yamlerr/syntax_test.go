package yamlerr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSyntaxLine: a parse error tied to its text names the line where the
// mistake is, and for a line indented as no open block, says so; the
// parser itself names the start of the block it was in, counted from 0.
func TestSyntaxLine(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		before     int
		parser     string // the parser's own message
		want       string
	}{{
		name: "a key indented less than its mapping's (the issue's indent.yaml)",
		text: `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: m
  namespace: inference
spec:
  model:
    id: Qwen/Qwen2.5-0.5B-Instruct
 resources:
    gpu:
      count: 1
`,
		parser: "line 8: did not find expected key",
		want:   "line 9: `resources:` is indented 1 space, but the keys of `spec` are indented 2 and the top-level keys 0; line it up with the block it belongs to",
	}, {
		name: "a ModelDeployment's `resources:` on line 7, which the parser puts on line 4",
		text: `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: m, namespace: inference}
spec:
  model:
      id: Qwen/Qwen2.5-0.5B-Instruct
    resources:
      gpu: {count: 1}
`,
		parser: "line 4: did not find expected key",
		want:   "line 7: `resources:` is indented 4 spaces, but the keys of `spec.model` are indented 6 and the keys of `spec` 2; line it up with the block it belongs to",
	}, {
		name: "a capability file's key on line 7, which the parser puts on line 4",
		text: `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: c}
spec:
  providers:
      - name: vllm
    nodePools:
    - name: l4
`,
		parser: "line 4: did not find expected key",
		want:   "line 7: `nodePools:` is indented 4 spaces, but the entries of `spec.providers` are indented 6 and the keys of `spec` 2; line it up with the block it belongs to",
	}, {
		name:   "lines before the document count",
		text:   "spec:\n  a: 1\n b: 2\n",
		before: 20,
		parser: "line 2: did not find expected key",
		want:   "line 23: `b:` is indented 1 space, but the keys of `spec` are indented 2 and the top-level keys 0; line it up with the block it belongs to",
	}, {
		name:   "a list entry indented between two blocks",
		text:   "spec:\n  env:\n  - name: A\n    value: x\n   - name: B\n",
		parser: "line 1: did not find expected key",
		want:   "line 5: `- name:` is indented 3 spaces, but the keys of `spec.env[0]` are indented 4 and the entries of `spec.env` 2; line it up with the block it belongs to",
	}, {
		name:   "a key deeper than its mapping's",
		text:   "spec:\n  env:\n  - name: A\n     value: x\n",
		parser: "line 4: mapping values are not allowed in this context",
		want:   "line 4: `value:` is indented 5 spaces, but the keys of `spec.env[0]` are indented 4; line it up with the block it belongs to",
	}, {
		name:   "a list entry among keys",
		text:   "a:\n  b: 1\n  - c\n",
		parser: "line 1: did not find expected key",
		want:   "line 3: \"- c\" is a list entry among the keys of `a` (both indented 2); a list must be the value of a key",
	}, {
		name:   "a key among list entries",
		text:   "a:\n  - b\n  c: 1\n",
		parser: "line 1: did not find expected '-' indicator",
		want:   "line 3: `c:` is not a list entry, but is indented as the entries of `a` (2); start an entry with `- `, or indent it to belong to an entry",
	}, {
		name:   "a line of a block text indented less than the text",
		text:   "a:\n  b: |\n    text\n   more\n  c: 1\n",
		parser: "line 1: did not find expected key",
		want:   "line 4: \"more\" is indented 3 spaces, but the lines of the text of `a.b` are indented 4 and the keys of `a` 2; line it up with the block it belongs to",
	}, {
		name:   "well indented: the parser's problem, on its line",
		text:   "spec:\n  gpu:\n    count: 1: 2\n",
		parser: "line 3: mapping values are not allowed in this context",
		want:   "line 3: mapping values are not allowed in this context",
	}, {
		name:   "a value's first line may be indented as deep as it likes",
		text:   "spec:\n  gpu:\n        count: 1: 2\n",
		parser: "line 3: mapping values are not allowed in this context",
		want:   "line 3: mapping values are not allowed in this context",
	}, {
		name:   "a tab",
		text:   "spec:\n  x: 1\n\tb: 2\n",
		parser: "line 2: found a tab character that violates indentation",
		want:   "line 3: found a tab character that violates indentation",
	}, {
		name:   "an unclosed quote: where it opens, as the parser says",
		text:   "a: 1\nb: \"x\n  y\nc: 1\n d: 2\n",
		parser: "line 2: found unexpected end of stream",
		want:   "line 2: found unexpected end of stream",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseDocument(tc.text)
			require.Error(t, err)
			require.Equal(t, "yaml: "+tc.parser, err.Error(), "the parser's message")
			require.Equal(t, tc.want, Describe(InText(err, tc.text, tc.before)))
			require.Equal(t, "MalformedYAMLError: yaml: "+tc.parser, InText(fmt.Errorf("MalformedYAMLError: %w", err), tc.text, tc.before).Error(), "the error's own text stays")
		})
	}
}

// TestSyntaxLineKeepsTheParsers: the parser's line stands (moved by the
// lines before) where the text does not fail the same way on its own, or
// is too large to parse again.
func TestSyntaxLineKeepsTheParsers(t *testing.T) {
	err := errors.New("yaml: line 3: did not find expected key")
	require.Equal(t, "line 13: did not find expected key", Describe(InText(err, "a: 1\n", 10)), "the text parses")
	big := "a:\n  b: 1\n c: 2\n" + strings.Repeat("#\n", relocateLimit)
	_, err = parseDocument(big)
	require.Equal(t, "line 12: did not find expected key", Describe(InText(err, big, 10)), "too large to parse again")
	require.Equal(t, "line 2: did not find expected key", Describe(errors.New("yaml: line 2: did not find expected key")), "no text")

	small := "a:\n  b: 1\n c: 2\n"
	_, err = parseDocument(small)
	spent := relocated.Swap(relocateBudget - 10)
	defer relocated.Store(spent)
	require.Equal(t, "line 12: did not find expected key", Describe(InText(err, small, 10)), "past the process's budget")
	relocated.Store(spent)
	require.Equal(t, "line 13: `c:` is indented 1 space, but the keys of `a` are indented 2 and the top-level keys 0; line it up with the block it belongs to", Describe(InText(err, small, 10)), "within it")
	require.NoError(t, InText(nil, "", 0))
	depth := errors.New("yaml: line 3: exceeded max depth of 10000")
	require.Equal(t, "line 8: nests more than 10000 levels deep; YAML input must nest at most 10000 levels", Describe(InText(depth, "", 5)), "other messages' lines move too")
}

// FuzzSyntaxLine: for any text that does not parse, Describe names a
// line of the text, and does not fail.
func FuzzSyntaxLine(f *testing.F) {
	for _, s := range []string{"a:\n  b: 1\n c: 2\n", "a:\n  - b\n  c: 1\n", "a: |\n  x\n y\n", "a: {b: [\n", "a:\r  b: 1\r c\u2028", "\t- a"} {
		f.Add(s)
	}
	lineOf := regexp.MustCompile(`^line (\d+): `)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<12 {
			return
		}
		_, err := parseDocument(text)
		if err == nil {
			return
		}
		msg := Describe(InText(err, text, 0))
		if m := lineOf.FindStringSubmatch(msg); m != nil {
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > CountLines([]byte(text))+1 {
				t.Fatalf("line %d of a text of %d lines: %s\n%q", n, CountLines([]byte(text))+1, msg, text)
			}
		}
	})
}
