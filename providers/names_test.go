package providers

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

func TestDerivedName(t *testing.T) {
	long := strings.Repeat("m", 63)
	for _, tc := range []struct{ name, base, suffix, want string }{
		{"fits: kept as upstream names it", "llama", "-epp", "llama-epp"},
		{"exactly 63: kept", strings.Repeat("m", 59), "-epp", strings.Repeat("m", 59) + "-epp"},
		{"64: cut with a hash", strings.Repeat("m", 60), "-epp", strings.Repeat("m", 50) + "-bd211be3-epp"},
		{"longest model name, long suffix", long, "-model-download", strings.Repeat("m", 39) + "-3f414a93-model-download"},
		{"a dash at the cut is dropped", strings.Repeat("m", 49) + "-x" + strings.Repeat("m", 20), "-epp", strings.Repeat("m", 49) + "-9a4a8ca9-epp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DerivedName(tc.base, tc.suffix)
			require.Equal(t, tc.want, got)
			require.Equal(t, got, DerivedName(tc.base, tc.suffix), "deterministic")
			require.LessOrEqual(t, len(got), MaxDerivedName)
			require.Empty(t, utilvalidation.IsDNS1123Label(got))
		})
	}
}

// The hashes above are the first 8 hex digits of `printf %s NAME | sha256sum`.

// TestDerivedNameNoCollision: 10,000 names that agree on everything the
// cut keeps still derive 10,000 different names.
func TestDerivedNameNoCollision(t *testing.T) {
	seen := map[string]string{}
	for i := range 10000 {
		base := strings.Repeat("m", 55) + strconv.Itoa(i)
		got := DerivedName(base, "-model-download")
		if prev, dup := seen[got]; dup {
			t.Fatalf("%q and %q both derive %q", prev, base, got)
		}
		seen[got] = base
	}
}
