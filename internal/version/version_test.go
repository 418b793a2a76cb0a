package version

import "testing"

// The linker's -X sets Version (make build); without it the test binary
// has no module version either, so "dev". TestGoInstallFromATag (test/e2e)
// checks the tag a go-installed binary reports.
func TestString(t *testing.T) {
	if got := String(); got != "dev" {
		t.Errorf("String() = %q without -X, want dev", got)
	}
	Version = "v9.9.9"
	defer func() { Version = "" }()
	if got := String(); got != "v9.9.9" {
		t.Errorf("String() = %q, want the -X value", got)
	}
}
