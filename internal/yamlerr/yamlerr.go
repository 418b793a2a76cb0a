package yamlerr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MaxParserDepth is the YAML parser's own nesting limit.
const MaxParserDepth = 10000

var (
	depthRe = regexp.MustCompile(`(?:line (\d+): )?exceeded max depth of (\d+)`)
	dupRe   = regexp.MustCompile(`line (\d+): mapping key (".*") already defined at line (\d+)`)
	kindRe  = regexp.MustCompile(`wrong node kind: expected MappingNode but got (\w+)Node`)
	utf8Re  = regexp.MustCompile(`(?:invalid leading|invalid trailing|incomplete) UTF-8 octet|invalid Unicode character`)
)

// Describe returns a readable message for an error from parsing or
// converting YAML. For an error tied to its text (InText), a line it
// names is the line of the file, and a syntax error names the line where
// the mistake is.
func Describe(err error) string {
	var loc *located
	errors.As(err, &loc)
	msg := err.Error()
	switch {
	case strings.Contains(msg, "excessive aliasing"):
		return "its YAML aliases expand to far more data than the document holds (an alias bomb); YAML anchors and aliases must not multiply the document, so write the values out"
	case depthRe.MatchString(msg):
		m := depthRe.FindStringSubmatch(msg)
		return fmt.Sprintf("%snests more than %s levels deep; YAML input must nest at most %s levels", at(loc.shift(m[1])), m[2], m[2])
	case dupRe.MatchString(msg):
		m := dupRe.FindStringSubmatch(msg)
		return fmt.Sprintf("line %s: key %s is already defined at line %s; a key must appear only once in a mapping", loc.shift(m[1]), m[2], loc.shift(m[3]))
	case kindRe.MatchString(msg):
		// kyaml says this when it sets the file annotations and finds a
		// metadata or annotations node that is not a mapping.
		return fmt.Sprintf("an object's `metadata` and `metadata.annotations` must be mappings, got a %s", strings.ToLower(kindRe.FindStringSubmatch(msg)[1]))
	case utf8Re.MatchString(msg):
		return "is not valid UTF-8; YAML input must be UTF-8 text"
	}
	for _, prefix := range []string{"MalformedYAMLError: ", "yaml: "} {
		msg = strings.ReplaceAll(msg, prefix, "")
	}
	if loc != nil {
		return loc.syntax(msg)
	}
	return msg
}

func at(line string) string {
	if line == "" {
		return ""
	}
	return "line " + line + ": "
}

// Duplicate is a key set twice in one mapping.
type Duplicate struct {
	Field           string // field path, e.g. spec.engine
	FirstLine, Line int
}

// Message says what is wrong, in the project's style.
func (d Duplicate) Message() string {
	if d.FirstLine == d.Line {
		return fmt.Sprintf("is set twice at line %d; a key must appear only once in a mapping", d.Line)
	}
	return fmt.Sprintf("is set at line %d and again at line %d; a key must appear only once in a mapping", d.FirstLine, d.Line)
}

// DuplicateKeys finds every key set twice in one mapping of the node,
// before it is converted: the converter stops at the first, and counts
// lines in its own copy of the object rather than in the input. Aliases
// are not followed, so an alias bomb costs nothing here.
func DuplicateKeys(n *yaml.Node) []Duplicate {
	var out []Duplicate
	walkKeys(n, "", &out)
	return out
}

func walkKeys(n *yaml.Node, at string, out *[]Duplicate) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkKeys(c, at, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkKeys(c, fmt.Sprintf("%s[%d]", at, i), out)
		}
	case yaml.MappingNode:
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			field := strings.TrimPrefix(at+"."+k.Value, ".")
			if line, dup := first[k.Value]; dup {
				*out = append(*out, Duplicate{Field: field, FirstLine: line, Line: k.Line})
				continue
			}
			first[k.Value] = k.Line
			walkKeys(n.Content[i+1], field, out)
		}
	}
}

// OutsideAlias returns the first alias below n whose anchor is not below n
// (an item of a ResourceList naming an anchor in another item), or nil.
// Written out alone, such a node names an anchor that is not there.
func OutsideAlias(n *yaml.Node) *yaml.Node {
	anchors := map[*yaml.Node]bool{}
	var aliases []*yaml.Node
	var walk func(*yaml.Node)
	walk = func(y *yaml.Node) {
		if y.Anchor != "" {
			anchors[y] = true
		}
		if y.Kind == yaml.AliasNode {
			aliases = append(aliases, y) // not followed: its target is elsewhere
		}
		for _, c := range y.Content {
			walk(c)
		}
	}
	walk(n)
	for _, a := range aliases {
		if !anchors[a.Alias] {
			return a
		}
	}
	return nil
}
