package hub

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// ParseRelease parses an operator or API release as a capability file
// writes it: "1.2.3" or "v1.2.3", and "1.2" for "1.2.0". It is stricter
// than Kubernetes' semantic versions, which it is built on: no pre-release
// or build suffix, no surrounding space, because a capability file names a
// release that was shipped, and the compatibility matrix lists only those.
func ParseRelease(s string) (*version.Version, error) {
	notRelease := fmt.Errorf("%q is not a release version of the form MAJOR.MINOR.PATCH", s)
	digits := strings.TrimPrefix(s, "v")
	if digits == "" || digits[0] < '0' || digits[0] > '9' || strings.TrimSpace(digits) != digits {
		return nil, notRelease
	}
	if strings.Count(digits, ".") == 1 {
		digits += ".0"
	}
	v, err := version.ParseSemantic(digits)
	if err != nil || v.PreRelease() != "" || v.BuildMetadata() != "" {
		return nil, notRelease
	}
	return v, nil
}

// MustParseRelease is ParseRelease for release numbers written in the code.
func MustParseRelease(s string) *version.Version {
	v, err := ParseRelease(s)
	if err != nil {
		panic(err)
	}
	return v
}

// VersionRange is [Min, Below): the releases a provider is rendered for.
type VersionRange struct {
	Min   *version.Version
	Below *version.Version
}

// MustVersionRange builds a range from release numbers written in the code.
func MustVersionRange(min, below string) VersionRange {
	return VersionRange{Min: MustParseRelease(min), Below: MustParseRelease(below)}
}

// Contains reports whether v is in the range.
func (r VersionRange) Contains(v *version.Version) bool {
	return v.AtLeast(r.Min) && v.LessThan(r.Below)
}

func (r VersionRange) String() string {
	return fmt.Sprintf(">= %s, < %s", r.Min, r.Below)
}
