package render

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/providers"
)

// TestEncodeObjectItemMatchesTheTree holds manifest.EncodeObjectItem to
// what it replaces, EncodeItem of the node toNode builds, over random
// objects of the values providers render (strings that read as other
// types, over several lines, quoted; numbers, booleans, nulls; empty and
// nested maps and lists; objects with and without metadata and
// annotations): the same bytes and sort key, or ok false.
func TestEncodeObjectItemMatchesTheTree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "x", "true", "8000", "1.5", "~", "null", "yes", "a: b", "- x", "#c", "a\nb", "a\nb\n", " lead", "trail ", "'q'", `"d"`,
		"é", "\t", "http://x/y", "nvidia.com/gpu", "{x}", "[1]", "@at", "`b`", "0x1F", "2001-12-14", "a'b", "%p", "!t", "&a", "*a", "|", ">", "?"}
	scalar := func() any {
		switch r.IntN(6) {
		case 0:
			return float64(r.IntN(100000))
		case 1:
			return r.Float64() * 1e6
		case 2:
			return r.IntN(2) == 0
		case 3:
			return nil
		}
		return strs[r.IntN(len(strs))]
	}
	var value func(depth int) any
	value = func(depth int) any {
		if depth > 3 || r.IntN(3) == 0 {
			return scalar()
		}
		if r.IntN(2) == 0 {
			m := map[string]any{}
			for range r.IntN(4) {
				m[strs[r.IntN(len(strs))]] = value(depth + 1)
			}
			return m
		}
		l := []any{}
		for range r.IntN(4) {
			l = append(l, value(depth+1))
		}
		return l
	}
	encoded := 0
	for i := range 3000 {
		obj := providers.Object{"apiVersion": "apps/v1", "kind": "Deployment"}
		for range r.IntN(4) {
			obj[strs[r.IntN(len(strs))]] = value(1)
		}
		switch r.IntN(4) {
		case 0: // no metadata
		case 1:
			obj["metadata"] = map[string]any{"name": fmt.Sprintf("m-%d", i), "namespace": "ns"}
		case 2:
			obj["metadata"] = map[string]any{"name": fmt.Sprintf("m-%d", i), "annotations": map[string]any{}}
		default:
			obj["metadata"] = map[string]any{"name": fmt.Sprintf("m-%d", i), "labels": map[string]any{"a": "b"},
				"annotations": map[string]any{"x": strs[r.IntN(len(strs))], "airunway.ai/generated-from": "m"}}
		}
		node, err := toNode(obj, "models/m.yaml")
		if err != nil {
			continue // no file name for it: toNode reports it
		}
		want, wantKey, err := manifest.EncodeItem(node)
		require.NoError(t, err)
		got, key, ok := manifest.EncodeObjectItem(obj, []*yaml.Node{
			annotationKey(kioutil.PathAnnotation), annotationValue(node.GetAnnotations()[kioutil.PathAnnotation]),
			annotationKey(kioutil.IndexAnnotation), annotationValue("0"),
		})
		if !ok {
			continue
		}
		encoded++
		require.Equal(t, string(want), string(got), "%#v", obj)
		require.Equal(t, wantKey, key)
	}
	require.Greater(t, encoded, 2000, "most objects are encoded from the object")
}
