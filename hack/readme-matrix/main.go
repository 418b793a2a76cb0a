// Command readme-matrix replaces the compatibility matrix in a Markdown
// file (between <!-- matrix:begin --> and <!-- matrix:end -->) with the one
// package capabilities builds from the catalogue it enforces, the table
// `airunway-render version --markdown` prints, so the documentation
// publishes what the code checks. Usage: go run ./hack/readme-matrix FILE.md
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/airunway-render/airunway-render/capabilities"
)

const begin, end = "<!-- matrix:begin -->\n", "<!-- matrix:end -->"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readme-matrix FILE.md")
		os.Exit(1)
	}
	doc, err := os.ReadFile(os.Args[1])
	check(err)
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		check(fmt.Errorf("%s has no %q ... %q markers", os.Args[1], strings.TrimSpace(begin), end))
	}
	out := s[:i+len(begin)] + capabilities.MatrixMarkdown() + s[j:]
	check(os.WriteFile(os.Args[1], []byte(out), 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "readme-matrix:", err)
		os.Exit(1)
	}
}
