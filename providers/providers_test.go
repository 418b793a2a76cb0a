package providers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

func TestApplyOverrides(t *testing.T) {
	cases := []struct {
		name, patch string
		want        map[string]any
		err         string
	}{
		{name: "maps merge recursively", patch: `{"spec":{"b":2,"nested":{"y":2}}}`,
			want: map[string]any{"spec": map[string]any{"a": 1.0, "b": 2.0, "nested": map[string]any{"x": 1.0, "y": 2.0}, "list": []any{"keep"}}}},
		{name: "non-map replaces", patch: `{"spec":{"list":["new"],"nested":"flat"}}`,
			want: map[string]any{"spec": map[string]any{"a": 1.0, "list": []any{"new"}, "nested": "flat"}}},
		{name: "null deletes", patch: `{"spec":{"a":null,"nested":{"x":null}}}`,
			want: map[string]any{"spec": map[string]any{"list": []any{"keep"}, "nested": map[string]any{}}}},
		{name: "nulls inside a new map do not leak", patch: `{"extra":{"gone":null,"kept":1}}`,
			want: map[string]any{"extra": map[string]any{"kept": 1.0}, "spec": map[string]any{"a": 1.0, "list": []any{"keep"}, "nested": map[string]any{"x": 1.0}}}},
		// found by FuzzApplyOverrides: a replacing list carried its nulls
		{name: "nulls inside a replacing list do not leak", patch: `{"spec":{"list":[null,{"gone":null,"kept":[null,1]}]}}`,
			want: map[string]any{"spec": map[string]any{"a": 1.0, "list": []any{map[string]any{"kept": []any{1.0}}}, "nested": map[string]any{"x": 1.0}}}},
		{name: "metadata refused", patch: `{"metadata":{"name":"x"}}`, err: `overriding "metadata" is not allowed`},
		{name: "not an object", patch: `[1]`, err: "must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := map[string]any{"spec": map[string]any{"a": 1.0, "list": []any{"keep"}, "nested": map[string]any{"x": 1.0}}}
			err := ApplyOverrides(obj, json.RawMessage(tc.patch))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, obj)
		})
	}
}

func TestFromTypedDropsNoise(t *testing.T) {
	obj, err := FromTyped(&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "x"}})
	require.NoError(t, err)
	require.NotContains(t, obj, "status")
	require.Equal(t, map[string]any{"name": "x"}, obj["metadata"], "creationTimestamp: null is dropped")
	spec := obj["spec"].(map[string]any)
	require.NotContains(t, spec, "strategy", "an empty strategy is dropped")
	require.NotContains(t, spec["template"], "metadata", "an empty template metadata is dropped")
}

func TestUserFlagsAndSortedArgs(t *testing.T) {
	e := &hub.EngineSpec{Args: map[string]string{"b": "", "a": "1"}, ExtraArgs: []string{"--x=1", "-y", "---z", "--w", "v"}}
	require.Equal(t, FlagSet{"a": true, "b": true, "x": true, "w": true}, UserFlags(e))
	require.Equal(t, []string{"--a", "1", "--b"}, SortedArgs(e.Args))
	for key, ok := range map[string]bool{"tensor-parallel-size": true, "enable_feature": true, "maxBatchSize": true, "abc123": true, "": false, "key;drop": false, "a b": false, "foo$bar": false, "-bad": false} {
		require.Equal(t, ok, ValidArgKey(key), key)
	}
}
