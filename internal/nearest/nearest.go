// Package nearest suggests the known name a user probably meant, for
// errors such as "unknown kind "ModelDeploment"; did you mean
// "ModelDeployment"?".
package nearest

import (
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
