// Command readme-matrix replaces the compatibility matrix in README.md
// (between <!-- matrix:begin --> and <!-- matrix:end -->) with the table
// `airunway-render version --markdown` prints, so the README publishes what
// the code enforces. Usage: go run ./hack/readme-matrix README.md MATRIX.md
package main

import (
	"fmt"
	"os"
	"strings"
)

const begin, end = "<!-- matrix:begin -->\n", "<!-- matrix:end -->"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: readme-matrix README.md MATRIX.md")
		os.Exit(1)
	}
	readme, err := os.ReadFile(os.Args[1])
	check(err)
	matrix, err := os.ReadFile(os.Args[2])
	check(err)
	s := string(readme)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		check(fmt.Errorf("%s has no %q ... %q markers", os.Args[1], strings.TrimSpace(begin), end))
	}
	out := s[:i+len(begin)] + string(matrix) + s[j:]
	check(os.WriteFile(os.Args[1], []byte(out), 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "readme-matrix:", err)
		os.Exit(1)
	}
}
