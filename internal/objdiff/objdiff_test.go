package objdiff

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"HEAD~1":      "`HEAD~1`",
		"a`b":         "``a`b``",
		"`x":          "`` `x ``",
		"main``fix":   "```main``fix```",
		"origin/main": "`origin/main`",
	} {
		require.Equal(t, want, Code(in), in)
	}
}

// TestUnifiedAppliesWithPatch holds the diffs to GNU patch: for texts that
// differ in many ways (lines changed, added and removed in runs, near and
// far from each other, a last line without a newline), applying our diff
// to the old text with `patch` must give the new text exactly, with no
// hunk found at an offset. patch places hunks by their old side; the new
// side's start, which go-udiff's own printer gets wrong (unified.go), is
// held by checkNewStarts.
func TestUnifiedAppliesWithPatch(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Fatalf("GNU patch must be installed (Debian package patch): %v", err)
	}
	rng := rand.New(rand.NewSource(20))
	dir := t.TempDir()
	for i := range 300 {
		a := randomText(rng, 1+rng.Intn(60))
		b := mutate(rng, a)
		d := unified("a", "b", a, b, Context)
		if a == b {
			require.Empty(t, d)
			continue
		}
		file := filepath.Join(dir, "text")
		require.NoError(t, os.WriteFile(file, []byte(a), 0o644))
		cmd := exec.Command("patch", "--no-backup-if-mismatch", "-F0", file)
		cmd.Stdin = strings.NewReader(d)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "case %d: patch failed:\n%s\ndiff:\n%s", i, out, d)
		require.NotContains(t, string(out), "offset", "case %d: a hunk header is off:\n%s\n%s", i, out, d)
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Equal(t, b, string(got), "case %d:\n%s", i, d)
		checkNewStarts(t, d)
	}
}

// checkNewStarts checks every hunk header of a diff: the new side starts
// where the old side does, moved by the lines the earlier hunks added and
// removed (an empty side names the line before it, as GNU diff does).
func checkNewStarts(t *testing.T, diff string) {
	t.Helper()
	shift := 0
	for _, h := range headers(diff) {
		var oldStart, oldLen, newStart, newLen int
		parse := func(r string) (int, int) {
			start, n := 0, 1
			if strings.Contains(r, ",") {
				_, err := fmt.Sscanf(r, "%d,%d", &start, &n)
				require.NoError(t, err, h)
			} else {
				_, err := fmt.Sscanf(r, "%d", &start)
				require.NoError(t, err, h)
			}
			if n == 0 {
				start++ // "5,0" is empty after line 5
			}
			return start, n
		}
		f := strings.Fields(h) // @@ -a,b +c,d @@
		oldStart, oldLen = parse(strings.TrimPrefix(f[1], "-"))
		newStart, newLen = parse(strings.TrimPrefix(f[2], "+"))
		require.Equal(t, oldStart+shift, newStart, "header %q: the new side must start at %d\n%s", h, oldStart+shift, diff)
		shift += newLen - oldLen
	}
}

// TestUnifiedHeadersMatchGNUDiff: the case where go-udiff's printer names
// the second hunk's new-file line two short (two edits joined into one
// hunk across two kept lines) has the headers GNU diff gives.
func TestUnifiedHeadersMatchGNUDiff(t *testing.T) {
	var a, b strings.Builder
	for i := 1; i <= 40; i++ {
		switch i {
		case 24:
			b.WriteString("changed\n")
		case 27, 28:
			// deleted in b
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
		fmt.Fprintf(&a, "line %d\n", i)
		if i == 37 {
			b.WriteString("added 1\nadded 2\n")
		}
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte(a.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b"), []byte(b.String()), 0o644))
	cmd := exec.Command("diff", "-u", "a", "b")
	cmd.Dir = dir
	gnu, _ := cmd.Output() // exit 1: the files differ
	require.NotEmpty(t, gnu)
	require.Equal(t, headers(string(gnu)), headers(unified("a", "b", a.String(), b.String(), Context)))
	require.Len(t, headers(string(gnu)), 2)
}

func headers(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "@@") {
			out = append(out, l)
		}
	}
	return out
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d %c\n", i, 'a'+rng.Intn(3))
	}
	return b.String()
}

// mutate changes, deletes and inserts runs of lines, and sometimes drops
// the last newline.
func mutate(rng *rand.Rand, s string) string {
	lines := splitLines(s)
	var out []string
	for i := 0; i < len(lines); i++ {
		switch rng.Intn(12) {
		case 0:
			out = append(out, "changed "+lines[i])
		case 1:
			i += rng.Intn(3) // delete a run
		case 2:
			for k := range 1 + rng.Intn(3) {
				out = append(out, fmt.Sprintf("inserted %d\n", k))
			}
			out = append(out, lines[i])
		default:
			out = append(out, lines[i])
		}
	}
	t := strings.Join(out, "")
	if rng.Intn(8) == 0 {
		t = strings.TrimSuffix(t, "\n")
	}
	return t
}

func TestCompareAndText(t *testing.T) {
	parse := func(docs ...string) []*yaml.RNode {
		var out []*yaml.RNode
		for _, d := range docs {
			out = append(out, yaml.MustParse(d))
		}
		return out
	}
	before := parse("apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ns}\nspec:\n  port: 80\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone, namespace: ns}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: ns}\n")
	after := parse("apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ns}\nspec:\n  port: 8000\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, namespace: ns}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: new, namespace: ns}\n")
	changes, err := Compare(before, after)
	require.NoError(t, err)
	r := &Result{Old: "main", New: "pr", Changes: changes}
	require.True(t, r.Differs())
	var ops bytes.Buffer
	for _, c := range changes {
		fmt.Fprintf(&ops, "%c %s\n", c.Op, c.ID())
	}
	require.Equal(t, "- ConfigMap/ns/gone\n+ ConfigMap/ns/new\n= ConfigMap/ns/same\n~ Service/ns/s\n", ops.String())
	text := r.Text()
	require.Contains(t, text, "--- main:Service/ns/s\n+++ pr:Service/ns/s\n@@ -2,4 +2,4 @@\n")
	require.Contains(t, text, "--- /dev/null\n+++ pr:ConfigMap/ns/new\n")
	require.True(t, strings.HasSuffix(text, "4 objects: 1 added, 1 changed, 1 removed, 1 unchanged\n"), text)
	require.Contains(t, r.Markdown(), "<details open><summary>changed Service/ns/s</summary>")
}
