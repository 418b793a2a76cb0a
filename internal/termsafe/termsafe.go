// Package termsafe makes text from a repository safe to print on a
// terminal or in a CI log.
//
// Names, namespaces, file paths and the errors kustomize builds from them
// come from whoever wrote the commit. Printed raw, an escape sequence in a
// resource path (`\x1b[2J`) clears a reviewer's terminal, a line break
// starts a line that looks like the tool's own (`[error] …` or
// `::error::` for GitHub Actions), and a bidirectional override reorders
// what the reader sees. Escape writes each such character as a Go escape,
// so that what is printed is one line, in the order it was written.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character (C0 but the tab, DEL,
// C1), every bidirectional or invisible formatting character and every
// byte that is not UTF-8 written as a Go escape (`\x1b`, `\n`, `\u202e`,
// `\xff`). Text without them is returned as it is.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unsafe(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\n' || r == '\r' || unsafe(r) {
			return true
		}
		i += size
	}
	return false
}

// unsafe reports a character a terminal acts on or a reader cannot see.
func unsafe(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t'
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x200b && r <= 0x200f, // zero-width spaces and joiners, marks
		r >= 0x202a && r <= 0x202e, // embeddings and overrides
		r >= 0x2066 && r <= 0x2069, // isolates
		r == 0x2028, r == 0x2029,   // line and paragraph separators
		r == 0xfeff: // zero-width no-break space
		return true
	}
	return false
}
