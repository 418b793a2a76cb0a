package render

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
)

const linesModel = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: m
  namespace: inference
spec:
  model:
    id: Qwen/Qwen2.5-0.5B-Instruct
  provider:
    name: vllm
  env:
  - name: A
    value: "x"
  - name: B
    value: 3
  resources:
    gpu:
      count: 1
`

// linesItem parses doc as the CLI reads a file: its nodes count the
// file's lines, and its path annotation names file.
func linesItem(t *testing.T, doc, file string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(doc)
	require.NoError(t, err)
	require.NoError(t, n.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, file)))
	return n
}

// TestProblemLines: a problem in a field of an input item gets the
// field's line, or its deepest parent's, when the item's nodes count the
// lines of its file; never otherwise.
func TestProblemLines(t *testing.T) {
	parsedFrom := func(n *yaml.RNode) string { return fileOf(n) }
	for _, tc := range []struct {
		name   string
		doc    string
		source func(*yaml.RNode) string
		want   []string // field and line of each error
	}{
		{"a type error in a list element", linesModel, parsedFrom, []string{"spec.env[1].value:15"}},
		{"a ResourceList's item has no line", linesModel, nil, []string{"spec.env[1].value:0"}},
		{"an item of a List naming another file has none", linesModel, func(*yaml.RNode) string { return "list.yaml" }, []string{"spec.env[1].value:0"}},
		{"a missing field: its parent's line", strings.Replace(strings.Replace(linesModel, "    id: Qwen/Qwen2.5-0.5B-Instruct\n", "", 1), "    value: 3\n", "    value: \"3\"\n", 1), parsedFrom, nil},
		{"a value a validation refuses", strings.Replace(strings.Replace(linesModel, "    value: 3\n", "    value: \"3\"\n", 1), "      count: 1", "      count: -1", 1), parsedFrom, []string{"spec.resources.gpu.count:18"}},
		{"an unknown kind of the API", strings.Replace(linesModel, "kind: ModelDeployment", "kind: ModelDeploymnt", 1), parsedFrom, []string{"kind:2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Render([]*yaml.RNode{linesItem(t, tc.doc, "models/m.yaml")}, Options{SourceFile: tc.source})
			var got []string
			for _, p := range res.Problems.Errors() {
				got = append(got, p.Field+":"+strconv.Itoa(p.Line))
			}
			if tc.want == nil {
				require.NotEmpty(t, got)
				for _, p := range res.Problems.Errors() {
					require.Equal(t, "spec.model.id", p.Field)
					require.Equal(t, 7, p.Line, "%s: the line of `model:`", p)
				}
				return
			}
			require.Equal(t, tc.want, got, "%v", res.Problems)
		})
	}
}

// TestProblemLinesOfCapabilities: a capability file among the inputs gets
// its lines too.
func TestProblemLinesOfCapabilities(t *testing.T) {
	caps := `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: c
  annotations: {config.kubernetes.io/local-config: "true"}
spec:
  providers:
  - name: kuberay
    version: 1.4
`
	items := []*yaml.RNode{linesItem(t, caps, "caps.yaml"), linesItem(t, linesModel, "m.yaml")}
	res := Render(items, Options{SourceFile: fileOf})
	errs := res.Problems.Errors()
	require.Len(t, errs, 2, "%v", res.Problems)
	require.Equal(t, diag.Problem{Severity: diag.Error, Resource: identity(items[0]), File: "caps.yaml", Line: 9, Field: "spec.providers[0].version", Message: "must be a string, got number"}, errs[0])
	require.Equal(t, "[error] airunway.ai/v1alpha1/ClusterCapabilities/c spec.providers[0].version: must be a string, got number (file caps.yaml, line 9)", errs[0].String())
	require.Equal(t, "[error] airunway.ai/v1alpha1/ModelDeployment/inference/m spec.env[1].value: must be a string, got number (file m.yaml, line 15)", errs[1].String())
}

// TestProblemLinesAmbiguous: two objects of one file that a problem
// cannot tell apart (the same identity, or none) give it no line.
func TestProblemLinesAmbiguous(t *testing.T) {
	nameless := "models:\n- qwen\n"
	items := []*yaml.RNode{linesItem(t, nameless, "a.yaml"), linesItem(t, "\n\n"+nameless, "a.yaml"), linesItem(t, nameless, "b.yaml")}
	res := Render(items, Options{SourceFile: fileOf})
	lines := map[string][]int{}
	for _, p := range res.Problems.Errors() {
		lines[p.File] = append(lines[p.File], p.Line)
	}
	require.Equal(t, map[string][]int{"a.yaml": {0, 0, 0, 0}, "b.yaml": {1, 1}}, lines, "%v", res.Problems)
}
