package manifest

import "sigs.k8s.io/kustomize/kyaml/yaml"

// Field returns the value of the first key equal to key in mapping m, nil
// when there is none or m is no mapping; like the SDK's accessors, it
// matches only string (or untagged) scalar keys.
func Field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind == yaml.ScalarNode && (k.Tag == yaml.NodeTagString || k.Tag == "") && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// StringScalar is n's value when n is a string scalar, as the SDK's
// accessors read `kind` or `metadata.name`; "" for anything else (another
// tag, an alias, a mapping, nil).
func StringScalar(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagString {
		return n.Value
	}
	return ""
}
