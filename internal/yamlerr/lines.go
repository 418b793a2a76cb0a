package yamlerr

import (
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
)

// FieldLine returns the line of a field of the object n, given as a
// problem's field path: keys joined by dots, list elements as `[2]` or by
// name as `[l4]` (the element whose `name` is l4), e.g.
// `spec.nodePools[0].gpu.perNode`. A key may hold dots itself (an
// annotation's); the longest key that fits the path wins. When the field
// is not there (a required field left out), it is the line of the deepest
// part of the path that is; 0 when n has no line (a node built in code).
func FieldLine(n *yaml.Node, field string) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	line := n.Line
	for rest := field; rest != ""; {
		var next *yaml.Node
		var at int
		next, at, rest = step(resolved(n), rest)
		if next == nil {
			break
		}
		if at > 0 {
			line = at
		}
		n = next
	}
	return line
}

// step follows the first segment of path from n: the node it leads to,
// the line of the segment (a key's line, or an element's), and the rest
// of the path; a nil node when n has no such field.
func step(n *yaml.Node, path string) (*yaml.Node, int, string) {
	if strings.HasPrefix(path, "[") {
		end := strings.IndexByte(path, ']')
		if end < 0 {
			return nil, 0, ""
		}
		next := element(n, path[1:end])
		if next == nil {
			return nil, 0, ""
		}
		return next, next.Line, strings.TrimPrefix(path[end+1:], ".")
	}
	if n.Kind != yaml.MappingNode {
		return nil, 0, ""
	}
	best := -1
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if fits(path, k) && (best < 0 || len(k) > len(n.Content[best].Value)) {
			best = i
		}
	}
	if best < 0 {
		return nil, 0, ""
	}
	rest := path[len(n.Content[best].Value):]
	return n.Content[best+1], n.Content[best].Line, strings.TrimPrefix(rest, ".")
}

// fits reports whether key is the whole first segment of path.
func fits(path, key string) bool {
	if !strings.HasPrefix(path, key) || key == "" {
		return false
	}
	rest := path[len(key):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// element is a list's element by index or by name, or a mapping's value
// by key (`[key]`).
func element(n *yaml.Node, sel string) *yaml.Node {
	switch n.Kind {
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(sel); err == nil {
			if i >= 0 && i < len(n.Content) {
				return n.Content[i]
			}
			return nil
		}
		for _, e := range n.Content {
			if name := value(resolved(e), "name"); name != nil && name.Value == sel {
				return e
			}
		}
	case yaml.MappingNode:
		return value(n, sel)
	}
	return nil
}

// value is the value of key in mapping n, or nil.
func value(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// resolved is the node an alias stands for; the path goes on there.
func resolved(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// ShiftLines adds lines to the line of every node below n: a document
// parsed on its own, out of a file of several, then counts the lines of
// the file. Aliases are not followed; their anchors are below n too.
func ShiftLines(n *yaml.Node, lines int) {
	if n == nil || lines == 0 {
		return
	}
	if n.Line > 0 {
		n.Line += lines
	}
	for _, c := range n.Content {
		ShiftLines(c, lines)
	}
}

// AddLines sets the line of every problem of l that names a field and has
// no line yet, from n, the object the problems are about, parsed from
// their file.
func AddLines(l diag.List, n *yaml.Node) diag.List {
	for i := range l {
		if l[i].Field != "" && l[i].Line == 0 {
			l[i].Line = FieldLine(n, l[i].Field)
		}
	}
	return l
}

// AddLinesIn is AddLines for problems about the one object that text,
// the whole of its file, holds; problems are left as they are when text
// does not parse.
func AddLinesIn(l diag.List, text []byte) diag.List {
	if !slices.ContainsFunc(l, func(p diag.Problem) bool { return p.Field != "" }) {
		return l // nothing to parse it for
	}
	doc, err := parseDocument(string(text))
	if err != nil {
		return l
	}
	return AddLines(l, doc)
}
