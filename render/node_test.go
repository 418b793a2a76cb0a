package render

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestObjectNode(t *testing.T) {
	n, err := objectNode(map[string]any{
		"z": "last", "a": "true", "port": "8000", "n": 8000.0, "f": 0.5, "b": false,
		"list": []any{"x", 1.0}, "empty": map[string]any{}, "nil": nil,
	})
	require.NoError(t, err)
	out, err := yaml.NewRNode(n).String()
	require.NoError(t, err)
	require.Equal(t, `a: "true"
b: false
empty: {}
f: 0.5
list:
- x
- 1
n: 8000
nil: null
port: "8000"
z: last
`, out)
	_, err = objectNode(map[string]any{"bad": struct{}{}})
	require.ErrorContains(t, err, "bad: cannot emit")
}
