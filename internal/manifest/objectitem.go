package manifest

import (
	"math"
	"slices"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// EncodeObjectItem is EncodeItem of the tree render builds of a provider's
// object (obj: maps, lists, strings, numbers, booleans and nulls, as JSON
// decodes them), written from obj itself: each map's keys sorted, strings
// tagged !!str, integral numbers as integers; with annotations (key and
// value nodes, in pairs) added at the end of its `metadata.annotations`,
// which are created at the end of their mappings when missing, as kyaml's
// LookupCreate makes them. Building the tree was a fifth of the function's
// allocations. ok is false for what it leaves to the tree: a value of
// another type, an annotation obj already has, an identity field that is
// not a string, or anything blockWriter leaves to the encoder.
// TestEncodeObjectItemMatchesTheTree (package render) holds the two equal.
func EncodeObjectItem(obj map[string]any, annotations []*yaml.Node) (b []byte, key string, ok bool) {
	meta, _ := obj[yaml.MetadataField].(map[string]any)
	if meta == nil && obj[yaml.MetadataField] != nil {
		return nil, "", false
	}
	if a, set := meta[yaml.AnnotationsField]; set {
		existing, isMap := a.(map[string]any)
		if !isMap {
			return nil, "", false
		}
		for i := 0; i < len(annotations); i += 2 {
			if _, dup := existing[annotations[i].Value]; dup {
				return nil, "", false
			}
		}
	}
	var id [4]string
	for i, v := range []any{obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"]} {
		s, isString := v.(string)
		if v != nil && !isString {
			return nil, "", false
		}
		id[i] = s
	}
	b, ok = writeBlocks(func(w *blockWriter) bool {
		w.buf = append(w.buf, '-')
		return w.object(obj, 0, true, objectPath{keys: []string{yaml.MetadataField, yaml.AnnotationsField}, pairs: annotations})
	})
	return b, id[0] + " " + id[1] + " " + id[2] + " " + id[3], ok
}

// objectPath is where the annotations go: the keys down to their
// mapping, and the pairs to add at its end.
type objectPath struct {
	keys  []string
	pairs []*yaml.Node
}

// below is the path inside the value of key, or none.
func (p objectPath) below(key string) objectPath {
	if len(p.keys) > 0 && p.keys[0] == key {
		return objectPath{keys: p.keys[1:], pairs: p.pairs}
	}
	return objectPath{}
}

func (p objectPath) empty() bool { return len(p.keys) == 0 && len(p.pairs) == 0 }

// object writes v as blockWriter.value writes the node render builds of
// it, with the path's pairs added.
func (w *blockWriter) object(v any, column int, inSequence bool, path objectPath) bool {
	switch t := v.(type) {
	case map[string]any:
		return w.objectMapping(t, column, inSequence, path)
	case []any:
		if !path.empty() {
			return false
		}
		if len(t) == 0 {
			w.buf = append(w.buf, " []\n"...)
			return true
		}
		inner := w.openCollection(column, inSequence, true)
		for i, e := range t {
			if i > 0 || !inSequence {
				w.indent(inner)
			}
			w.buf = append(w.buf, '-')
			if !w.object(e, inner, true, objectPath{}) {
				return false
			}
		}
		return true
	}
	if !path.empty() {
		return false
	}
	n, ok := objectScalar(v)
	return ok && w.scalarValue(&n, column+2)
}

// objectMapping writes a map's pairs, keys sorted, then what the path
// adds: the pairs at its end, or the next mapping of the path when the
// map lacks it.
func (w *blockWriter) objectMapping(m map[string]any, column int, inSequence bool, path objectPath) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	missing := len(path.keys) > 0 && m[path.keys[0]] == nil
	if _, set := m[firstOr(path.keys)]; set && missing {
		return false // a null where the path goes: kyaml would replace it
	}
	if len(keys) == 0 && !missing && len(path.pairs) == 0 {
		w.buf = append(w.buf, " {}\n"...)
		return true
	}
	inner := w.openCollection(column, inSequence, false)
	first := true
	startKey := func(k *yaml.Node) bool {
		if !first || !inSequence {
			w.indent(inner)
		}
		first = false
		if !w.key(k) {
			return false
		}
		w.buf = append(w.buf, ':')
		return true
	}
	for _, k := range keys {
		key := yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k}
		if !startKey(&key) || !w.object(m[k], inner, false, path.below(k)) {
			return false
		}
	}
	if missing {
		// kyaml's LookupCreate adds the key untagged, its mapping empty.
		key := yaml.Node{Kind: yaml.ScalarNode, Value: path.keys[0]}
		if !startKey(&key) || !w.object(map[string]any{}, inner, false, path.below(path.keys[0])) {
			return false
		}
	}
	if len(path.keys) == 0 {
		for i := 0; i+1 < len(path.pairs); i += 2 {
			if !startKey(path.pairs[i]) || !w.value(path.pairs[i+1], inner, false) {
				return false
			}
		}
	}
	return true
}

func firstOr(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}

// objectScalar is the node render's objectNode makes of a scalar value.
func objectScalar(v any) (yaml.Node, bool) {
	n := yaml.Node{Kind: yaml.ScalarNode}
	switch t := v.(type) {
	case string:
		n.Tag, n.Value = yaml.NodeTagString, t
	case bool:
		n.Tag, n.Value = yaml.NodeTagBool, strconv.FormatBool(t)
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			n.Tag, n.Value = yaml.NodeTagInt, strconv.FormatInt(int64(t), 10)
		} else {
			n.Tag, n.Value = yaml.NodeTagFloat, strconv.FormatFloat(t, 'g', -1, 64)
		}
	case int64:
		n.Tag, n.Value = yaml.NodeTagInt, strconv.FormatInt(t, 10)
	case int:
		n.Tag, n.Value = yaml.NodeTagInt, strconv.Itoa(t)
	case nil:
		n.Tag, n.Value = yaml.NodeTagNull, "null"
	default:
		return n, false
	}
	return n, true
}
