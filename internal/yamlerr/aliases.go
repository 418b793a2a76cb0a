package yamlerr

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxExpandedNodes bounds how many YAML nodes one document may have, or
// grow to when its aliases are expanded. The renderer passes objects it
// does not own through untouched, aliases and all, to kubectl, Argo CD or
// Flux, which expand them; a few kilobytes of nested aliases can expand to
// gigabytes there (an alias bomb), so the run refuses them, as kustomize
// refuses documents it cannot read. A document without aliases costs its
// nodes here: writing an object out holds about 700 bytes per node
// (BENCHMARKS.md). The largest real objects are far smaller: the API server
// stores at most 1.5 MiB per object, and the largest CRDs the renderer's
// providers ship (Dynamo's, 1.6 MB of YAML; KubeRay's RayService, 1 MB)
// have 27,000 to 36,000 nodes.
const MaxExpandedNodes = 1 << 18

var errAliasBomb = fmt.Errorf("its YAML aliases expand it to more than %d nodes, the most an object may have (an alias bomb: the tools that read the output would expand it); YAML anchors and aliases must not multiply the document, so write the values out", MaxExpandedNodes)

// CheckNodes returns an error when n has more than MaxExpandedNodes nodes,
// counted with its aliases expanded: an alias bomb, or an object far past
// any real one. It counts each node once (an alias costs the size of what
// it points at, remembered), so a bomb is measured without being expanded.
func CheckNodes(n *yaml.Node) error {
	if _, expanded := CountNodes(n); expanded <= MaxExpandedNodes {
		return nil
	}
	if hasAlias(n, 0) {
		return errAliasBomb
	}
	return fmt.Errorf("has more than %d YAML nodes, the most an object may have; the largest real objects, CRDs of more than 1 MB, have about 36000: move data out of it, or split it", MaxExpandedNodes)
}

// ExpandedNodes is the number of nodes n stands for with its aliases
// expanded, counted without expanding them, up to MaxExpandedNodes+1
// when it has aliases (CheckNodes refuses it past MaxExpandedNodes).
func ExpandedNodes(n *yaml.Node) int {
	_, expanded := CountNodes(n)
	return expanded
}

// CountNodes counts the nodes of the tree under n as it is (an alias is
// one node) and with its aliases expanded, up to MaxExpandedNodes+1 then.
// The common case, a tree without aliases, takes one walk that allocates
// nothing.
func CountNodes(n *yaml.Node) (raw, expanded int) {
	raw, aliased := countNodes(n, 0)
	if aliased {
		return raw, expandedSize(n, map[*yaml.Node]int{}, 0)
	}
	return raw, raw
}

// countNodes counts the nodes of the tree under n, aliases as one node
// each, and reports whether it holds an alias (past the parser's depth,
// which only a tree built by hand can reach, it stops and says so, so that
// expandedSize, which guards against cycles, takes over).
func countNodes(n *yaml.Node, depth int) (count int, aliased bool) {
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.AliasNode || depth > MaxParserDepth {
		return 1, true
	}
	count = 1
	for _, c := range n.Content {
		k, a := countNodes(c, depth+1)
		count += k
		aliased = aliased || a
	}
	return count, aliased
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
