package yamlerr

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
)

const linesDoc = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: c
  annotations:
    render.airunway.ai/engine: vllm
spec:
  providers:
  - name: kuberay
    version: "1.4.2"
  - name: vllm
  nodePools:
  - name: l4
    gpu:
      perNode: "x"
    zones: [[a, b], [c,
      d]]
  tuned: &t {a: 1}
  again: *t
`

func TestFieldLine(t *testing.T) {
	n, err := yaml.Parse(linesDoc)
	require.NoError(t, err)
	for _, tc := range []struct {
		field string
		line  int
	}{
		{"", 1},
		{"kind", 2},
		{"metadata.name", 4},
		{"metadata.annotations.render.airunway.ai/engine", 6}, // a key with dots
		{"spec.providers[0].version", 10},
		{"spec.providers[1]", 11},
		{"spec.providers[vllm].name", 11}, // an element by name
		{"spec.nodePools[0].gpu.perNode", 15},
		{"spec.nodePools[l4].gpu", 14},
		{"spec.nodePools[0].zones[1][1]", 17},
		{"spec.again.a", 18}, // through an alias, to where the value is written
		// not there: the deepest part that is
		{"spec.providers[1].version", 11},
		{"spec.providers[7].name", 8},
		{"spec.nodePools[0].gpu.memoryMiB", 14},
		{"spec.engine.image", 7},
		{"status", 1},
		{"spec.providers[", 8},
	} {
		require.Equal(t, tc.line, FieldLine(n.YNode(), tc.field), tc.field)
	}
	require.Equal(t, 0, FieldLine(nil, "spec"))
	require.Equal(t, 0, FieldLine(&yaml.Node{Kind: yaml.MappingNode}, "spec"), "a node built in code has no line")
}

func TestShiftLines(t *testing.T) {
	n, err := yaml.Parse(linesDoc)
	require.NoError(t, err)
	ShiftLines(n.YNode(), 20)
	require.Equal(t, 35, FieldLine(n.YNode(), "spec.nodePools[0].gpu.perNode"))
	added := &yaml.Node{Kind: yaml.ScalarNode, Value: "x"}
	ShiftLines(added, 3)
	require.Equal(t, 0, added.Line, "a node without a line keeps none")
}

func TestCountLines(t *testing.T) {
	for in, want := range map[string]int{
		"":                      0,
		"a":                     0,
		"a\n":                   1,
		"a\r\nb\r\n":            2,
		"a\rb\n\n":              3,
		"a\u0085b\u2028c\u2029": 3,
	} {
		require.Equal(t, want, CountLines([]byte(in)), "%q", in)
	}
}

func TestAddLines(t *testing.T) {
	l := diag.List{
		{Severity: diag.Error, Field: "spec.nodePools[0].gpu.perNode", Message: "must be an integer"},
		{Severity: diag.Error, Field: "spec.providers[0].version", Line: 99, Message: "a line already known stays"},
		{Severity: diag.Error, Message: "no field, no line"},
	}
	l = AddLinesIn(l, []byte(linesDoc))
	require.Equal(t, []int{15, 99, 0}, []int{l[0].Line, l[1].Line, l[2].Line})

	bad := diag.List{{Severity: diag.Error, Field: "spec"}}
	require.Equal(t, 0, AddLinesIn(bad, []byte("a: [\n"))[0].Line, "text that does not parse gives no line")
}
