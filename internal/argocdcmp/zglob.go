package argocdcmp

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// This file re-implements the behaviour of github.com/mattn/go-zglob v0.0.6
// Glob (the version pinned by Argo CD v3.6.1's go.mod), which
// Service.matchRepository uses for discover.find.glob. Only what decides
// "is there at least one match, or an error" matters to Argo CD, so match
// order and zglob's directory-pruning optimisation are not reproduced.
//
// Behaviour reproduced (facts read from zglob.go / fastwalk in v0.0.6):
//   - the walk root is the pattern's leading path segments up to (not
//     including) the first segment containing '*' or '{'; '[' classes do not
//     end the static prefix, so a class before the first '*' is taken as a
//     literal directory name;
//   - with no '*' or '{' anywhere, the pattern is simply os.Stat'ed and a
//     missing file is an error (os.ErrNotExist), not "no match";
//   - the whole cleaned pattern becomes an anchored regexp: "**/" matches
//     zero or more directories, '*' (including a trailing "**") matches
//     within one segment, "[...]" is copied as a regexp class, "{a,b}" is an
//     alternation, "!(abc)" excludes those characters, "\x" escapes x, every
//     other character outside [0-9A-Za-z/] is literal (so '?' is literal);
//   - a segment that is exactly "$NAME" or "$(NAME)" is replaced from the
//     environment (zglob reads its own process env: the sidecar's), and a
//     leading "~" by $HOME;
//   - the walk does not follow symlinks; directories, symlinks and other
//     entries whose full path matches count as matches; the root itself
//     never matches; a missing root or an unreadable directory is an error.

var zglobEnvSegment = regexp.MustCompile(`^(\$[a-zA-Z][a-zA-Z0-9_]+|\$\([a-zA-Z][a-zA-Z0-9_]+\))$`)

type zglobPattern struct {
	root string
	re   *regexp.Regexp
}

func compileZGlob(pattern string, getenv func(string) string) (*zglobPattern, error) {
	globmask, root := "", ""
	for n, seg := range strings.Split(pattern, "/") {
		if root == "" && strings.ContainsAny(seg, "*{") {
			if globmask == "" {
				root = "."
			} else {
				root = globmask
			}
		}
		if n == 0 && seg == "~" {
			seg = getenv("HOME")
		}
		if zglobEnvSegment.MatchString(seg) {
			seg = strings.Trim(strings.Trim(getenv(seg[1:]), "()"), `"`)
		}
		globmask = path.Join(globmask, seg)
		if n == 0 && globmask == "" {
			globmask = "/"
		}
	}
	if root == "" {
		return &zglobPattern{}, nil
	}
	if globmask == "" {
		globmask = "."
	}
	globmask = path.Clean(globmask)

	literal := func(c rune) string {
		if c == '/' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c > 255 {
			return string(c)
		}
		return fmt.Sprintf("[\\x%02X]", c)
	}
	cc := []rune(globmask)
	var re strings.Builder
	for i := 0; i < len(cc); i++ {
		switch {
		case i < len(cc)-2 && cc[i] == '\\':
			i++
			fmt.Fprintf(&re, "[\\x%02X]", cc[i])
		case cc[i] == '*':
			if i < len(cc)-2 && cc[i+1] == '*' && cc[i+2] == '/' {
				re.WriteString("(.*/)?")
				i += 2
			} else {
				re.WriteString("[^/]*")
			}
		case cc[i] == '[':
			var class strings.Builder
			for j := i + 1; j < len(cc); j++ {
				if cc[j] == ']' {
					i = j
					break
				}
				class.WriteRune(cc[j])
			}
			if class.Len() > 0 {
				re.WriteString("[" + class.String() + "]")
			}
		case cc[i] == '{':
			var alt strings.Builder
			for j := i + 1; j < len(cc); j++ {
				if cc[j] == '}' {
					i = j
					break
				}
				if cc[j] == ',' {
					alt.WriteByte('|')
				} else {
					alt.WriteString(literal(cc[j]))
				}
			}
			if alt.Len() > 0 {
				re.WriteString("(" + alt.String() + ")")
				continue
			}
			re.WriteString(literal(cc[i]))
		case i < len(cc)-1 && cc[i] == '!' && cc[i+1] == '(':
			i++
			var neg strings.Builder
			for j := i + 1; j < len(cc); j++ {
				if cc[j] == ')' {
					i = j
					break
				}
				fmt.Fprintf(&neg, "[^\\x%02X/]*", cc[j])
			}
			if neg.Len() > 0 {
				// zglob would also move the walk root here when no static
				// prefix has been seen; Argo CD's patterns are always
				// absolute, so that case cannot arise.
				re.WriteString(neg.String())
				continue
			}
			re.WriteString(literal(cc[i]))
		default:
			re.WriteString(literal(cc[i]))
		}
	}
	mask := re.String()
	if strings.HasSuffix(mask, "/") {
		mask += "[^/]*"
	}
	compiled, err := regexp.Compile("^" + mask + "$")
	if err != nil {
		return nil, err
	}
	return &zglobPattern{root: filepath.Clean(root), re: compiled}, nil
}

// zglobMatches returns what zglob.Glob(pattern) would return, up to order.
func zglobMatches(pattern string, getenv func(string) string) ([]string, error) {
	z, err := compileZGlob(pattern, getenv)
	if err != nil {
		return nil, err
	}
	if z.root == "" {
		if _, err := os.Stat(pattern); err != nil {
			return nil, os.ErrNotExist
		}
		return []string{pattern}, nil
	}
	st, err := os.Stat(z.root)
	if err != nil {
		return nil, err
	}
	var matches []string
	if !st.IsDir() {
		if z.re.MatchString(filepath.ToSlash(z.root)) {
			matches = append(matches, z.root)
		}
		return matches, nil
	}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := dir + string(os.PathSeparator) + e.Name()
			if z.re.MatchString(filepath.ToSlash(p)) {
				matches = append(matches, p)
			}
			if e.Type().IsDir() {
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(z.root); err != nil {
		return nil, err
	}
	return matches, nil
}
