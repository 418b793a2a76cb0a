package fn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/budget"
)

var documentsPast = fmt.Sprintf("[error] stdin: brings the input past %d YAML documents; one run must read at most %d (render fewer paths per run, or split the package)\n", budget.MaxDocuments, budget.MaxDocuments)

// items is a ResourceList of count items, the first one first.
func itemsList(count int, first string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	b.WriteString(first)
	for i := 1; i < count; i++ {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}}\n", i)
	}
	return b.String()
}

// TestItemsCountedFirst: the items are counted before anything is done
// for any of them: a list past the limit is refused as such, even when
// its first item is no object.
func TestItemsCountedFirst(t *testing.T) {
	stdout, stderr, code := run(t, itemsList(budget.MaxDocuments+1, "- not an object\n"))
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, documentsPast, stderr)

	_, stderr, _ = run(t, itemsList(budget.MaxDocuments, "- not an object\n"))
	require.Equal(t, "[error] stdin: cannot read the ResourceList: `items[0]` must be a mapping (an object), got \"not an object\"\n", stderr, "within the limit, the items are read")
}

// TestFunctionConfigCharged: the function config is a document of the
// run too.
func TestFunctionConfigCharged(t *testing.T) {
	list := itemsList(budget.MaxDocuments, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c0}}\n")
	_, stderr, code := run(t, list)
	require.Equal(t, 0, code, "%d items alone: %s", budget.MaxDocuments, stderr)

	stdout, stderr, code := run(t, list+"functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: fn}}\n")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, documentsPast, stderr)
}

// TestStdinOfManyDocuments: stdin must be one document; the documents
// after it are counted as they are parsed, not kept, and no more than the
// limit are parsed.
func TestStdinOfManyDocuments(t *testing.T) {
	in := "kind: ResourceList\n" + strings.Repeat("---\n{}\n", budget.MaxDocuments)
	stdout, stderr, code := run(t, in)
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, documentsPast, stderr)

	_, stderr, _ = run(t, "kind: ResourceList\n---\n{}\n")
	require.Equal(t, "[error] stdin: cannot read the ResourceList: the input holds 2 YAML documents; it must be one ResourceList, in one document\n", stderr)
}

// TestNodesBoundedBeforeParsing: the ResourceList is one document, parsed
// whole before its items are counted, so one that could hold more than
// twice the run's nodes is refused before it is parsed (a flow mapping of
// null keys holds about as many nodes as it counts); one just under is
// parsed, and refused by the node limit.
func TestNodesBoundedBeforeParsing(t *testing.T) {
	list := func(keys int) string {
		var b strings.Builder
		b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {k0")
		for i := 1; i < keys; i++ {
			fmt.Fprintf(&b, ",k%d", i)
		}
		b.WriteString("}}\n")
		return b.String()
	}
	over := list(budget.MaxNodes + 100)
	require.Greater(t, budget.NodesAtMost([]byte(over)), maxParsedNodes)
	stdout, stderr, code := run(t, over)
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, fmt.Sprintf("[error] stdin: the ResourceList could hold up to %d YAML nodes (counted before parsing, by its `:`, `-`, `,`, `[`, `{`, `?` and line breaks), more than %d; one run reads at most %d nodes, so split the package\n", budget.NodesAtMost([]byte(over)), maxParsedNodes, budget.MaxNodes), stderr)

	under := list(budget.MaxNodes - 100)
	require.LessOrEqual(t, budget.NodesAtMost([]byte(under)), maxParsedNodes)
	_, stderr, code = run(t, under)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "brings the input past 2097152 YAML nodes", "parsed, then refused by the run's node limit")
}
