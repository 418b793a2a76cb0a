package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// token is one Python token the scanner keeps: an identifier, a string
// literal (its value, and whether it is an f-string) or one punctuation
// character. Comments, numbers and whitespace are dropped.
type token struct {
	kind       byte // 'i' identifier, 's' string, 'p' punctuation
	text       string
	fstr       bool
	start, end int // byte offsets in the file: [start, end)
}

// tokenize is a small Python scanner: enough to find calls and their
// string arguments without being fooled by comments or by text in strings.
func tokenize(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\':
			i++
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			word := src[i:j]
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && isStringPrefix(word) {
				s, end, err := readString(src, j)
				if err != nil {
					return nil, err
				}
				toks = append(toks, token{kind: 's', text: s, fstr: strings.ContainsAny(strings.ToLower(word), "f"), start: i, end: end})
				i = end
				continue
			}
			toks = append(toks, token{kind: 'i', text: word, start: i, end: j})
			i = j
		case c == '"' || c == '\'':
			s, end, err := readString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: 's', text: s, start: i, end: end})
			i = end
		case c >= '0' && c <= '9':
			for i < len(src) && (isIdentPart(src[i]) || src[i] == '.') {
				i++
			}
		default:
			toks = append(toks, token{kind: 'p', text: string(c), start: i, end: i + 1})
			i++
		}
	}
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "f", "b", "rb", "br", "fr", "rf":
		return true
	}
	return false
}

// readString reads the literal that starts with the quote at i and returns
// its raw text between the quotes (escapes are kept as written: option
// names have none) and the index after it.
func readString(src string, i int) (string, int, error) {
	q := src[i : i+1]
	if strings.HasPrefix(src[i:], q+q+q) {
		q = q + q + q
	}
	j := i + len(q)
	for j < len(src) {
		if src[j] == '\\' {
			j += 2
			continue
		}
		if strings.HasPrefix(src[j:], q) {
			return src[i+len(q) : j], j + len(q), nil
		}
		if len(q) == 1 && src[j] == '\n' {
			break
		}
		j++
	}
	return "", 0, fmt.Errorf("unterminated string at byte %d", i)
}

// file is one scanned Python file of a release.
type file struct {
	path string
	src  string
	toks []token
}

func scan(path, src string) (*file, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &file{path: path, src: src, toks: toks}, nil
}

// class is one top-level class statement of a file.
type class struct {
	name       string
	file       *file
	bases      []string
	decorators []string            // the names after "@": "dataclass", "config"
	start, end int                 // byte offsets of its first decorator and of its body's end
	fields     []string            // the fields its body declares, in order
	annot      map[string]string   // a field's annotation
	methods    map[string][]string // a method's decorators
	dataclass  bool
}

// release is what the rules need of all the pinned files of a release.
type release struct {
	files   []*file
	classes map[string]*class
	// configDataclass: the release's vllm/config/utils.py makes a class
	// decorated @config a (pydantic) dataclass.
	configDataclass bool
	// boolAction: the release's get_kwargs gives a field whose type hints
	// contain bool argparse.BooleanOptionalAction; boolStrNone: but not
	// one whose type hints are exactly bool, str and None.
	boolAction, boolStrNone bool
	// actions: the value assigned by `…["key"]["action"] = …`, per key.
	actions map[string]string
	// flags: where a pinned file sets a "flags" key (an option's extra
	// option strings), which no rule reads.
	flags []string
}

// newRelease reads the classes and the get_kwargs facts of a release's
// files (path to content).
func newRelease(srcs map[string]string) (*release, error) {
	r := &release{classes: map[string]*class{}, actions: map[string]string{}}
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for p := range srcs {
			if !yield(p) {
				return
			}
		}
	}) {
		f, err := scan(path, srcs[path])
		if err != nil {
			return nil, err
		}
		r.files = append(r.files, f)
		if path == "vllm/config/utils.py" && strings.Contains(f.src, "return dataclass(cls") {
			r.configDataclass = true
		}
		if strings.Contains(f.src, `kwargs[name]["action"] = argparse.BooleanOptionalAction`) {
			r.boolAction = true
		}
		if strings.Contains(f.src, "type_hints == {bool, str, type(None)}") {
			r.boolStrNone = true
		}
		r.readKwargsEdits(f)
	}
	for _, f := range r.files {
		for _, c := range classes(f) {
			if _, dup := r.classes[c.name]; dup {
				return nil, fmt.Errorf("%s: class %s is defined twice in the pinned files", f.path, c.name)
			}
			c.dataclass = slices.Contains(c.decorators, "dataclass") || (slices.Contains(c.decorators, "config") && r.configDataclass)
			r.classes[c.name] = c
		}
	}
	return r, nil
}

// readKwargsEdits records `X["key"]["action"] = V` assignments and where a
// "flags" key is set (anything but the `value.pop("flags", [])` that reads
// it).
func (r *release) readKwargsEdits(f *file) {
	t := f.toks
	for i := range t {
		if t[i].kind != 's' || t[i].fstr {
			continue
		}
		switch t[i].text {
		case "action":
			if i >= 4 && i+2 < len(t) && t[i-1].text == "[" && t[i+1].text == "]" && t[i+2].text == "=" &&
				t[i-2].text == "]" && t[i-3].kind == 's' && t[i-4].text == "[" {
				end := i + 3
				for end < len(t) && f.line(t[end].start) == f.line(t[i].start) {
					end++
				}
				r.actions[t[i-3].text] = concatText(t[i+3 : end])
			}
		case "flags":
			if isFlagsPop(t, i) {
				continue
			}
			r.flags = append(r.flags, fmt.Sprintf("%s line %d", f.path, f.line(t[i].start)))
		}
	}
}

// isFlagsPop: t[i] is the "flags" of `NAME.pop("flags", [])`.
func isFlagsPop(t []token, i int) bool {
	return i >= 3 && i+4 < len(t) && t[i-1].text == "(" && t[i-2].text == "pop" && t[i-3].text == "." &&
		t[i+1].text == "," && t[i+2].text == "[" && t[i+3].text == "]" && t[i+4].text == ")"
}

func concatText(t []token) string {
	var b strings.Builder
	for _, x := range t {
		b.WriteString(x.text)
	}
	return b.String()
}

// line is the 1-based line of byte offset off.
func (f *file) line(off int) int { return strings.Count(f.src[:off], "\n") + 1 }

// inString reports whether byte offset off is inside a string literal
// (one that spans lines: a docstring).
func (f *file) inString(off int) bool {
	i, _ := slices.BinarySearchFunc(f.toks, off, func(t token, off int) int { return t.start - off })
	// the token starting at or after off cannot contain it; the one before may
	return i > 0 && f.toks[i-1].kind == 's' && f.toks[i-1].start < off && off < f.toks[i-1].end
}

var (
	classRe    = regexp.MustCompile(`^class (\w+)\b`)
	decoRe     = regexp.MustCompile(`^@([\w.]+)`)
	memberRe   = regexp.MustCompile(`^    (?:async\s+)?def (\w+)\s*\(`)
	memberDeco = regexp.MustCompile(`^    @([\w.]+)`)
	fieldRe    = regexp.MustCompile(`^    ([A-Za-z_]\w*)\s*:(.*)$`)
)

// classes reads the top-level classes of a file: their decorators, bases,
// methods (with their decorators) and, for a dataclass, their fields:
// `name: annotation [= default]` at the body's first indentation level,
// outside strings, in order, ClassVar excepted.
func classes(f *file) []*class {
	lines := strings.SplitAfter(f.src, "\n")
	offs := make([]int, len(lines)+1)
	for i, l := range lines {
		offs[i+1] = offs[i] + len(l)
	}
	var out []*class
	for ln := 0; ln < len(lines); ln++ {
		m := classRe.FindStringSubmatch(lines[ln])
		if m == nil || f.inString(offs[ln]) {
			continue
		}
		c := &class{name: m[1], file: f, start: offs[ln], annot: map[string]string{}, methods: map[string][]string{}}
		for d := ln - 1; d >= 0; d-- {
			dm := decoRe.FindStringSubmatch(lines[d])
			if dm == nil {
				break
			}
			name := dm[1]
			if k := strings.LastIndexByte(name, '.'); k >= 0 {
				name = name[k+1:] // dataclasses.dataclass
			}
			c.decorators = append(c.decorators, name)
			c.start = offs[d]
		}
		c.bases = classBases(f, offs[ln])
		// the body: up to the next line at column 0 outside a string
		end := len(lines)
		for b := ln + 1; b < len(lines); b++ {
			l := lines[b]
			if strings.TrimSpace(l) == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || l[0] == ')' || f.inString(offs[b]) {
				continue
			}
			end = b
			break
		}
		c.end = offs[end]
		var decos []string
		for b := ln + 1; b < end; b++ {
			l := strings.TrimRight(lines[b], "\r\n")
			if f.inString(offs[b]) {
				continue
			}
			if dm := memberDeco.FindStringSubmatch(l); dm != nil {
				decos = append(decos, dm[1])
				continue
			}
			if mm := memberRe.FindStringSubmatch(l); mm != nil {
				c.methods[mm[1]] = decos
				decos = nil
				continue
			}
			fm := fieldRe.FindStringSubmatch(l)
			if fm == nil || keywords[fm[1]] {
				continue
			}
			next := make([]string, 0, end-b-1)
			for _, n := range lines[b+1 : end] {
				next = append(next, strings.TrimRight(n, "\r\n"))
			}
			ann := strings.TrimSpace(annotation(fm[2], next))
			if strings.HasPrefix(ann, "ClassVar") || slices.Contains(c.fields, fm[1]) {
				continue
			}
			c.fields = append(c.fields, fm[1])
			c.annot[fm[1]] = ann
		}
		out = append(out, c)
		ln = end - 1
	}
	return out
}

var keywords = map[string]bool{"if": true, "elif": true, "else": true, "try": true, "except": true, "finally": true, "for": true, "while": true, "with": true, "match": true, "case": true}

// classBases reads `class Name(A, b.B):` from the class statement at off:
// the last name of each base.
func classBases(f *file, off int) []string {
	i, _ := slices.BinarySearchFunc(f.toks, off, func(t token, off int) int { return t.start - off })
	if i+2 >= len(f.toks) || f.toks[i+2].text != "(" {
		return nil
	}
	args, _ := callArgs(f.toks, i+2)
	var bases []string
	for _, a := range args {
		if len(a) > 0 && a[len(a)-1].kind == 'i' {
			bases = append(bases, a[len(a)-1].text)
		}
	}
	return bases
}

// annotation is the text of a field's annotation: rest up to "=" at depth
// 0, continued on the next lines while brackets are open.
func annotation(rest string, next []string) string {
	var b strings.Builder
	depth := 0
	text := rest
	for n := 0; ; n++ {
		for _, c := range text {
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			case '=':
				if depth == 0 {
					return b.String()
				}
			}
			b.WriteRune(c)
		}
		if depth <= 0 || n >= len(next) {
			return b.String()
		}
		b.WriteByte(' ')
		text = next[n]
	}
}

// fieldsOf is every field of dataclass name, its dataclass bases' first
// (dataclass inheritance: a field a subclass declares again keeps its
// place), with the class that last declares each.
func (r *release) fieldsOf(name string) (fields []string, owner map[string]*class, err error) {
	c := r.classes[name]
	if c == nil {
		return nil, nil, fmt.Errorf("class %s is not in the pinned files", name)
	}
	if !c.dataclass {
		return nil, nil, fmt.Errorf("class %s is not a dataclass (decorators %v)", name, c.decorators)
	}
	owner = map[string]*class{}
	var bases []string
	for _, b := range c.bases {
		if b != "object" {
			bases = append(bases, b)
		}
	}
	if len(bases) > 1 {
		return nil, nil, fmt.Errorf("class %s has several bases %v: no rule orders their fields", name, bases)
	}
	if len(bases) == 1 {
		fields, owner, err = r.fieldsOf(bases[0])
		if err != nil {
			return nil, nil, fmt.Errorf("base of %s: %v", name, err)
		}
	}
	for _, f := range c.fields {
		if owner[f] == nil {
			fields = append(fields, f)
		}
		owner[f] = c
	}
	return fields, owner, nil
}

// typeMembers are the members of a type annotation as get_kwargs sees
// them: Optional[X] is X and None, Union[…] and X | Y their members,
// Annotated[X, …] X's; parentheses and quotes are dropped.
func typeMembers(ann string) []string {
	ann = strings.Join(strings.Fields(ann), "")
	for len(ann) > 1 && ann[0] == '(' && closing(ann, 0) == len(ann)-1 {
		ann = ann[1 : len(ann)-1]
	}
	ann = strings.Trim(ann, `"'`)
	parts := splitTop(ann, '|')
	if len(parts) > 1 {
		var out []string
		for _, p := range parts {
			out = append(out, typeMembers(p)...)
		}
		return out
	}
	for _, wrap := range []string{"Optional", "typing.Optional", "Union", "typing.Union", "Annotated", "typing.Annotated"} {
		if !strings.HasPrefix(ann, wrap+"[") || closing(ann, len(wrap)) != len(ann)-1 {
			continue
		}
		args := splitTop(ann[len(wrap)+1:len(ann)-1], ',')
		switch strings.TrimPrefix(wrap, "typing.") {
		case "Optional":
			return append(typeMembers(args[0]), "None")
		case "Annotated":
			return typeMembers(args[0])
		}
		var out []string
		for _, a := range args {
			out = append(out, typeMembers(a)...)
		}
		return out
	}
	return []string{ann}
}

// closing is the index of the bracket closing the one at open.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func splitTop(s string, sep byte) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[from:i])
				from = i + 1
			}
		}
	}
	return append(out, s[from:])
}

// boolKwargs reports whether get_kwargs gives a field of this annotation
// BooleanOptionalAction: bool is one of its members, and, where the
// release's get_kwargs has that exception, they are not exactly bool, str
// and None.
func (r *release) boolKwargs(ann string) bool {
	if !r.boolAction {
		return false
	}
	members := typeMembers(ann)
	if !slices.Contains(members, "bool") {
		return false
	}
	if r.boolStrNone {
		set := map[string]bool{}
		for _, m := range members {
			set[m] = true
		}
		if len(set) == 3 && set["bool"] && set["str"] && set["None"] {
			return false
		}
	}
	return true
}

// negatable reports whether a field registered with its get_kwargs
// kwargs under key gets "--no-": its annotation says bool (boolKwargs),
// unless a pinned file assigns the key another action.
func (r *release) negatable(key, ann string) bool {
	if a, ok := r.actions[key]; ok {
		return strings.HasSuffix(a, "BooleanOptionalAction")
	}
	return r.boolKwargs(ann)
}

// options derives the command-line options one Python file of the release
// registers, by the rules in the package comment.
func (r *release) options(f *file) (map[string]bool, error) {
	toks := f.toks
	out := map[string]bool{}
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind != 'i' || toks[i].text != "add_argument" || toks[i+1].text != "(" {
			continue
		}
		at := fmt.Sprintf("add_argument at line %d", f.line(toks[i].start))
		args, end := callArgs(toks, i+1)
		if len(args) == 0 {
			return nil, fmt.Errorf("%s has no arguments", at)
		}
		var names []string
		first := args[0]
		switch {
		case len(first) >= 1 && first[0].kind == 's' && !first[0].fstr:
			for _, a := range args {
				if !allStrings(a) {
					break
				}
				s := concat(a)
				if strings.HasPrefix(s, "-") {
					names = append(names, s)
				}
			}
			if len(names) == 0 {
				i = end
				continue // a positional argument such as model_tag
			}
		case isFString(first) || isStarName(first):
			// for key, value in X_kwargs.items(): add_argument([*extra,] f"--{key.replace('_', '-')}", **value)
			o, err := r.fieldLoop(f, i, args)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", at, err)
			}
			for k := range o {
				out[k] = true
			}
			i = end
			continue
		case len(first) == 1 && first[0].kind == 'i':
			lits, err := loopLiterals(toks[:i], first[0].text)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", at, err)
			}
			names = lits
		default:
			return nil, fmt.Errorf("%s: first argument is not a literal, a loop variable or the get_kwargs loop's f-string", at)
		}
		negatable := false
		hasAction, spread := false, false
		key := ""
		for _, a := range args {
			for k, t := range a {
				if t.kind == 'i' && t.text == "BooleanOptionalAction" {
					negatable = true
				}
				if k == 0 && t.kind == 'i' && t.text == "action" && len(a) > 1 && a[1].text == "=" {
					hasAction = true
				}
				if k == 0 && t.text == "*" && len(a) > 1 && a[1].text == "*" {
					spread = true
					// **X["key"] or **{**X["key"], …}
					for m := 2; m+2 < len(a); m++ {
						if a[m].text == "[" && a[m+1].kind == 's' && a[m+2].text == "]" {
							key = a[m+1].text
							break
						}
					}
				}
			}
		}
		if !negatable && !hasAction && spread {
			dest := ""
			for _, n := range names {
				if strings.HasPrefix(n, "--") {
					dest = strings.ReplaceAll(n[2:], "-", "_")
					break
				}
			}
			if key == "" {
				key = dest
			}
			for _, cls := range []string{"EngineArgs", "AsyncEngineArgs"} {
				if c := r.classes[cls]; c != nil && c.annot[dest] != "" {
					negatable = r.negatable(key, c.annot[dest])
					break
				}
			}
		}
		for _, n := range names {
			out[n] = true
			if negatable && strings.HasPrefix(n, "--") {
				out["--no-"+n[2:]] = true
			}
		}
		i = end
	}
	return out, nil
}

const fieldFString = "--{key.replace('_', '-')}"

func isFString(a []token) bool { return len(a) == 1 && a[0].kind == 's' && a[0].fstr }

func isStarName(a []token) bool {
	return len(a) == 2 && a[0].text == "*" && a[1].kind == 'i'
}

// fieldLoop reads `add_argument([*extra,] f"--{key.replace('_', '-')}",
// **value)` in a loop over get_kwargs(C).items(): the options of every
// field of the dataclasses it applies to.
func (r *release) fieldLoop(f *file, call int, args [][]token) (map[string]bool, error) {
	toks := f.toks
	var extra []string
	k := 0
	for ; k < len(args) && isStarName(args[k]); k++ {
		extra = append(extra, args[k][1].text)
	}
	if k >= len(args) || !isFString(args[k]) {
		return nil, fmt.Errorf("a starred argument is not followed by the get_kwargs loop's f-string")
	}
	if args[k][0].text != fieldFString {
		return nil, fmt.Errorf("unknown f-string %q", args[k][0].text)
	}
	if k+1 != len(args)-1 || len(args[k+1]) != 3 || args[k+1][0].text != "*" || args[k+1][1].text != "*" || args[k+1][2].kind != 'i' {
		return nil, fmt.Errorf("the f-string is not followed by one **value")
	}
	value := args[k+1][2].text
	def, cls, decos := r.enclosing(f, call)
	from := 0
	if def >= 0 {
		from = def
	}
	for _, x := range extra {
		if !assignsFlagsPop(toks[from:call], x, value) {
			return nil, fmt.Errorf("*%s is not bound by %s = %s.pop(\"flags\", [])", x, x, value)
		}
		if len(r.flags) > 0 {
			return nil, fmt.Errorf("*%s: a pinned file sets a \"flags\" key (%s): no rule reads a field's extra flags", x, strings.Join(r.flags, ", "))
		}
	}
	arg := lastGetKwargs(toks[from:call])
	var targets []string
	switch arg {
	case "":
		return nil, fmt.Errorf("no get_kwargs(…) before the f-string loop")
	case "cls":
		if cls == nil || toks[def+1].text != "add_cli_args" || !slices.Contains(decos, "classmethod") {
			return nil, fmt.Errorf("get_kwargs(cls) outside a @classmethod add_cli_args")
		}
		targets = r.parserClasses(cls.name)
		if len(targets) == 0 {
			return nil, fmt.Errorf("make_arg_parser calls no add_cli_args that is %s.add_cli_args", cls.name)
		}
	default:
		targets = []string{arg}
	}
	out := map[string]bool{}
	for _, t := range targets {
		fields, owner, err := r.fieldsOf(t)
		if err != nil {
			return nil, fmt.Errorf("get_kwargs(%s): %v", arg, err)
		}
		if len(fields) == 0 {
			return nil, fmt.Errorf("get_kwargs(%s): %s has no fields", arg, t)
		}
		for _, fl := range fields {
			name := "--" + strings.ReplaceAll(fl, "_", "-")
			out[name] = true
			if r.negatable(fl, owner[fl].annot[fl]) {
				out["--no-"+name[2:]] = true
			}
		}
	}
	return out, nil
}

// enclosing finds the def enclosing the token at call: the index of its
// `def` token (-1 at module level), the class it is a method of, and its
// decorators.
func (r *release) enclosing(f *file, call int) (int, *class, []string) {
	col := func(off int) int { return off - (strings.LastIndexByte(f.src[:off], '\n') + 1) }
	// the statement's indentation: the first token of the call's line
	lineStart := strings.LastIndexByte(f.src[:f.toks[call].start], '\n') + 1
	indent := 0
	for lineStart+indent < len(f.src) && f.src[lineStart+indent] == ' ' {
		indent++
	}
	for j := call - 1; j >= 0; j-- {
		t := f.toks[j]
		if t.kind != 'i' || t.text != "def" || col(t.start) >= indent || j+1 >= len(f.toks) {
			continue
		}
		if !encloses(f, t.start, lineStart) {
			continue // a def whose body ended before the call
		}
		var cls *class
		for _, c := range r.classes {
			if c.file == f && c.start <= t.start && t.start < c.end {
				cls = c
			}
		}
		if cls == nil || col(t.start) != 4 {
			return j, nil, nil
		}
		return j, cls, cls.methods[f.toks[j+1].text]
	}
	return -1, nil, nil
}

// encloses reports whether the def at off still encloses the line that
// starts at line: no line between them, outside strings, is indented as
// little as the def.
func encloses(f *file, off, line int) bool {
	defLine := strings.LastIndexByte(f.src[:off], '\n') + 1
	indent := off - defLine
	for l := strings.IndexByte(f.src[off:], '\n') + off + 1; l < line; {
		nl := strings.IndexByte(f.src[l:], '\n')
		if nl < 0 {
			break
		}
		text := f.src[l : l+nl]
		if strings.TrimSpace(text) != "" && !strings.HasPrefix(strings.TrimSpace(text), "#") && !f.inString(l) {
			n := len(text) - len(strings.TrimLeft(text, " "))
			if n <= indent && !strings.HasPrefix(strings.TrimSpace(text), ")") {
				return false
			}
		}
		l += nl + 1
	}
	return true
}

// assignsFlagsPop reports whether toks hold `x = value.pop("flags", [])`.
func assignsFlagsPop(toks []token, x, value string) bool {
	for j := 0; j+4 < len(toks); j++ {
		if toks[j].text == x && toks[j+1].text == "=" && toks[j+2].text == value && toks[j+3].text == "." && toks[j+4].text == "pop" &&
			j+6 < len(toks) && toks[j+6].text == "flags" && isFlagsPop(toks, j+6) {
			return true
		}
	}
	return false
}

// parserClasses is every class C whose `C.add_cli_args(` a pinned file's
// make_arg_parser calls and whose add_cli_args is base's: C is base, or
// inherits it from base without overriding it.
func (r *release) parserClasses(base string) []string {
	var out []string
	for _, f := range r.files {
		lo, hi := funcBody(f, "make_arg_parser")
		if lo < 0 {
			continue
		}
		t := f.toks
		for j := 0; j+3 < len(t); j++ {
			if t[j].start < lo || t[j].start >= hi || t[j].kind != 'i' || t[j+1].text != "." || t[j+2].text != "add_cli_args" || t[j+3].text != "(" {
				continue
			}
			if r.methodOwner(t[j].text, "add_cli_args") == base && !slices.Contains(out, t[j].text) {
				out = append(out, t[j].text)
			}
		}
	}
	return out
}

// methodOwner is the class among name and its bases (in the pinned
// files) that defines method, "" when none does.
func (r *release) methodOwner(name, method string) string {
	for seen := 0; name != "" && seen < 32; seen++ {
		c := r.classes[name]
		if c == nil {
			return ""
		}
		if _, ok := c.methods[method]; ok {
			return name
		}
		next := ""
		for _, b := range c.bases {
			if b != "object" {
				next = b
				break
			}
		}
		name = next
	}
	return ""
}

// funcBody is the byte range of the body of the top-level `def name(`.
func funcBody(f *file, name string) (int, int) {
	re := regexp.MustCompile(`(?m)^def ` + name + `\(`)
	loc := re.FindStringIndex(f.src)
	if loc == nil {
		return -1, -1
	}
	rest := f.src[loc[1]:]
	off := loc[1]
	for {
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return loc[0], len(f.src)
		}
		off += nl + 1
		rest = rest[nl+1:]
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' && rest[0] != '#' && rest[0] != ')' && !f.inString(off) {
			return loc[0], off
		}
	}
}

// callArgs splits the arguments of the call whose "(" is toks[open] at
// top-level commas; end is the index of the closing ")".
func callArgs(toks []token, open int) ([][]token, int) {
	var args [][]token
	var cur []token
	depth := 0
	for j := open; j < len(toks); j++ {
		t := toks[j]
		if t.kind == 'p' {
			switch t.text {
			case "(", "[", "{":
				depth++
				if depth == 1 {
					continue
				}
			case ")", "]", "}":
				depth--
				if depth == 0 {
					if len(cur) > 0 {
						args = append(args, cur)
					}
					return args, j
				}
			case ",":
				if depth == 1 {
					args = append(args, cur)
					cur = nil
					continue
				}
			}
		}
		cur = append(cur, t)
	}
	return args, len(toks) - 1
}

func allStrings(a []token) bool {
	for _, t := range a {
		if t.kind != 's' || t.fstr {
			return false
		}
	}
	return len(a) > 0
}

func concat(a []token) string {
	var b strings.Builder
	for _, t := range a {
		b.WriteString(t.text)
	}
	return b.String()
}

// lastGetKwargs is X of the last get_kwargs(X) in toks.
func lastGetKwargs(toks []token) string {
	for j := len(toks) - 4; j >= 0; j-- {
		if toks[j].kind == 'i' && toks[j].text == "get_kwargs" && toks[j+1].text == "(" && toks[j+2].kind == 'i' && toks[j+3].text == ")" {
			return toks[j+2].text
		}
	}
	return ""
}

// loopLiterals reads `for NAME[, …] in [("--a", …), …]:`, the nearest loop
// before the call that binds name, and returns the list's option strings.
func loopLiterals(toks []token, name string) ([]string, error) {
	for j := len(toks) - 1; j >= 0; j-- {
		if toks[j].kind != 'i' || toks[j].text != "for" {
			continue
		}
		k := j + 1
		bound := false
		for ; k < len(toks) && (toks[k].kind != 'i' || toks[k].text != "in"); k++ {
			if toks[k].kind == 'i' && toks[k].text == name {
				bound = true
			}
		}
		if !bound {
			continue
		}
		if k+1 >= len(toks) || toks[k+1].text != "[" {
			return nil, fmt.Errorf("the loop binding %s does not iterate over a literal list", name)
		}
		var lits []string
		depth := 0
		for m := k + 1; m < len(toks); m++ {
			if toks[m].kind == 'p' {
				switch toks[m].text {
				case "[", "(":
					depth++
				case "]", ")":
					depth--
				}
			}
			if toks[m].kind == 's' && strings.HasPrefix(toks[m].text, "-") {
				lits = append(lits, toks[m].text)
			}
			if depth == 0 {
				break
			}
		}
		if len(lits) == 0 {
			return nil, fmt.Errorf("the loop binding %s lists no option strings", name)
		}
		return lits, nil
	}
	return nil, fmt.Errorf("no loop binds %s", name)
}
