// Package nearest suggests the known name a user probably meant, for
// errors such as "unknown kind "ModelDeploment"; did you mean
// "ModelDeployment"?".
package nearest

import (
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Name returns the name among known that word is closest to, ignoring
// case, when it is close enough to be a typo: at most a third of the
// word's length in edits (at least 2). ok is false when nothing is.
func Name(word string, known []string) (name string, ok bool) {
	best, bestDist := "", -1
	lw := strings.ToLower(word)
	for _, k := range known {
		d := levenshtein.ComputeDistance(lw, strings.ToLower(k))
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	limit := max(2, len(word)/3)
	return best, bestDist >= 0 && bestDist <= limit
}

// Suggestion is "; did you mean "NAME"?" for the nearest known name, or ""
// when none is near.
func Suggestion(word string, known []string) string {
	if name, ok := Name(word, known); ok {
		return `; did you mean "` + name + `"?`
	}
	return ""
}

// Closest returns up to n names among known, closest to word first
// (ignoring case; ties in name order), however far they are: for a list of
// suggestions after "no such name".
func Closest(word string, known []string, n int) []string {
	lw := strings.ToLower(word)
	sorted := append([]string(nil), known...)
	dist := make(map[string]int, len(known))
	for _, k := range sorted {
		dist[k] = levenshtein.ComputeDistance(lw, strings.ToLower(k))
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if dist[sorted[i]] != dist[sorted[j]] {
			return dist[sorted[i]] < dist[sorted[j]]
		}
		return sorted[i] < sorted[j]
	})
	return sorted[:min(n, len(sorted))]
}
