package twin_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tb is what the reads a wait repeats need of a test: the test itself, or
// the *assert.CollectT of one try of require.EventuallyWithT, whose
// FailNow ends that try only (a *testing.T must not FailNow outside the
// test's goroutine, where EventuallyWithT runs its tries).
type tb interface {
	require.TestingT
	Helper()
}

// waitUntil is require.EventuallyWithT whose timeout also says what
// diagnose reads then (component logs, scheduler events): the failed
// assertions of the last try, then diagnose's text. diagnose runs once, on
// the test's goroutine, so it may take t.
func waitUntil(t *testing.T, within, tick time.Duration, check func(c *assert.CollectT), diagnose func() string, msg string, args ...any) {
	t.Helper()
	if !assert.EventuallyWithT(t, check, within, tick, fmt.Sprintf(msg, args...)) {
		t.Fatal(diagnose())
	}
}
