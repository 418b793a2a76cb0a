package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const repoRoot = "../.."

// TestDocsAreCurrent fails when a generated part of docs/ no longer says
// what the code does.
func TestDocsAreCurrent(t *testing.T) {
	stale, err := update(repoRoot, false)
	require.NoError(t, err)
	require.Empty(t, stale, "generated docs are stale: run `make docs`")
}

// TestFieldsCoverSchema keeps the field reference complete: every field of
// the CRD has a row, and every row is a field of the CRD.
func TestFieldsCoverSchema(t *testing.T) {
	schema, err := readSchema()
	require.NoError(t, err)
	var rows []string
	for _, f := range fields {
		rows = append(rows, f.path)
	}
	want := schemaPaths(schema, "")
	slices.Sort(want)
	slices.Sort(rows)
	require.Equal(t, want, rows)
}

// TestReplaceSectionNeedsMarkers: a page without its markers is an error,
// not a page silently left as it was.
func TestReplaceSectionNeedsMarkers(t *testing.T) {
	_, err := replaceSection("# page\n", "fields", "x")
	require.ErrorContains(t, err, "<!-- fields:begin -->")
	got, err := replaceSection("a\n<!-- m:begin -->\nold\n<!-- m:end -->\nb\n", "m", "new\n")
	require.NoError(t, err)
	require.Equal(t, "a\n<!-- m:begin -->\nnew\n<!-- m:end -->\nb\n", got)
}

// A wrong limit is caught when the page is generated: the generator
// renders a value past it and must see every provider refuse it.
func TestCheckOverCatchesAWrongLimit(t *testing.T) {
	f := field{path: "scaling.replicas", limit: "at most 64", over: `{scaling: {replicas: 33}}`}
	require.NoError(t, checkOver(f, providerNames()))
	f.over = `{scaling: {replicas: 32}}`
	require.ErrorContains(t, checkOver(f, providerNames()), `the reference says "at most 64", but dynamo renders`)
}

var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks checks every relative link of README.md and docs/*.md: the
// file exists, and an anchor names a heading of it. It also checks that
// the README links every page of docs/.
func TestLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	readme := filepath.Join(repoRoot, "README.md")
	for _, page := range append(pages, readme) {
		text := readFile(t, page)
		for _, m := range markdownLink.FindAllStringSubmatch(withoutCode(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
				_, err := os.Stat(dest)
				require.NoError(t, err, "%s links %q", page, target)
			}
			if anchor != "" {
				require.Contains(t, anchors(readFile(t, dest)), anchor, "%s links %q: no such heading", page, target)
			}
		}
	}
	readmeText := readFile(t, readme)
	for _, page := range pages {
		require.Contains(t, readmeText, "(docs/"+filepath.Base(page)+")", "README.md must link %s", page)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(data)
}

// withoutCode drops fenced code blocks, whose brackets are not links.
func withoutCode(md string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// anchors lists the GitHub anchors of a page's headings.
func anchors(md string) []string {
	var out []string
	seen := map[string]int{}
	for _, line := range strings.Split(withoutCode(md), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		a := githubAnchor(strings.TrimLeft(line, "# "))
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+string(rune('0'+n)))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces to
// dashes, punctuation other than - and _ dropped.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '…' && r != '→' && r != '—':
			b.WriteRune(r)
		}
	}
	return b.String()
}
