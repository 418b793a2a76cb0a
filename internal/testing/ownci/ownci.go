package ownci

import (
	"fmt"
	"os"
	"testing"
)

// Variable is the environment variable .ci/run sets to "1".
const Variable = "AIRUNWAY_RENDER_CI"

// Enabled reports whether this is this repository's own CI.
func Enabled() bool { return os.Getenv(Variable) == "1" }

// Skip skips t, saying why, or fails it in this repository's own CI,
// where what the test lacks must be present.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if Enabled() {
		t.Fatalf("%s; this repository's CI (%s=1, set by .ci/run) must have it", reason, Variable)
	}
	t.Skip(reason)
}
