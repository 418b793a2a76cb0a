// Command gendocs regenerates the generated parts of docs/: the
// compatibility matrix in capability-file.md, the field table of
// model-reference.md, the command reference of cli.md and the warning
// codes of troubleshooting.md, each between
// `<!-- NAME:begin -->` and `<!-- NAME:end -->` markers, so the pages
// publish what the code does. `make docs` runs it; with -check it changes
// nothing and fails when a page is stale (its test does the same).
//
// Usage: go run ./hack/gendocs [-check] [-root DIR]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
)

// section is one generated part of a page.
type section struct {
	file, marker string
	generate     func() (string, error)
}

var sections = []section{
	{"docs/capability-file.md", "matrix", func() (string, error) { return capabilities.MatrixMarkdown(), nil }},
	{"docs/model-reference.md", "fields", modelReference},
	{"docs/cli.md", "commands", cliReference},
	{"docs/troubleshooting.md", "codes", warningCodes},
	{"docs/will-it-run.md", "vllm-releases", vllmReleases},
	{"docs/will-it-run.md", "gpus", gpuTable},
	{"docs/will-it-run.md", "calibration", calibration},
}

// warningCodes is the table of warning codes, from diag.Codes.
func warningCodes() (string, error) {
	var b strings.Builder
	b.WriteString("| code | warns when |\n|---|---|\n")
	for _, c := range diag.Codes {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.Code, c.About)
	}
	return b.String(), nil
}

func main() {
	check := flag.Bool("check", false, "change nothing; fail when a page is stale")
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	stale, err := update(*root, !*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
	if *check && len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "gendocs: stale: %s; run `make docs`\n", strings.Join(stale, ", "))
		os.Exit(1)
	}
}

// update regenerates every section and returns the files that changed
// (write) or would change.
func update(root string, write bool) ([]string, error) {
	calibrationRoot = root
	pages := map[string]string{}
	var changed []string
	for _, s := range sections {
		path := filepath.Join(root, s.file)
		page, ok := pages[path]
		if !ok {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			page = string(data)
		}
		body, err := s.generate()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
		next, err := replaceSection(page, s.marker, body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
		pages[path] = next
		if next != page {
			changed = append(changed, s.file)
		}
	}
	if write {
		for path, page := range pages {
			if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
				return nil, err
			}
		}
	}
	return changed, nil
}

// replaceSection puts body between the marker's begin and end comments.
func replaceSection(page, marker, body string) (string, error) {
	begin, end := "<!-- "+marker+":begin -->\n", "<!-- "+marker+":end -->"
	i, j := strings.Index(page, begin), strings.Index(page, end)
	if i < 0 || j < i {
		return "", errors.New("no " + strings.TrimSpace(begin) + " ... " + end + " markers")
	}
	return page[:i+len(begin)] + body + page[j:], nil
}
