package parentdeath

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Tie makes the kernel send SIGKILL to this process when its parent dies.
// If the parent died before the request took hold (the process has a new
// parent already), it exits at once with status 1, as the kill would
// have. The parent is the one ParentEnv names when it is set (then even
// a parent that died before this process read its parent's PID is seen
// gone), else the one the process had when Tie started. A process without
// a parent (PID 1 in a container, as kpt runs functions) has nothing to
// tie to and runs on.
//
// The kernel sends the signal when the thread that started the process
// ends, not the whole parent: Go's runtime does not end its threads while
// the process runs (only a goroutine locked to its thread ends one), so
// for a Go parent the two are the same.
func Tie() {
	parent := os.Getppid()
	if named, err := strconv.Atoi(os.Getenv(ParentEnv)); err == nil {
		parent = named
	}
	if parent == 0 {
		return
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return // a kernel without it: the process runs as before
	}
	if os.Getppid() != parent {
		os.Exit(1)
	}
}
