// Package objdiff compares two renderings object by object: it pairs the
// objects of both sides by apiVersion, kind, namespace and name, and shows
// each change as a unified diff of its YAML, as text for a terminal or as
// Markdown for a pull-request comment. `airunway-render diff` (two git
// revisions) and `airunway-render preview` (two capability files) both
// print through it. The line diff is go-udiff's (gopls' diff as a module);
// the hunks are printed here (unified.go says why).
package objdiff

import (
	"cmp"
	"fmt"
	"html"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/render"
)

// Context is the number of unchanged lines around each change, the
// default of git and GNU diff.
const Context = 3

// Operations of a Change.
const (
	Added     = '+'
	Removed   = '-'
	Changed   = '~'
	Unchanged = '='
)

// Change is one object of either side.
type Change struct {
	Op                                byte // Added, Removed, Changed or Unchanged
	APIVersion, Kind, Namespace, Name string
	OldYAML, NewYAML                  string
}

// ID names an object in headers: kind/namespace/name, or kind/name for a
// cluster-scoped object.
func (c Change) ID() string {
	if c.Namespace == "" {
		return c.Kind + "/" + c.Name
	}
	return c.Kind + "/" + c.Namespace + "/" + c.Name
}

// Word names the change in Markdown, where a bare +, - or ~ reads poorly.
func (c Change) Word() string {
	return map[byte]string{Added: "added", Changed: "changed", Removed: "removed", Unchanged: "unchanged"}[c.Op]
}

// Compare pairs objects by apiVersion, kind, namespace and name and returns
// them in the renderer's order.
func Compare(oldObjs, newObjs []*yaml.RNode) ([]Change, error) {
	oldKeys, oldText, err := index(oldObjs)
	if err != nil {
		return nil, err
	}
	newKeys, newText, err := index(newObjs)
	if err != nil {
		return nil, err
	}
	// The union, sorted by render.SortItems: one node per identity, and
	// the sort is stable, so repeated identities keep their order.
	byNode := map[*yaml.RNode]string{}
	var union []*yaml.RNode
	for i, n := range newObjs {
		byNode[n] = newKeys[i]
		union = append(union, n)
	}
	for i, n := range oldObjs {
		if _, ok := newText[oldKeys[i]]; !ok {
			byNode[n] = oldKeys[i]
			union = append(union, n)
		}
	}
	render.SortItems(union)
	changes := make([]Change, 0, len(union))
	for _, n := range union {
		key := byNode[n]
		c := Change{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName(), OldYAML: oldText[key], NewYAML: newText[key]}
		_, inOld := oldText[key]
		_, inNew := newText[key]
		switch {
		case !inOld:
			c.Op = Added
		case !inNew:
			c.Op = Removed
		case c.OldYAML != c.NewYAML:
			c.Op = Changed
		default:
			c.Op = Unchanged
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// index returns each object's identity key and its YAML by key. An
// identity seen again gets its occurrence number: render keeps two objects
// of the user's with the same identity, and neither may hide the other.
func index(objs []*yaml.RNode) ([]string, map[string]string, error) {
	keys := make([]string, len(objs))
	text := map[string]string{}
	seen := map[string]int{}
	for i, n := range objs {
		id := strings.Join([]string{n.GetApiVersion(), n.GetKind(), n.GetNamespace(), n.GetName()}, "\x00")
		seen[id]++
		keys[i] = fmt.Sprintf("%s\x00%d", id, seen[id])
		s, err := n.String()
		if err != nil {
			return nil, nil, err
		}
		text[keys[i]] = s
	}
	return keys, text, nil
}

// Result is a comparison, ready to print.
type Result struct {
	// Old and New label the two sides: a git ref, "working tree", a
	// capability file.
	Old, New string
	// Capabilities names the capability file both sides were rendered
	// with, "" when the comparison is of two capability files.
	Capabilities string
	Changes      []Change
	// Command heads the Markdown comment.
	Command string
}

// Counts counts the changes by operation.
func (r *Result) Counts() (added, changed, removed, unchanged int) {
	for _, c := range r.Changes {
		switch c.Op {
		case Added:
			added++
		case Changed:
			changed++
		case Removed:
			removed++
		default:
			unchanged++
		}
	}
	return
}

// Differs reports whether any object was added, changed or removed.
func (r *Result) Differs() bool {
	added, changed, removed, _ := r.Counts()
	return added+changed+removed > 0
}

func (r *Result) countLine() string {
	added, changed, removed, unchanged := r.Counts()
	noun := "objects"
	if len(r.Changes) == 1 {
		noun = "object"
	}
	return fmt.Sprintf("%d %s: %d added, %d changed, %d removed, %d unchanged", len(r.Changes), noun, added, changed, removed, unchanged)
}

// body is the unified diff of one object; an added or removed object is a
// diff against nothing, so it shows in full.
func (r *Result) body(c Change) string {
	from, to := r.Old+":"+c.ID(), r.New+":"+c.ID()
	switch c.Op {
	case Added:
		from = "/dev/null"
	case Removed:
		to = "/dev/null"
	}
	return unified(from, to, c.OldYAML, c.NewYAML, Context)
}

// Text is the terminal format: one line per differing object, their
// diffs, and the counts.
func (r *Result) Text() string {
	var b strings.Builder
	var bodies strings.Builder
	for _, c := range r.Changes {
		if c.Op == Unchanged {
			continue
		}
		fmt.Fprintf(&b, "%c %s (%s)\n", c.Op, c.ID(), c.APIVersion)
		bodies.WriteString(r.body(c))
	}
	if b.Len() > 0 {
		b.WriteString("\n" + bodies.String() + "\n")
	}
	b.WriteString(r.countLine() + "\n")
	return b.String()
}

// Markdown is a pull-request comment: heading, a table of the differing
// objects, and one diff block per object, folded in <details> so a large
// PR stays readable; changed objects start unfolded.
func (r *Result) Markdown() string {
	refs := Code(r.Old) + " → " + Code(r.New)
	title := cmp.Or(r.Command, "airunway-render diff")
	if r.Capabilities != "" {
		title += " for " + Code(r.Capabilities)
	}
	if !r.Differs() {
		return fmt.Sprintf("**%s**: the rendered output is unchanged, %s (%s).\n", title, refs, r.countLine())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n%s: %s\n\n", title, refs, r.countLine())
	b.WriteString("| Change | Kind | Namespace/Name | API version |\n| --- | --- | --- | --- |\n")
	for _, c := range r.Changes {
		if c.Op != Unchanged {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Word(), cell(c.Kind), cell(Code(strings.TrimPrefix(c.Namespace+"/"+c.Name, "/"))), cell(Code(c.APIVersion)))
		}
	}
	for _, c := range r.Changes {
		if c.Op == Unchanged {
			continue
		}
		open := ""
		if c.Op == Changed {
			open = " open"
		}
		body := r.body(c)
		fence := strings.Repeat("`", max(3, longestRunOf(body, '`')+1))
		fmt.Fprintf(&b, "\n<details%s><summary>%s %s</summary>\n\n%sdiff\n%s%s\n\n</details>\n",
			open, c.Word(), html.EscapeString(c.ID()), fence, body, fence)
	}
	return b.String()
}

// Code quotes s as Markdown inline code, with a backtick run longer than
// any in s, so a ref name with backticks cannot end the span early.
func Code(s string) string {
	ticks := strings.Repeat("`", longestRunOf(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// cell escapes the one character that ends a table cell even inside a code
// span.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

func longestRunOf(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}
