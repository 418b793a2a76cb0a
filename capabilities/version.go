package capabilities

import (
	"fmt"
	"strconv"
	"strings"
)

// Semver is a release version major.minor.patch; pre-release and build
// suffixes are not supported in capability files.
type Semver [3]int

// ParseSemver parses "1.2.3" or "v1.2.3"; "1.2" means "1.2.0".
func ParseSemver(s string) (Semver, error) {
	var v Semver
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return v, fmt.Errorf("%q is not a release version of the form MAJOR.MINOR.PATCH", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || !allDigits(p) || (len(p) > 1 && p[0] == '0') {
			return v, fmt.Errorf("%q is not a release version of the form MAJOR.MINOR.PATCH", s)
		}
		v[i] = n
	}
	return v, nil
}

// allDigits rejects what strconv.Atoi would accept besides digits: a sign.
func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// Less orders versions.
func (v Semver) Less(o Semver) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

func (v Semver) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// VersionRange is [Min, Below): the releases a provider is rendered for.
type VersionRange struct {
	Min   Semver
	Below Semver
}

// Contains reports whether v is in the range.
func (r VersionRange) Contains(v Semver) bool { return !v.Less(r.Min) && v.Less(r.Below) }

func (r VersionRange) String() string {
	return fmt.Sprintf(">= %s, < %s", r.Min, r.Below)
}

func mustRange(min, below string) VersionRange {
	lo, err := ParseSemver(min)
	if err != nil {
		panic(err)
	}
	hi, err := ParseSemver(below)
	if err != nil {
		panic(err)
	}
	return VersionRange{Min: lo, Below: hi}
}
