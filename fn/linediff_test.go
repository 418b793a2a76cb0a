package fn

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// editScript writes an edit editScript compactly: "=a" kept, "-a" deleted, "+a"
// inserted, separated by spaces.
func editScript(edits []edit) string {
	var parts []string
	for _, e := range edits {
		op := string(e.op)
		if e.op == ' ' {
			op = "="
		}
		parts = append(parts, op+e.line)
	}
	return strings.Join(parts, " ")
}

func TestDiffLines(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"both empty", "", "", ""},
		{"equal", "a b c", "a b c", "=a =b =c"},
		{"all inserted", "", "a b", "+a +b"},
		{"all deleted", "a b", "", "-a -b"},
		{"one replaced in the middle", "a b c", "a x c", "=a -b +x =c"},
		{"insert at the start", "b c", "a b c", "+a =b =c"},
		{"delete at the end", "a b c", "a b", "=a =b -c"},
		{"block replaced, deletions first", "a b c d", "a x y d", "=a -b -c +x +y =d"},
		{"repeated lines", "a a a", "a a", "=a =a -a"},
		{"moved line", "a b c", "b c a", "-a =b =c +a"},
		// The example of Myers' paper: 5 edits is the minimum.
		{"Myers' paper", "a b c a b b a", "c b a b a c", "-a -b =c +b =a =b -b =a +c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := strings.Fields(tc.a), strings.Fields(tc.b)
			got := diffLines(a, b)
			require.Equal(t, tc.want, editScript(got))
			requireScriptOf(t, a, b, got)
		})
	}
}

// TestDiffLinesIsMinimal checks random inputs against the LCS length
// computed by dynamic programming: a shortest editScript deletes and inserts
// exactly what the longest common subsequence leaves out.
func TestDiffLinesIsMinimal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 500; i++ {
		a, b := randomLines(r), randomLines(r)
		got := diffLines(a, b)
		requireScriptOf(t, a, b, got)
		changes := 0
		for _, e := range got {
			if e.op != ' ' {
				changes++
			}
		}
		require.Equal(t, len(a)+len(b)-2*lcsLen(a, b), changes, "a=%v b=%v editScript=%s", a, b, editScript(got))
	}
}

// requireScriptOf checks that the editScript turns a into b and that every
// edit's positions count the lines before it.
func requireScriptOf(t *testing.T, a, b []string, edits []edit) {
	t.Helper()
	var gotA, gotB []string
	for _, e := range edits {
		require.Equal(t, len(gotA), e.aPos, "aPos of %q in %s", e.line, editScript(edits))
		require.Equal(t, len(gotB), e.bPos, "bPos of %q in %s", e.line, editScript(edits))
		if e.op != '+' {
			gotA = append(gotA, e.line)
		}
		if e.op != '-' {
			gotB = append(gotB, e.line)
		}
	}
	require.Equal(t, fmt.Sprint(a), fmt.Sprint(gotA))
	require.Equal(t, fmt.Sprint(b), fmt.Sprint(gotB))
}

func randomLines(r *rand.Rand) []string {
	lines := make([]string, r.Intn(12))
	for i := range lines {
		lines[i] = string(rune('a' + r.Intn(4)))
	}
	return lines
}

func lcsLen(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// numberedLines returns lines "1\n" .. "n\n" with the given lines replaced.
func numberedLines(n int, replace map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := replace[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestUnifiedDiff(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{name: "equal", a: "a\nb\n", b: "a\nb\n", want: ""},
		{name: "both empty", want: ""},
		{name: "one line", a: "a\n", b: "b\n", want: "--- old\n+++ new\n@@ -1 +1 @@\n-a\n+b\n"},
		{
			name: "three lines of context",
			a:    numberedLines(10, nil), b: numberedLines(10, map[int]string{5: "five"}),
			want: "--- old\n+++ new\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
		},
		{
			name: "change at the start and end",
			a:    numberedLines(10, nil), b: numberedLines(10, map[int]string{1: "one", 10: "ten"}),
			want: "--- old\n+++ new\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n",
		},
		{
			name: "six kept lines between changes: one hunk",
			a:    numberedLines(12, nil), b: numberedLines(12, map[int]string{3: "x", 10: "y"}),
			want: "--- old\n+++ new\n@@ -1,12 +1,12 @@\n 1\n 2\n-3\n+x\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+y\n 11\n 12\n",
		},
		{
			name: "seven kept lines between changes: two hunks",
			a:    numberedLines(13, nil), b: numberedLines(13, map[int]string{3: "x", 11: "y"}),
			want: "--- old\n+++ new\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+x\n 4\n 5\n 6\n@@ -8,6 +8,6 @@\n 8\n 9\n 10\n-11\n+y\n 12\n 13\n",
		},
		{
			name: "added from nothing",
			a:    "", b: "a\nb\n",
			want: "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		{
			name: "removed entirely",
			a:    "a\nb\n", b: "",
			want: "--- old\n+++ new\n@@ -1,2 +0,0 @@\n-a\n-b\n",
		},
		{
			name: "pure insertion names the line before",
			a:    "a\nb\n", b: "a\nnew\nb\n",
			want: "--- old\n+++ new\n@@ -1,2 +1,3 @@\n a\n+new\n b\n",
		},
		{
			name: "missing newline at the end",
			a:    "a\nb", b: "a\nb\n",
			want: "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, unifiedDiff("old", "new", tc.a, tc.b, 3))
		})
	}
}
