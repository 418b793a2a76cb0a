package manifest

import (
	"encoding/json"

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
