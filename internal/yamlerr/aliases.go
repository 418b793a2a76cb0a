package yamlerr

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxExpandedNodes bounds how many YAML nodes one document may grow to when
// its aliases are expanded. The renderer passes objects it does not own
// through untouched, aliases and all, to kubectl, Argo CD or Flux, which
// expand them; a few kilobytes of nested aliases can expand to gigabytes
// there (an alias bomb), so the run refuses them, as kustomize refuses
// documents it cannot read. The largest real object, a 1 MiB ConfigMap or
// CRD, has far fewer nodes.
const MaxExpandedNodes = 1 << 20

// CheckAliases returns an error when n's aliases expand it past
// MaxExpandedNodes. It counts each node once (an alias costs the size of
// what it points at, remembered), so a bomb is measured without being
// expanded.
func CheckAliases(n *yaml.Node) error {
	if !hasAlias(n, 0) {
		return nil // the common case: one walk, nothing allocated
	}
	sizes := map[*yaml.Node]int{}
	if size := expandedSize(n, sizes, 0); size > MaxExpandedNodes {
		return fmt.Errorf("its YAML aliases expand it to more than %d nodes, the most an object may have (an alias bomb: the tools that read the output would expand it); YAML anchors and aliases must not multiply the document, so write the values out", MaxExpandedNodes)
	}
	return nil
}

// ExpandedNodes is the number of nodes n stands for with its aliases
// expanded, counted without expanding them. A tree with aliases is counted
// up to MaxExpandedNodes+1 (CheckAliases refuses it past that); one
// without is counted whole.
func ExpandedNodes(n *yaml.Node) int {
	if hasAlias(n, 0) {
		return expandedSize(n, map[*yaml.Node]int{}, 0)
	}
	return countNodes(n)
}

func countNodes(n *yaml.Node) int {
	count := 1
	for _, c := range n.Content {
		count += countNodes(c)
	}
	return count
}

// hasAlias reports whether the tree under n holds an alias.
func hasAlias(n *yaml.Node, depth int) bool {
	if n == nil || depth > MaxParserDepth {
		return n != nil
	}
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c, depth+1) {
			return true
		}
	}
	return false
}

// expandedSize is the number of nodes n stands for with aliases expanded,
// capped just past the limit so that sums cannot overflow. depth guards
// against an alias cycle, which the parser refuses but a built tree may
// hold.
func expandedSize(n *yaml.Node, sizes map[*yaml.Node]int, depth int) int {
	if n == nil {
		return 0
	}
	if s, ok := sizes[n]; ok {
		return s
	}
	if depth > MaxParserDepth {
		return MaxExpandedNodes + 1
	}
	size := 1
	if n.Kind == yaml.AliasNode {
		size += expandedSize(n.Alias, sizes, depth+1)
	}
	for _, c := range n.Content {
		size = min(size+expandedSize(c, sizes, depth+1), MaxExpandedNodes+1)
	}
	sizes[n] = size
	return size
}
