package manifest

import (
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
