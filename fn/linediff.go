package fn

import (
	"fmt"
	"strings"
)

// A line diff small enough to read: Myers' O(ND) algorithm for a shortest
// edit script, and unified-diff hunks on top. The renderer's objects are a
// few hundred lines, so a textbook implementation is fast enough and keeps
// the module free of a diff dependency.

// edit is one line of an edit script: kept, deleted from a, or inserted
// from b. aPos and bPos count the lines of a and b before this one, which
// is what a hunk header needs.
type edit struct {
	op         byte // ' ', '-' or '+'
	line       string
	aPos, bPos int
}

// splitLines splits text after each newline, keeping the newline, so a
// missing newline at the end is a difference like any other.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns a shortest edit script turning a into b. Within a
// changed region, deletions come before insertions, as in git.
func diffLines(a, b []string) []edit {
	// Common prefix and suffix need no search; trimming them keeps the
	// quadratic part to the changed region.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for i := 0; i < pre; i++ {
		out = append(out, edit{' ', a[i], i, i})
	}
	for _, e := range myers(a[pre:len(a)-suf], b[pre:len(b)-suf]) {
		e.aPos += pre
		e.bPos += pre
		out = append(out, e)
	}
	for i := suf; i > 0; i-- {
		out = append(out, edit{' ', a[len(a)-i], len(a) - i, len(b) - i})
	}
	return out
}

// myers finds a shortest edit script. v[k] holds the furthest x reached on
// diagonal k = x - y; trace keeps, per edit distance d, the part of v that
// step d started from (diagonals -d..d), to walk the path back afterwards.
func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return trivial(a, b)
	}
	limit := n + m
	v := make([]int, 2*limit+3)
	off := limit + 1
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			x := v[off+k+1] // down from diagonal k+1: an insertion
			if k != -d && (k == d || v[off+k-1] >= v[off+k+1]) {
				x = v[off+k-1] + 1 // right from diagonal k-1: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b)
			}
		}
	}
	panic("unreachable: an edit script of length n+m always exists")
}

// backtrack walks from (n, m) back to (0, 0) through the snapshots.
func backtrack(trace [][]int, a, b []string) []edit {
	x, y := len(a), len(b)
	var rev []edit
	for d := len(trace) - 1; d > 0; d-- {
		at := func(k int) int { return trace[d][k+d] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, edit{' ', a[x], x, y})
		}
		if x == prevX {
			rev = append(rev, edit{'+', b[prevY], prevX, prevY})
		} else {
			rev = append(rev, edit{'-', a[prevX], prevX, prevY})
		}
		x, y = prevX, prevY
	}
	for x > 0 { // d = 0: the common start, x == y
		x, y = x-1, y-1
		rev = append(rev, edit{' ', a[x], x, y})
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// trivial is the edit script when one side is empty.
func trivial(a, b []string) []edit {
	var out []edit
	for i, l := range a {
		out = append(out, edit{'-', l, i, 0})
	}
	for i, l := range b {
		out = append(out, edit{'+', l, len(a), i})
	}
	return out
}

// unifiedDiff returns a unified diff of two texts with the given lines of
// context, headed by fromName and toName; "" when the texts are equal.
func unifiedDiff(fromName, toName, a, b string, context int) string {
	edits := diffLines(splitLines(a), splitLines(b))
	hunks := hunkRanges(edits, context)
	if len(hunks) == 0 {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "--- %s\n+++ %s\n", fromName, toName)
	for _, h := range hunks {
		writeHunk(&s, edits[h[0]:h[1]])
	}
	return s.String()
}

// hunkRanges groups the changes of an edit script into [start, end) ranges
// with up to context kept lines around them; changes closer than twice the
// context share a hunk, as in GNU diff.
func hunkRanges(edits []edit, context int) [][2]int {
	var hunks [][2]int
	for i := 0; i < len(edits); i++ {
		if edits[i].op == ' ' {
			continue
		}
		start := max(0, i-context)
		end := i + 1 // one past the last change of this hunk
		for j := end; j < len(edits) && j < end+2*context+1; j++ {
			if edits[j].op != ' ' {
				end = j + 1
			}
		}
		end = min(len(edits), end+context)
		hunks = append(hunks, [2]int{start, end})
		i = end - 1
	}
	return hunks
}

func writeHunk(s *strings.Builder, h []edit) {
	aLen, bLen := 0, 0
	for _, e := range h {
		if e.op != '+' {
			aLen++
		}
		if e.op != '-' {
			bLen++
		}
	}
	fmt.Fprintf(s, "@@ -%s +%s @@\n", hunkRange(h[0].aPos, aLen), hunkRange(h[0].bPos, bLen))
	for _, e := range h {
		s.WriteByte(e.op)
		s.WriteString(e.line)
		if !strings.HasSuffix(e.line, "\n") {
			s.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's line range the way GNU diff and git do: the
// length is left out when it is 1, and an empty range names the line
// before it.
func hunkRange(pos, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", pos)
	case 1:
		return fmt.Sprintf("%d", pos+1)
	}
	return fmt.Sprintf("%d,%d", pos+1, n)
}
