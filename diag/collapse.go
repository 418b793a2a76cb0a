package diag

import (
	"fmt"
	"strings"

	"github.com/airunway-render/airunway-render/internal/wording"
)

// CollapseAbove is how many warnings of one code on one cluster and pool
// are printed each; past it, Collapsed sums them up in one line.
const CollapseAbove = 3

// collapsedNames is how many of the resources a summed-up line names.
const collapsedNames = 3

// Collapsed folds the warnings of one code on one cluster and one pool
// (Problem.Pool; warnings about no one pool go together), when there are
// more than CollapseAbove, into one warning at the place of the first: how
// many resources, the first few, and the first one's message. A plan of
// 2,000 models printed one idle-gpus line per model; it prints one per
// cluster and pool. Errors, infos and rarer warnings are kept as they are, in
// order. The caller says how to see each (`-v`).
func (l List) Collapsed(hint string) List {
	type key struct {
		code          Code
		cluster, pool string
	}
	counts := map[key]int{}
	for _, p := range l {
		if p.Severity == Warning && p.Code != (Code{}) {
			counts[key{p.Code, p.Cluster, p.Pool}]++
		}
	}
	var out List
	groups := map[key][]Problem{}
	for _, p := range l {
		k := key{p.Code, p.Cluster, p.Pool}
		if p.Severity != Warning || p.Code == (Code{}) || counts[k] <= CollapseAbove {
			out = append(out, p)
			continue
		}
		if groups[k] == nil {
			out = append(out, Problem{Severity: Warning, Code: p.Code, Cluster: p.Cluster, Pool: p.Pool}) // its place
		}
		groups[k] = append(groups[k], p)
	}
	for i, p := range out {
		if g := groups[key{p.Code, p.Cluster, p.Pool}]; p.Message == "" && len(g) > 0 {
			out[i].Message = summary(g, hint)
		}
	}
	return out
}

// summary is one line for many warnings of one code.
func summary(g []Problem, hint string) string {
	var names []string
	for _, p := range g[:min(len(g), collapsedNames)] {
		name := p.Resource.Namespace + "/" + p.Resource.Name
		if p.Resource.Namespace == "" {
			name = p.Resource.String()
		}
		names = append(names, name)
	}
	var at []string
	if c := g[0].Cluster; c != "" {
		at = append(at, fmt.Sprintf("cluster %q", c))
	}
	if pool := g[0].Pool; pool != "" {
		at = append(at, fmt.Sprintf("pool %q", pool))
	}
	where := ""
	if len(at) > 0 {
		where = " on " + strings.Join(at, ", ")
	}
	first := strings.TrimPrefix(g[0].Message, fmt.Sprintf("(cluster %q) ", g[0].Cluster))
	what := "resource"
	if k := g[0].Resource.Kind; k != "" {
		what = k
	}
	field := ""
	if g[0].Field != "" {
		field = g[0].Field + " "
	}
	return fmt.Sprintf("%s %s%s: %s and %s more; the first: %s%s; %s",
		wording.Thousands(int64(len(g))), wording.Plural(len(g), what), where, strings.Join(names, ", "), wording.Thousands(int64(len(g)-len(names))), field, first, hint)
}
