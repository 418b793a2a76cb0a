package hub

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Types of TestTypeErrorPaths, named as the decoder's messages need.
type (
	testObject struct {
		Spec testSpec `json:"spec"`
	}
	testSpec struct {
		Pools  []testPool          `json:"pools,omitempty"`
		ByName map[string]testPool `json:"byName,omitempty"`
		Labels map[string]string   `json:"labels,omitempty"`
		Count  int32               `json:"count,omitempty"`
	}
	testPool struct {
		Name     string            `json:"name"`
		Selector map[string]string `json:"selector,omitempty"`
		GPU      *testGPU          `json:"gpu,omitempty"`
		Zones    [][]string        `json:"zones,omitempty"`
	}
	testGPU struct {
		PerNode int32 `json:"perNode"`
	}
)

// TestTypeErrorPaths: a JSON type error names the list elements and map
// keys on its way, which encoding/json's own path leaves out.
func TestTypeErrorPaths(t *testing.T) {
	for _, tc := range []struct {
		name, json, field, msg string
	}{
		{"not in a list", `{"spec":{"count":"x"}}`, "spec.count", "must be an integer, got string"},
		{"the first element", `{"spec":{"pools":[{"name":"a","gpu":{"perNode":"x"}}]}}`, "spec.pools[0].gpu.perNode", "must be an integer, got string"},
		{"a later element", `{"spec":{"pools":[{"name":"a","gpu":{"perNode":1}},{"name":"b"},{"name":"c","gpu":{"perNode":true}}]}}`, "spec.pools[2].gpu.perNode", "must be an integer, got bool"},
		{"the first of two wrong", `{"spec":{"pools":[{"name":"a"},{"name":1},{"name":2}]}}`, "spec.pools[1].name", "must be a string, got number"},
		{"a list in a list", `{"spec":{"pools":[{"name":"a","zones":[["z1"],["z2",3]]}]}}`, "spec.pools[0].zones[1][1]", "must be a string, got number"},
		{"a map's value", `{"spec":{"labels":{"a":"b","c":true}}}`, "spec.labels.c", "must be a string, got bool"},
		{"a key with dots", `{"spec":{"pools":[{"name":"a","selector":{"nvidia.com/gpu.product":1}}]}}`, "spec.pools[0].selector.nvidia.com/gpu.product", "must be a string, got number"},
		{"a struct in a map", `{"spec":{"byName":{"x":{"name":"x"},"y":{"name":"y","gpu":{"perNode":1.5}}}}}`, "spec.byName.y.gpu.perNode", "must be an integer, got number 1.5"},
		{"a list where an object goes", `{"spec":{"pools":[{"name":"a","gpu":[]}]}}`, "spec.pools[0].gpu", "must be an object, got array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := DecodeStrict([]byte(tc.json), &testObject{}, "Test")
			require.Len(t, l, 1, "%v", l)
			require.Equal(t, tc.field, l[0].Field)
			require.Equal(t, tc.msg, l[0].Message)
		})
	}
}

// TestElementPathFallsBack: where the data does not lead along the
// decoder's path, the path stays as the decoder gave it.
func TestElementPathFallsBack(t *testing.T) {
	require.Equal(t, "spec.gone", elementPath([]byte(`{"spec":{}}`), "spec.gone", "string"))
	require.Equal(t, "spec.x", elementPath([]byte(`not json`), "spec.x", "string"))
	require.Equal(t, "spec.x", elementPath([]byte(`{"spec":{"x":1}}`), "spec.x", "string"), "no value of the type the error got")
}
