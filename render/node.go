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
// The object's nodes, and their lists of children, are each one array
// (nodeArena): an object of a hundred nodes costs two allocations instead
// of a hundred and more.
func objectNode(v any) (*yaml.Node, error) {
	nodes, children := countNodes(v)
	a := nodeArena{nodes: make([]yaml.Node, 0, nodes), content: make([]*yaml.Node, 0, children)}
	return a.node(v)
}

// countNodes is how many nodes objectNode makes of v, and how many
// children they have together.
func countNodes(v any) (nodes, children int) {
	switch t := v.(type) {
	case map[string]any:
		nodes, children = 1+len(t), 2*len(t)
		for _, e := range t {
			n, c := countNodes(e)
			nodes, children = nodes+n, children+c
		}
	case []any:
		nodes, children = 1, len(t)
		for _, e := range t {
			n, c := countNodes(e)
			nodes, children = nodes+n, children+c
		}
	default:
		nodes = 1
	}
	return nodes, children
}

// nodeArena hands out the nodes of one object, and their lists of
// children, from arrays allocated for them (countNodes); the object's
// nodes live and die together.
type nodeArena struct {
	nodes   []yaml.Node
	content []*yaml.Node
}

func (a *nodeArena) new(kind yaml.Kind, tag, value string) *yaml.Node {
	if len(a.nodes) == cap(a.nodes) {
		a.nodes = make([]yaml.Node, 0, 16) // not counted: cannot happen
	}
	a.nodes = append(a.nodes, yaml.Node{Kind: kind, Tag: tag, Value: value})
	return &a.nodes[len(a.nodes)-1]
}

// children is room for n children, to be appended to. Capped at n, so
// that an append past it (an annotation toNode adds) copies instead of
// writing over the next node's.
func (a *nodeArena) children(n int) []*yaml.Node {
	if cap(a.content)-len(a.content) < n {
		return make([]*yaml.Node, 0, n) // not counted: cannot happen
	}
	c := a.content[len(a.content) : len(a.content) : len(a.content)+n]
	a.content = a.content[:len(a.content)+n]
	return c
}

func (a *nodeArena) node(v any) (*yaml.Node, error) {
	switch t := v.(type) {
	case map[string]any:
		n := a.new(yaml.MappingNode, yaml.NodeTagMap, "")
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		n.Content = a.children(2 * len(t))
		for _, k := range keys {
			child, err := a.node(t[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			n.Content = append(n.Content, a.new(yaml.ScalarNode, yaml.NodeTagString, k), child)
		}
		return n, nil
	case []any:
		n := a.new(yaml.SequenceNode, yaml.NodeTagSeq, "")
		n.Content = a.children(len(t))
		for _, e := range t {
			child, err := a.node(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, child)
		}
		return n, nil
	case string:
		return a.new(yaml.ScalarNode, yaml.NodeTagString, t), nil
	case bool:
		return a.new(yaml.ScalarNode, yaml.NodeTagBool, strconv.FormatBool(t)), nil
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			return a.new(yaml.ScalarNode, yaml.NodeTagInt, strconv.FormatInt(int64(t), 10)), nil
		}
		return a.new(yaml.ScalarNode, yaml.NodeTagFloat, strconv.FormatFloat(t, 'g', -1, 64)), nil
	case int64:
		return a.new(yaml.ScalarNode, yaml.NodeTagInt, strconv.FormatInt(t, 10)), nil
	case int:
		return a.new(yaml.ScalarNode, yaml.NodeTagInt, strconv.Itoa(t)), nil
	case nil:
		return a.new(yaml.ScalarNode, yaml.NodeTagNull, "null"), nil
	}
	return nil, fmt.Errorf("cannot emit a value of type %T", v)
}
