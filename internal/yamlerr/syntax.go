package yamlerr

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// located is a parse error tied to the text that was parsed and to where
// that text starts in its file.
type located struct {
	err    error
	text   string
	before int // lines of the file before text
}

func (e *located) Error() string { return e.err.Error() }
func (e *located) Unwrap() error { return e.err }

// InText ties err, from parsing text, to the text, of which before lines
// of its file come first (a document after others). Describe then reports
// the line of the file where the mistake is. The error's text is err's.
func InText(err error, text string, before int) error {
	if err == nil {
		return nil
	}
	return &located{err: err, text: text, before: before}
}

// To find a mistake Describe parses its text again, a dozen or two times
// (firstFailing). relocateLimit bounds one text, the largest object
// (hub.MaxObjectBytes); relocateBudget all of them in one process, so
// that many broken files cost at most about as much again as the most a
// run reads (hub.MaxInputBytes). Past either, the parser's own line is
// kept.
const (
	relocateLimit  = 1 << 20
	relocateBudget = 64 << 20
)

// relocated counts the bytes parsed again against relocateBudget.
var relocated atomic.Int64

// mayRelocate charges the parses of a text of size bytes and lines lines
// to relocateBudget, and reports whether they fit.
func mayRelocate(size, lines int) bool {
	cost := int64(size) * int64(bits.Len(uint(lines))+1)
	if relocated.Add(cost) > relocateBudget {
		relocated.Add(-cost)
		return false
	}
	return true
}

var lineRe = regexp.MustCompile(`^line (\d+): (.*)$`)

// shift adds the lines before the text to a line number of the parser's.
func (e *located) shift(line string) string {
	n, err := strconv.Atoi(line)
	if e == nil || err != nil {
		return line
	}
	return strconv.Itoa(n + e.before)
}

// syntax rewords msg, a parse error of e.text without its prefixes, to
// name the line where the mistake is. The parser's own line is the start
// of the block it was parsing, and one short: yaml.v3 counts it from 0
// (`line 8` for a bad key on line 9; `line 4` for one on line 7 of a
// mapping that starts on line 5). The mistake is on the first line that
// the parser cannot take: the shortest run of the text's first lines that
// fails as the whole text does ends there.
func (e *located) syntax(msg string) string {
	problem := msg
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		problem = m[2]
		msg = "line " + e.shift(m[1]) + ": " + problem
	}
	if len(e.text) > relocateLimit {
		return msg
	}
	ends := lineEnds(e.text)
	if !mayRelocate(len(e.text), len(ends)) {
		return msg
	}
	k := firstFailing(e.text, ends, problem)
	if k == 0 {
		return msg
	}
	line := e.text[ends[k-1]:ends[k]]
	return fmt.Sprintf("line %d: %s", k+e.before, explain(e.text[:ends[k-1]], line, problem))
}

// lineEnds returns where each line of text ends, after its line break,
// with 0 first: line k (from 1) is text[ends[k-1]:ends[k]]. Line breaks
// are the parser's: CR LF, CR, LF, NEL, LS and PS.
func lineEnds(text string) []int {
	ends := []int{0}
	for i := 0; i < len(text); {
		n := lineBreak(text[i:])
		if n == 0 {
			i++
			continue
		}
		i += n
		ends = append(ends, i)
	}
	if ends[len(ends)-1] < len(text) {
		ends = append(ends, len(text))
	}
	return ends
}

// lineBreak is the length of the line break s starts with, or 0.
func lineBreak(s string) int {
	switch {
	case strings.HasPrefix(s, "\r\n"), strings.HasPrefix(s, "\u0085"):
		return 2
	case s[0] == '\r', s[0] == '\n':
		return 1
	case strings.HasPrefix(s, "\u2028"), strings.HasPrefix(s, "\u2029"):
		return 3
	}
	return 0
}

// CountLines counts the line breaks of b as the parser does: the lines
// before a document that starts after b.
func CountLines(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\n':
			n++
		case b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n'):
			n++
		case b[i] == 0xC2 && i+1 < len(b) && b[i+1] == 0x85: // NEL
			n++
		case b[i] == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9): // LS, PS
			n++
		}
	}
	return n
}

// firstFailing returns k such that the first k lines of text fail to
// parse with problem and the first k-1 do not, or 0 when the whole text
// does not fail so.
func firstFailing(text string, ends []int, problem string) int {
	fails := func(k int) bool {
		_, err := parseDocument(text[:ends[k]])
		return err != nil && problemOf(err) == problem
	}
	lo, hi := 0, len(ends)-1
	if hi == 0 || !fails(hi) {
		return 0
	}
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// parseDocument parses the first document of text as the readers do.
func parseDocument(text string) (*yaml.Node, error) {
	doc := &yaml.Node{}
	err := yaml.NewDecoder(strings.NewReader(text)).Decode(doc)
	if errors.Is(err, io.EOF) {
		return doc, nil
	}
	return doc, err
}

// problemOf is a parse error's text without its prefix and line.
func problemOf(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineRe.FindStringSubmatch(msg); m != nil {
		return m[2]
	}
	return msg
}

// level is where the lines of one open block start: the keys of a
// mapping, or the entries of a list.
type level struct {
	indent int
	list   bool   // entries of a list, not keys of a mapping
	what   string // "the keys of `spec`"
}

// explain says what is wrong with line, the first the parser cannot take
// after before: when its indentation is none of the blocks still open
// there, it says so and how the blocks are indented; else the parser's
// problem.
func explain(before, line, problem string) string {
	text := strings.TrimRight(line, "\r\n\u0085\u2028\u2029")
	content := strings.TrimLeft(text, " ")
	indent := len(text) - len(content)
	if content == "" || content[0] == '#' {
		return problem
	}
	doc, err := parseDocument(before)
	if err != nil || len(doc.Content) != 1 {
		return problem
	}
	levels, child := openLevels(doc.Content[0], before)
	if len(levels) == 0 || child >= 0 && indent > child {
		return problem // a first key or entry under a key with no value yet may start anywhere deeper
	}
	if l, ok := lined(levels, indent); ok {
		return misplaced(l, content, problem)
	}
	lower, upper := -1, -1 // the blocks just outside and just inside the line
	for i, l := range levels {
		switch {
		case l.indent < indent && (lower < 0 || l.indent >= levels[lower].indent):
			lower = i
		case l.indent > indent && (upper < 0 || l.indent <= levels[upper].indent):
			upper = i
		}
	}
	var where []string
	for _, i := range []int{upper, lower} {
		switch {
		case i < 0:
		case len(where) == 0:
			where = append(where, fmt.Sprintf("%s are indented %d", levels[i].what, levels[i].indent))
		default:
			where = append(where, fmt.Sprintf("%s %d", levels[i].what, levels[i].indent))
		}
	}
	return fmt.Sprintf("%s is indented %s, but %s; line it up with the block it belongs to", snippet(content), spaces(indent), strings.Join(where, " and "))
}

// lined returns the innermost block indented as deep as the line.
func lined(levels []level, indent int) (level, bool) {
	for i := len(levels) - 1; i >= 0; i-- {
		if levels[i].indent == indent {
			return levels[i], true
		}
	}
	return level{}, false
}

// misplaced explains a line lined up with a block of the other sort: a
// list entry among keys, or a key among list entries; else the parser's
// problem stands.
func misplaced(l level, content, problem string) string {
	entry := content == "-" || strings.HasPrefix(content, "- ")
	switch {
	case entry && !l.list:
		return fmt.Sprintf("%s is a list entry among %s (both indented %d); a list must be the value of a key", snippet(content), l.what, l.indent)
	case !entry && l.list:
		return fmt.Sprintf("%s is not a list entry, but is indented as %s (%d); start an entry with `- `, or indent it to belong to an entry", snippet(content), l.what, l.indent)
	}
	return problem
}

// openLevels lists the blocks open at the end of text, parsed into n,
// outermost first: each block mapping or list along its last entries, and
// a block scalar's text (`|`, `>`) last. child is the indentation of the
// last key or entry when it has no value yet (a line deeper than that
// starts its value), else -1.
func openLevels(n *yaml.Node, text string) (levels []level, child int) {
	path := ""
	for {
		block := n.Style&yaml.FlowStyle == 0
		switch {
		case n.Kind == yaml.MappingNode && block && len(n.Content) >= 2:
			levels = append(levels, level{indent: n.Column - 1, what: keysOf(path)})
			key := n.Content[len(n.Content)-2]
			n = n.Content[len(n.Content)-1]
			path = strings.TrimPrefix(path+"."+key.Value, ".")
		case n.Kind == yaml.SequenceNode && block && len(n.Content) > 0:
			levels = append(levels, level{indent: n.Column - 1, list: true, what: "the entries of `" + path + "`"})
			path = fmt.Sprintf("%s[%d]", path, len(n.Content)-1)
			n = n.Content[len(n.Content)-1]
		case n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			if indent, ok := textIndent(text, n.Line); ok {
				levels = append(levels, level{indent: indent, what: "the lines of the text of `" + path + "`"})
			}
			return levels, -1
		default:
			if n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagNull && n.Value == "" && len(levels) > 0 {
				return levels, levels[len(levels)-1].indent
			}
			return levels, -1
		}
	}
}

// textIndent is the indentation of a block scalar's text: of its first
// line that is not blank after line, the one of its `|` or `>`.
func textIndent(text string, line int) (int, bool) {
	ends := lineEnds(text)
	for k := line + 1; k < len(ends); k++ {
		l := strings.TrimRight(text[ends[k-1]:ends[k]], "\r\n\u0085\u2028\u2029")
		if content := strings.TrimLeft(l, " "); content != "" {
			return len(l) - len(content), true
		}
	}
	return 0, false
}

func keysOf(path string) string {
	if path == "" {
		return "the top-level keys"
	}
	return "the keys of `" + path + "`"
}

// snippet names a line: its key in back-quotes (`resources:`), else its
// start, quoted ("- c").
func snippet(content string) string {
	key := content
	if i := strings.Index(content, ": "); i >= 0 {
		key = content[:i+1]
	}
	if strings.HasSuffix(key, ":") && strconv.CanBackquote(key) {
		return "`" + key + "`"
	}
	const most = 40
	if utf8.RuneCountInString(content) > most {
		content = string([]rune(content)[:most]) + "..."
	}
	return strconv.Quote(content)
}

func spaces(n int) string {
	if n == 1 {
		return "1 space"
	}
	return fmt.Sprintf("%d spaces", n)
}
