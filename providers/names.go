package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxDerivedName is the longest name DerivedName returns: a DNS label,
// which a Service needs, and a Job too (its name becomes a pod label).
const MaxDerivedName = 63

// DerivedName joins a ModelDeployment's name and a suffix into the name of
// an object the renderer generates. A name that fits MaxDerivedName is kept
// as it is, as upstream names it. A longer one keeps as much of the base as
// fits, then 8 hex digits of the SHA-256 of the whole name, then the
// suffix: the same input always gives the same name, and two
// ModelDeployments whose names share a long prefix get different ones. Two
// objects that still end up with one name are refused by the renderer's
// collision check, so a clash is an error, never a silent overwrite.
func DerivedName(base, suffix string) string {
	name := base + suffix
	if len(name) <= MaxDerivedName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(sum[:4])
	keep := max(MaxDerivedName-len(suffix)-len(hash)-1, 0)
	return strings.TrimRight(base[:min(keep, len(base))], "-.") + "-" + hash + suffix
}
