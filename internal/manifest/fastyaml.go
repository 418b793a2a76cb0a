package manifest

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The YAML encoder (go.yaml.in/yaml/v3, kyaml's settings: indent 2,
// sequences compact or wide, no line width) turns a node tree into events
// and runs them through a port of libyaml's emitter, which weighs every
// scalar again and again; it was a third of the function's CPU at 10,000
// models. blockWriter writes the trees the renderer makes (block mappings
// and sequences of scalars, without comments, anchors or explicit tags)
// straight to bytes, with the encoder's rules for each scalar's style, and
// says when a tree holds anything else: the caller then hands that tree
// to the encoder whole. The two give the same bytes; the parity tests
// (TestBlockWriterMatchesEncoder, FuzzBlockWriterMatchesEncoder) hold
// them to it.

// scratch holds blockWriter's buffers between writes: an object is
// written into one, then copied out at its length.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// writeBlocks runs write on a blockWriter and returns a copy of what it
// wrote, or ok false when it met something it leaves to the encoder.
func writeBlocks(write func(w *blockWriter) bool) (out []byte, ok bool) {
	buf := scratch.Get().(*[]byte)
	defer scratch.Put(buf)
	w := blockWriter{buf: (*buf)[:0]}
	ok = write(&w)
	*buf = w.buf
	if !ok {
		return nil, false
	}
	return bytes.Clone(w.buf), true
}

// maxSimpleKey is the longest key the encoder writes as `key:`; a longer
// one it writes as `? key`, which blockWriter leaves to it.
const maxSimpleKey = 128

// blockWriter appends YAML to buf. wide indents a mapping's sequences
// under their key (kyaml's "wide" style) instead of level with it.
type blockWriter struct {
	buf  []byte
	wide bool
}

// entry writes n as the one entry of a block sequence at column 0: what
// encodeEntry keeps of `key:\n- n`.
func (w *blockWriter) entry(n *yaml.Node) bool {
	return w.sequenceItems([]*yaml.Node{n}, 0, false)
}

// document writes a document whose root is a non-empty block mapping.
func (w *blockWriter) document(doc *yaml.Node) bool {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || hasExtras(doc) {
		return false
	}
	root := doc.Content[0]
	if !plainCollection(root, yaml.MappingNode) || len(root.Content) == 0 {
		return false
	}
	return w.mappingPairs(root, 0, false)
}

// hasExtras: n has something blockWriter does not write (an anchor, a
// comment, a style beyond the scalar ones it knows).
func hasExtras(n *yaml.Node) bool {
	return n.Anchor != "" || n.HeadComment != "" || n.LineComment != "" || n.FootComment != ""
}

// plainCollection: n is a block collection of kind (or an empty one)
// with no anchor, comment or tag other than its kind's own.
func plainCollection(n *yaml.Node, kind yaml.Kind) bool {
	// An empty collection is written `{}` or `[]`, in flow style or not.
	flowEmpty := n.Style == yaml.FlowStyle && len(n.Content) == 0
	if n.Kind != kind || n.Style != 0 && !flowEmpty || hasExtras(n) {
		return false
	}
	switch shortTag(n.Tag) {
	case "":
		return true
	case yaml.NodeTagMap:
		return kind == yaml.MappingNode
	case yaml.NodeTagSeq:
		return kind == yaml.SequenceNode
	}
	return false
}

func shortTag(tag string) string {
	if rest, ok := strings.CutPrefix(tag, "tag:yaml.org,2002:"); ok {
		return "!!" + rest
	}
	return tag
}

func (w *blockWriter) indent(column int) {
	for range column {
		w.buf = append(w.buf, ' ')
	}
}

// mappingPairs writes the pairs of a non-empty mapping whose keys start
// at column; inline: the first key goes where the cursor is (after a
// sequence's `- `).
func (w *blockWriter) mappingPairs(n *yaml.Node, column int, inline bool) bool {
	if len(n.Content)%2 != 0 {
		return false
	}
	for i := 0; i < len(n.Content); i += 2 {
		if i > 0 || !inline {
			w.indent(column)
		}
		key, value := n.Content[i], n.Content[i+1]
		if !w.key(key) {
			return false
		}
		w.buf = append(w.buf, ':')
		if !w.value(value, column, false) {
			return false
		}
	}
	return true
}

// sequenceItems writes the items of a non-empty sequence whose dashes
// are at column.
func (w *blockWriter) sequenceItems(items []*yaml.Node, column int, inline bool) bool {
	for i, item := range items {
		if i > 0 || !inline {
			w.indent(column)
		}
		w.buf = append(w.buf, '-')
		if !w.value(item, column, true) {
			return false
		}
	}
	return true
}

// value writes n after a key's `:` or an item's `-`, through the end of
// its last line. column is the key's or the dash's.
func (w *blockWriter) value(n *yaml.Node, column int, inSequence bool) bool {
	if n.Kind == yaml.ScalarNode {
		return w.scalarValue(n, column+2)
	}
	if n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode || !plainCollection(n, n.Kind) {
		return false
	}
	mapping := n.Kind == yaml.MappingNode
	switch {
	case len(n.Content) == 0 && mapping:
		w.buf = append(w.buf, " {}\n"...)
		return true
	case len(n.Content) == 0:
		w.buf = append(w.buf, " []\n"...)
		return true
	}
	inner := w.openCollection(column, inSequence, !mapping)
	if mapping {
		return w.mappingPairs(n, inner, inSequence)
	}
	return w.sequenceItems(n.Content, inner, inSequence)
}

// openCollection ends the line of a key's `:` or an item's `-` before a
// non-empty collection, and returns the column of its keys or dashes.
// After a dash, the first key or item follows on the dash's line, two
// columns in; after a key, the next line: a mapping two columns in, a
// sequence level with the key (kyaml's compact style) or two in (wide).
func (w *blockWriter) openCollection(column int, inSequence, sequence bool) int {
	if inSequence {
		w.buf = append(w.buf, ' ')
		return column + 2
	}
	w.buf = append(w.buf, '\n')
	if sequence && !w.wide {
		return column
	}
	return column + 2
}

// scalarStyle is the style the encoder writes a scalar in.
type scalarStyle int

const (
	plainStyle scalarStyle = iota
	singleQuoted
	doubleQuoted
	literal
)

// requestedStyle is the style the encoder asks its emitter for, before
// the emitter weighs the value: the node's own style, literal for a
// value over several lines, double quotes for a string that would read
// back as another type. ok is false for what blockWriter leaves to the
// encoder: a tag it would write, a folded or tagged style, an anchor or
// a comment, text that is not UTF-8.
func requestedStyle(n *yaml.Node) (style scalarStyle, ok bool) {
	if hasExtras(n) || !utf8.ValidString(n.Value) {
		return 0, false
	}
	forceQuoting := false
	if n.Tag != "" {
		tag := shortTag(n.Tag)
		quoted := n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0
		if tag != yaml.NodeTagString || !quoted {
			resolved := resolvedTag(n.Value)
			switch {
			case resolved == tag:
			case tag == yaml.NodeTagString:
				forceQuoting = true
			default:
				return 0, false // the encoder writes the tag
			}
		}
	}
	switch {
	case n.Style == yaml.DoubleQuotedStyle:
		return doubleQuoted, true
	case n.Style == yaml.SingleQuotedStyle:
		return singleQuoted, true
	case n.Style == yaml.LiteralStyle:
		return literal, true
	case n.Style != 0:
		return 0, false // folded, flow, tagged, or several at once
	case strings.Contains(n.Value, "\n"):
		return literal, true
	case forceQuoting:
		return doubleQuoted, true
	}
	return plainStyle, true
}

// resolvedTag is the tag YAML gives v written plain. Only a value that
// starts with a sign, a digit, a dot, `~` or a letter of true, false,
// null, yes, no, on, off can be other than a string (yaml.v3's resolve
// table): the rest skip the resolver. Of those starting with `~` or a
// letter, yaml.v3 reads only its resolve map's words as other than a
// string (yes, no, on and off are strings to it): they skip the resolver
// too, which allocates for every value it is asked about.
func resolvedTag(v string) string {
	switch {
	case v == "":
	case strings.IndexByte("~yYnNtTfFoO", v[0]) >= 0:
		switch v {
		case "true", "True", "TRUE", "false", "False", "FALSE":
			return yaml.NodeTagBool
		case "~", "null", "Null", "NULL":
			return yaml.NodeTagNull
		}
		return yaml.NodeTagString
	case strings.IndexByte("+-0123456789.", v[0]) < 0:
		return yaml.NodeTagString
	}
	return (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag()
}

// key writes a mapping key as the encoder writes a simple key.
func (w *blockWriter) key(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || len(n.Value) > maxSimpleKey {
		return false
	}
	style, ok := requestedStyle(n)
	if !ok {
		return false
	}
	a := analyze(n.Value)
	if a.multiline {
		return false // written as `? "…"`
	}
	switch {
	case style == plainStyle && (!a.blockPlain || n.Value == ""):
		style = singleQuoted
	case style == literal:
		style = doubleQuoted
	}
	if style == singleQuoted && !a.singleQuoted {
		style = doubleQuoted
	}
	return w.inlineScalar(n.Value, style)
}

// scalarValue writes a scalar after `:` or `-`, and ends its line; a
// literal block's lines are indented to column.
func (w *blockWriter) scalarValue(n *yaml.Node, column int) bool {
	style, ok := requestedStyle(n)
	if !ok {
		return false
	}
	a := analyze(n.Value)
	if style == plainStyle && !a.blockPlain {
		style = singleQuoted
	}
	if style == singleQuoted && !a.singleQuoted {
		style = doubleQuoted
	}
	if style == literal && !a.block {
		style = doubleQuoted
	}
	if style == literal {
		return w.literal(n.Value, column)
	}
	if n.Value != "" || style != plainStyle {
		w.buf = append(w.buf, ' ')
	}
	if !w.inlineScalar(n.Value, style) {
		return false
	}
	w.buf = append(w.buf, '\n')
	return true
}

// inlineScalar writes a scalar on the current line: plain, or quoted.
// A quoted value over several lines is left to the encoder.
func (w *blockWriter) inlineScalar(v string, style scalarStyle) bool {
	switch style {
	case plainStyle:
		w.buf = append(w.buf, v...)
	case singleQuoted:
		if hasBreak(v) {
			return false
		}
		w.buf = append(w.buf, '\'')
		for i := 0; i < len(v); i++ {
			if v[i] == '\'' {
				w.buf = append(w.buf, '\'')
			}
			w.buf = append(w.buf, v[i])
		}
		w.buf = append(w.buf, '\'')
	case doubleQuoted:
		if strings.HasPrefix(v, "\uFEFF") {
			return false // the emitter escapes every character of such a value
		}
		w.buf = appendDoubleQuoted(w.buf, v)
	default:
		return false
	}
	return true
}

// literal writes v as a literal block scalar, `|` with its hints, its
// lines indented to column. A value that keeps trailing line breaks
// (`|+`) or has breaks other than `\n` is left to the encoder.
func (w *blockWriter) literal(v string, column int) bool {
	body, trailing := strings.CutSuffix(v, "\n")
	if strings.HasSuffix(body, "\n") || v == "\n" || strings.ContainsAny(body, "\r\u0085\u2028\u2029") {
		return false
	}
	w.buf = append(w.buf, " |"...)
	if v != "" && (v[0] == ' ' || v[0] == '\n') {
		w.buf = append(w.buf, '2') // the indentation hint: best indent
	}
	if !trailing {
		w.buf = append(w.buf, '-')
	}
	w.buf = append(w.buf, '\n')
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" {
			w.indent(column)
			w.buf = append(w.buf, line...)
		}
		w.buf = append(w.buf, '\n')
	}
	return true
}

func hasBreak(v string) bool {
	return strings.ContainsAny(v, "\r\n\u0085\u2028\u2029")
}

// scalarAnalysis is what the emitter learns of a value before it picks a
// style: which styles can carry it in block context.
type scalarAnalysis struct {
	multiline    bool
	blockPlain   bool
	singleQuoted bool
	block        bool
}

// analyze weighs v as libyaml's emitter does (yaml_emitter_analyze_scalar):
// indicators that would change its meaning unquoted, spaces and breaks at
// its ends, characters only double quotes can carry.
func analyze(v string) scalarAnalysis {
	if v == "" {
		return scalarAnalysis{blockPlain: true, singleQuoted: true}
	}
	if wordLike(v) {
		return wordAnalysis
	}
	return analyzeChars(v)
}

// wordAnalysis is analyzeChars' verdict on every wordLike value.
var wordAnalysis = scalarAnalysis{blockPlain: true, singleQuoted: true, block: true}

// analyzeChars is analyze, character by character.
func analyzeChars(v string) scalarAnalysis {
	var (
		indicators, lineBreaks, special, tabs     bool
		leadingSpace, leadingBreak                bool
		trailingSpace, trailingBreak              bool
		breakSpace, spaceBreak                    bool
		precededByBlank, previousSpace, prevBreak = true, false, false
	)
	if strings.HasPrefix(v, "---") || strings.HasPrefix(v, "...") {
		indicators = true
	}
	for i := 0; i < len(v); {
		width := utf8Width(v[i])
		followedByBlank := i+width >= len(v) || v[i+width] == ' ' || v[i+width] == '\t'
		c := v[i]
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				indicators = true
			case '?', ':', '-':
				if followedByBlank {
					indicators = true
				}
			}
		} else {
			switch c {
			case ':':
				if followedByBlank {
					indicators = true
				}
			case '#':
				if precededByBlank {
					indicators = true
				}
			}
		}
		if c == '\t' {
			tabs = true
		} else if !printable(v, i) {
			special = true
		}
		switch {
		case c == ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = i+width == len(v)
			breakSpace = breakSpace || prevBreak
			previousSpace, prevBreak = true, false
		case isBreak(v, i):
			lineBreaks = true
			leadingBreak = leadingBreak || i == 0
			trailingBreak = i+width == len(v)
			spaceBreak = spaceBreak || previousSpace
			previousSpace, prevBreak = false, true
		default:
			previousSpace, prevBreak = false, false
		}
		precededByBlank = c == ' ' || c == '\t' || c == 0 || isBreak(v, i)
		i += width
	}
	a := scalarAnalysis{multiline: lineBreaks, blockPlain: true, singleQuoted: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || lineBreaks || indicators {
		a.blockPlain = false
	}
	if trailingSpace {
		a.block = false
	}
	if breakSpace || spaceBreak || tabs || special {
		a.blockPlain, a.singleQuoted = false, false
	}
	if spaceBreak || special {
		a.block = false
	}
	return a
}

// wordLike: v starts with a letter and holds only letters, digits and
// `.`, `_`, `/`, `-`, as most keys and names do. The emitter finds no
// indicator, space, break or special character in such a value.
func wordLike(v string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		switch lower := b | 0x20; {
		case lower >= 'a' && lower <= 'z':
		case i == 0:
			return false
		case b >= '0' && b <= '9', b == '.', b == '_', b == '/', b == '-':
		default:
			return false
		}
	}
	return true
}

// utf8Width is the length of the UTF-8 sequence that starts with b.
func utf8Width(b byte) int {
	switch {
	case b&0x80 == 0:
		return 1
	case b&0xE0 == 0xC0:
		return 2
	case b&0xF0 == 0xE0:
		return 3
	case b&0xF8 == 0xF0:
		return 4
	}
	return 1
}

// printable is YAML's printable set as the emitter tests it: tab aside,
// #x20–#x7E, #x85, #xA0–#xD7FF, #xE000–#xFFFD but the byte order mark,
// and #x10000 up; a line feed counts as printable.
func printable(v string, i int) bool {
	c := v[i]
	switch {
	case c == '\n' || c >= 0x20 && c <= 0x7E:
		return true
	case c == 0xC2:
		return v[i+1] >= 0xA0
	case c > 0xC2 && c < 0xED:
		return true
	case c == 0xED:
		return v[i+1] < 0xA0
	case c == 0xEE:
		return true
	case c == 0xEF:
		bom := v[i+1] == 0xBB && v[i+2] == 0xBF
		nonCharacter := v[i+1] == 0xBF && (v[i+2] == 0xBE || v[i+2] == 0xBF)
		return !bom && !nonCharacter
	}
	return false
}

// isBreak: a line break starts at v[i]: CR, LF, NEL, LS or PS.
func isBreak(v string, i int) bool {
	switch v[i] {
	case '\r', '\n':
		return true
	case 0xC2:
		return v[i+1] == 0x85
	case 0xE2:
		return v[i+1] == 0x80 && (v[i+2] == 0xA8 || v[i+2] == 0xA9)
	}
	return false
}

// appendDoubleQuoted appends v in double quotes, escaped as the emitter
// escapes it: what is not printable, breaks, `"` and `\`, by name when
// YAML has one, else by code point in upper-case hex.
func appendDoubleQuoted(buf []byte, v string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(v); {
		width := utf8Width(v[i])
		c := v[i]
		if printable(v, i) && !isBreak(v, i) && c != '"' && c != '\\' {
			buf = append(buf, v[i:i+width]...)
			i += width
			continue
		}
		r, _ := utf8.DecodeRuneInString(v[i:])
		i += width
		buf = append(buf, '\\')
		if name, ok := namedEscapes[r]; ok {
			buf = append(buf, name)
			continue
		}
		digits, letter := 8, byte('U')
		switch {
		case r <= 0xFF:
			digits, letter = 2, 'x'
		case r <= 0xFFFF:
			digits, letter = 4, 'u'
		}
		buf = append(buf, letter)
		for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
			buf = append(buf, "0123456789ABCDEF"[(r>>shift)&0xF])
		}
	}
	return append(buf, '"')
}

var namedEscapes = map[rune]byte{
	0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0A: 'n', 0x0B: 'v', 0x0C: 'f', 0x0D: 'r',
	0x1B: 'e', '"': '"', '\\': '\\', 0x85: 'N', 0xA0: '_', 0x2028: 'L', 0x2029: 'P',
}
