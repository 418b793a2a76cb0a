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
	kind  byte // 'i' identifier, 's' string, 'p' punctuation
	text  string
	fstr  bool
	start int
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
				toks = append(toks, token{kind: 's', text: s, fstr: strings.ContainsAny(strings.ToLower(word), "f"), start: i})
				i = end
				continue
			}
			toks = append(toks, token{kind: 'i', text: word, start: i})
			i = j
		case c == '"' || c == '\'':
			s, end, err := readString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: 's', text: s, start: i})
			i = end
		case c >= '0' && c <= '9':
			for i < len(src) && (isIdentPart(src[i]) || src[i] == '.') {
				i++
			}
		default:
			toks = append(toks, token{kind: 'p', text: string(c), start: i})
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

// options derives the command-line options one Python file registers, by
// the rules in the package comment. dataclasses maps each dataclass field
// of the release's files to whether its annotation names bool.
func options(src string, boolField map[string]bool, fields map[string][]string) (map[string]bool, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind != 'i' || toks[i].text != "add_argument" || toks[i+1].text != "(" {
			continue
		}
		args, end := callArgs(toks, i+1)
		if len(args) == 0 {
			return nil, fmt.Errorf("add_argument at byte %d has no arguments", toks[i].start)
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
				continue // a positional argument such as model_tag
			}
		case len(first) == 1 && first[0].kind == 's' && first[0].fstr:
			// for key, value in X_kwargs.items(): add_argument(f"--{key.replace('_', '-')}", **value)
			if first[0].text != "--{key.replace('_', '-')}" {
				return nil, fmt.Errorf("add_argument at byte %d: unknown f-string %q", toks[i].start, first[0].text)
			}
			cls := lastGetKwargs(toks[:i])
			if cls == "" || len(fields[cls]) == 0 {
				return nil, fmt.Errorf("add_argument at byte %d: no dataclass for the f-string loop (get_kwargs(%s))", toks[i].start, cls)
			}
			for _, f := range fields[cls] {
				name := "--" + strings.ReplaceAll(f, "_", "-")
				out[name] = true
				if boolField[cls+"."+f] {
					out["--no-"+strings.ReplaceAll(f, "_", "-")] = true
				}
			}
			i = end
			continue
		case len(first) == 1 && first[0].kind == 'i':
			lits, err := loopLiterals(toks[:i], first[0].text)
			if err != nil {
				return nil, fmt.Errorf("add_argument at byte %d: %v", toks[i].start, err)
			}
			names = lits
		default:
			return nil, fmt.Errorf("add_argument at byte %d: first argument is not a literal, a loop variable or the FrontendArgs f-string", toks[i].start)
		}
		negatable := false
		hasAction, spread := false, false
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
			negatable = boolField["EngineArgs."+dest] || boolField["AsyncEngineArgs."+dest]
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

// lastGetKwargs is X of the last get_kwargs(X) before the call.
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
			switch toks[m].text {
			case "[", "(":
				depth++
			case "]", ")":
				depth--
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

var classRe = regexp.MustCompile(`(?m)^class (\w+)\b[^\n]*:\s*$`)
var fieldRe = regexp.MustCompile(`^    ([A-Za-z_]\w*)\s*:(.*)$`)

// dataclassFields reads the fields of every top-level class decorated
// @dataclass: `name: annotation [= default]` at the class's first
// indentation level, in order, and whether the annotation (up to the
// default's "=" at bracket depth 0, over several lines if need be) names
// bool.
func dataclassFields(src string, fields map[string][]string, boolField map[string]bool) {
	lines := strings.Split(src, "\n")
	for _, m := range classRe.FindAllStringSubmatchIndex(src, -1) {
		cls := src[m[2]:m[3]]
		startLine := strings.Count(src[:m[0]], "\n")
		isDataclass := false
		for ln := startLine - 1; ln >= 0 && ln >= startLine-3; ln-- {
			if strings.HasPrefix(lines[ln], "@dataclass") {
				isDataclass = true
			}
		}
		if !isDataclass {
			continue
		}
		inDoc := false
		for ln := startLine + 1; ln < len(lines); ln++ {
			l := lines[ln]
			if l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "#") {
				break
			}
			if !inDoc && (strings.HasPrefix(l, "    def ") || strings.HasPrefix(l, "    @")) {
				break
			}
			quotes := strings.Count(l, `"""`) + strings.Count(l, "'''")
			wasDoc := inDoc
			if quotes%2 == 1 {
				inDoc = !inDoc
			}
			if wasDoc || quotes > 0 {
				continue
			}
			fm := fieldRe.FindStringSubmatch(l)
			if fm == nil {
				continue
			}
			ann := annotation(fm[2], lines[ln+1:])
			if slices.Contains(fields[cls], fm[1]) {
				continue
			}
			fields[cls] = append(fields[cls], fm[1])
			if boolRe.MatchString(ann) {
				boolField[cls+"."+fm[1]] = true
			}
		}
	}
}

var boolRe = regexp.MustCompile(`\bbool\b`)

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
		text = next[n]
	}
}
