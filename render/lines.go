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
		key, ok := placeKey(n, source)
		if !ok {
			continue
		}
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

// placeKey is the key under which a problem finds item n's lines, and
// whether n's nodes count the lines of the file its path annotation names.
func placeKey(n *yaml.RNode, source func(*yaml.RNode) string) (string, bool) {
	if _, bad := versions.CheckShape(n); bad {
		return "", false // kyaml's accessors cannot read it
	}
	file := fileOf(n)
	if file == "" || source(n) != file {
		return "", false // a List's item that names another file
	}
	return lineKey(file, identity(n)), true
}

func lineKey(file string, r diag.Resource) string { return file + "\x00" + r.String() }

// lineIndex gives an item its problems' lines while the item is at hand,
// as withLines would at the end of the run: a run that lets go of each
// model once it is rendered (Options.ReleaseItems) no longer has it then.
// It keeps a count per place, not the items.
type lineIndex struct {
	source func(*yaml.RNode) string
	count  map[string]int
}

func newLineIndex(items []*yaml.RNode, source func(*yaml.RNode) string, deferred []Deferred) *lineIndex {
	x := &lineIndex{source: source, count: map[string]int{}}
	if source == nil {
		return x
	}
	for _, n := range items {
		if key, ok := placeKey(n, source); ok {
			x.count[key]++
		}
	}
	for _, d := range deferred {
		if d.place != "" {
			x.count[d.place]++
		}
	}
	return x
}

// attach sets the lines of the problems in l that name a field of n,
// unless another item shares n's place.
func (x *lineIndex) attach(l diag.List, n *yaml.RNode) {
	if x.source == nil {
		return
	}
	key, ok := placeKey(n, x.source)
	if !ok || x.count[key] != 1 {
		return
	}
	for i, p := range l {
		if p.Line == 0 && p.Field != "" && p.File != "" && lineKey(p.File, p.Resource) == key {
			l[i].Line = yamlerr.FieldLine(n.YNode(), p.Field)
		}
	}
}
