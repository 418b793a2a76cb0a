package objdiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// unified is the unified diff of two texts with context lines around each
// change, as GNU diff and git print it, "" when they are equal.
//
// The edit script is go-udiff's (gopls' line diff as a module). Its own
// unified printer is not used: when it joins two nearby edits into one
// hunk it does not count the lines between them on the new side, so every
// later hunk header names a wrong new-file line (golang/go#81453, still
// open in gopls, and in go-udiff v0.4.1). The headers here are counted
// from the script, and TestUnifiedAppliesWithPatch holds them to GNU
// patch.
func unified(fromName, toName, a, b string, context int) string {
	script := lineScript(a, b)
	hunks := hunkRanges(script, context)
	if len(hunks) == 0 {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "--- %s\n+++ %s\n", fromName, toName)
	for _, h := range hunks {
		writeHunk(&s, script[h[0]:h[1]])
	}
	return s.String()
}

// step is one line of an edit script: kept, deleted from a, or inserted
// from b. aPos and bPos count the lines of a and b before it, which is what
// a hunk header needs.
type step struct {
	op         byte // ' ', '-' or '+'
	line       string
	aPos, bPos int
}

// lineScript turns go-udiff's edits (byte ranges of a, at line
// boundaries, each with its replacement) into one step per line, deletions
// before insertions as in git.
func lineScript(a, b string) []step {
	aLines := splitLines(a)
	// lineStart[i] is the byte offset of line i of a.
	lineStart := make([]int, len(aLines)+1)
	for i, l := range aLines {
		lineStart[i+1] = lineStart[i] + len(l)
	}
	lineAt := func(offset int) int { return sort.SearchInts(lineStart, offset) }
	var script []step
	ai, bi := 0, 0
	keep := func(until int) {
		for ; ai < until; ai, bi = ai+1, bi+1 {
			script = append(script, step{' ', aLines[ai], ai, bi})
		}
	}
	for _, e := range udiff.Lines(a, b) {
		keep(lineAt(e.Start))
		for end := lineAt(e.End); ai < end; ai++ {
			script = append(script, step{'-', aLines[ai], ai, bi})
		}
		for _, l := range splitLines(e.New) {
			script = append(script, step{'+', l, ai, bi})
			bi++
		}
	}
	keep(len(aLines))
	return script
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

// hunkRanges groups the changes of a script into [start, end) ranges with
// up to context kept lines around them; changes closer than twice the
// context share a hunk, as in GNU diff.
func hunkRanges(script []step, context int) [][2]int {
	var hunks [][2]int
	for i := 0; i < len(script); i++ {
		if script[i].op == ' ' {
			continue
		}
		start := max(0, i-context)
		end := i + 1 // one past the last change of this hunk
		for j := end; j < len(script) && j < end+2*context+1; j++ {
			if script[j].op != ' ' {
				end = j + 1
			}
		}
		end = min(len(script), end+context)
		hunks = append(hunks, [2]int{start, end})
		i = end - 1
	}
	return hunks
}

func writeHunk(s *strings.Builder, h []step) {
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
