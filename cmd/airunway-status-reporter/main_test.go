package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestWorkersMustBePositive: a reporter with no worker would reconcile
// nothing; the flag is refused before anything connects.
func TestWorkersMustBePositive(t *testing.T) {
	for _, v := range []string{"0", "-3"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"--workers", v}, &stdout, &stderr); code != 2 {
			t.Errorf("--workers %s: exit %d, want 2", v, code)
		}
		if want := "`--workers` must be at least 1, got " + v; !strings.Contains(stderr.String(), want) {
			t.Errorf("--workers %s: stderr %q lacks %q", v, stderr.String(), want)
		}
	}
}
