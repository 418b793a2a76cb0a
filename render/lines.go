package render

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// withLines sets the line of every problem that names a field of an input
// item, from the item's YAML, when source says the item's nodes count the
// lines of the file the problem names. Without source (a ResourceList,
// whose nodes count the list's lines) no line is set: a wrong line is
// worse than none.
func withLines(l diag.List, items []*yaml.RNode, source func(*yaml.RNode) string) diag.List {
	if source == nil {
		return l
	}
	byPlace := map[string]*yaml.RNode{}
	for _, n := range items {
		if _, bad := versions.CheckShape(n); bad {
			continue // kyaml's accessors cannot read it
		}
		file := fileOf(n)
		if file == "" || source(n) != file {
			continue // a List's item that names another file
		}
		key := lineKey(file, identity(n))
		if _, seen := byPlace[key]; seen {
			byPlace[key] = nil // two objects a problem cannot tell apart
			continue
		}
		byPlace[key] = n
	}
	for i, p := range l {
		if p.Line != 0 || p.Field == "" || p.File == "" {
			continue
		}
		if n := byPlace[lineKey(p.File, p.Resource)]; n != nil {
			l[i].Line = yamlerr.FieldLine(n.YNode(), p.Field)
		}
	}
	return l
}

func lineKey(file string, r diag.Resource) string { return file + "\x00" + r.String() }
