package diag

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPolicy(t *testing.T) {
	var l List
	l.Errorf("spec.a", "broken")
	l.Warnf(IdleGPUs, "spec.resources", "idle")
	l.Warnf(FloatingImage, "spec.engine.image", "nightly")

	require.Equal(t, l, l.Apply(Policy{}), "no policy, no change")

	got := l.Apply(Policy{Ignore: []Code{IdleGPUs}})
	require.Len(t, got, 2)
	require.Equal(t, FloatingImage, got[1].Code)

	got = l.Apply(Policy{Ignore: []Code{IdleGPUs}, AsErrors: true})
	require.Len(t, got, 2)
	require.Equal(t, Error, got[1].Severity)
	require.Equal(t, "nightly (a warning, made an error by warnings-as-errors)", got[1].Message)
	require.Equal(t, Warning, l[2].Severity, "Apply leaves its input alone")
}

func TestParseCodes(t *testing.T) {
	codes, err := ParseCodes([]string{"idle-gpus", " floating-image ", ""})
	require.NoError(t, err)
	require.Equal(t, []Code{IdleGPUs, FloatingImage}, codes)
	_, err = ParseCodes([]string{"idle-gpu"})
	require.ErrorContains(t, err, `"idle-gpu" is not a warning code: must be one of "ignored-field", `)
}

// Every code is described once; the docs table is generated from Codes.
func TestCodesAreDescribedOnce(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes {
		require.False(t, seen[c.Code], "%s twice", c.Code)
		require.NotEmpty(t, c.About, c.Code)
		seen[c.Code] = true
	}
}
