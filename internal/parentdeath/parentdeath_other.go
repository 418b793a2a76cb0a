//go:build !linux

package parentdeath

// Tie does nothing where the kernel has no parent-death signal.
func Tie() {}
