package render

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// objectNode builds a YAML node straight from a rendered object, keys
// sorted, without a detour through JSON and YAML text (which dominated the
// cost of emitting). Strings are tagged !!str, so the encoder quotes exactly
// those that would otherwise read as another type ("true", "8000").
func objectNode(v any) (*yaml.Node, error) {
	switch t := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child, err := objectNode(t[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			n.Content = append(n.Content, scalar(yaml.NodeTagString, k), child)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for _, e := range t {
			child, err := objectNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, child)
		}
		return n, nil
	case string:
		return scalar(yaml.NodeTagString, t), nil
	case bool:
		return scalar(yaml.NodeTagBool, strconv.FormatBool(t)), nil
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return scalar(yaml.NodeTagInt, strconv.FormatInt(int64(t), 10)), nil
		}
		return scalar(yaml.NodeTagFloat, strconv.FormatFloat(t, 'g', -1, 64)), nil
	case int64:
		return scalar(yaml.NodeTagInt, strconv.FormatInt(t, 10)), nil
	case int:
		return scalar(yaml.NodeTagInt, strconv.Itoa(t)), nil
	case nil:
		return scalar(yaml.NodeTagNull, "null"), nil
	}
	return nil, fmt.Errorf("cannot emit a value of type %T", v)
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}
