package manifest

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// ObjectJSON converts one object's node to JSON, as kyaml's
// RNode.MarshalJSON does, for the API's strict decoding: every
// ModelDeployment, capability file and ModelCatalog is read through it.
// Keys set twice are reported at their field paths, and a conversion
// error readably.
func ObjectJSON(node *yaml.RNode) ([]byte, diag.List) {
	var l diag.List
	for _, d := range yamlerr.DuplicateKeys(node.YNode()) {
		l.Errorf(d.Field, "%s", d.Message())
	}
	if l.HasErrors() {
		return nil, l
	}
	js, err := nodeJSON(node)
	if err != nil {
		l.Errorf("", "cannot read the object: %s", yamlerr.Describe(err))
		return nil, l
	}
	return js, nil
}

// nodeJSON is kyaml's RNode.MarshalJSON without its detour: that writes the
// node out as YAML text and parses the text again before decoding it, a
// third of the cost of reading a ModelDeployment. Decoding the node itself
// runs the same decoder over the same tree (aliases, tags and the
// alias-expansion limit included). The text does change one thing: a key
// that is not a plain string (null, anchored, a merge key) may come back
// as another key, so such trees take kyaml's way. FuzzObjectJSON (the
// parity suite) holds the two equal. An alias whose anchor lies outside
// the node is decoded here, where the text would lack the anchor; the KRM
// function refuses such items before they reach the renderer.
func nodeJSON(node *yaml.RNode) ([]byte, error) {
	n := node.YNode()
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode || !plainKeys(n) {
		return node.MarshalJSON()
	}
	if js, ok := appendNodeJSON(make([]byte, 0, 1024), n); ok {
		return js, nil
	}
	m := map[string]any{}
	if err := n.Decode(&m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// plainKeys reports whether every mapping key below n is a string scalar
// without an anchor, and no flow mapping holds an empty null value: kyaml
// writes `{a}` or `{a: }` out and reads the value back as "" (found by
// FuzzObjectJSON), where decoding the node gives null.
func plainKeys(n *yaml.Node) bool {
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			// ShortTag resolves an untagged key (kyaml adds annotation
			// keys without a tag) as the parser would.
			if k := n.Content[i]; k.Kind != yaml.ScalarNode || k.ShortTag() != yaml.NodeTagString || k.Anchor != "" {
				return false
			}
			if v := n.Content[i+1]; n.Style&yaml.FlowStyle != 0 && v.Kind == yaml.ScalarNode && v.Value == "" && v.ShortTag() == yaml.NodeTagNull {
				return false
			}
		}
	}
	for _, c := range n.Content {
		if !plainKeys(c) {
			return false
		}
	}
	return true
}

// appendNodeJSON appends the JSON that decoding n into a map and
// marshalling the map gives, written from the tree itself: keys sorted,
// strings escaped as encoding/json escapes them. Decoding a ModelDeployment
// into maps and marshalling them was a tenth of a run's allocations. Only
// what it can write exactly is written here (ok is false for the rest,
// which takes the decoder): plain-keyed mappings (plainKeys) without a
// key set twice, sequences, and scalars. A scalar that is no string
// (numbers, booleans, null, timestamps) is decoded and marshalled alone,
// by the same decoder and encoder.
func appendNodeJSON(b []byte, n *yaml.Node) ([]byte, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		pairs := make([][2]*yaml.Node, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
		}
		slices.SortFunc(pairs, func(x, y [2]*yaml.Node) int { return strings.Compare(x[0].Value, y[0].Value) })
		b = append(b, '{')
		for i, p := range pairs {
			if i > 0 {
				if p[0].Value == pairs[i-1][0].Value {
					return b, false // the decoder's error
				}
				b = append(b, ',')
			}
			b = appendJSONString(b, p[0].Value)
			b = append(b, ':')
			var ok bool
			if b, ok = appendNodeJSON(b, p[1]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendNodeJSON(b, c); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case yaml.NodeTagString:
			return appendJSONString(b, n.Value), true
		case yaml.NodeTagNull, yaml.NodeTagBool, yaml.NodeTagInt, yaml.NodeTagFloat, "!!timestamp":
			var v any
			if err := n.Decode(&v); err != nil {
				return b, false
			}
			js, err := json.Marshal(v)
			if err != nil {
				return b, false
			}
			return append(b, js...), true
		}
	}
	return b, false // aliases, binary and other tags
}

// appendJSONString appends s as encoding/json writes a string: quoted,
// `"`, `\` and control characters escaped (\b, \f, \n, \r and \t by
// name), `<`, `>` and `&` escaped for HTML, U+2028 and U+2029 escaped,
// and each byte of invalid UTF-8 written as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
