package parentdeath

import (
	"os"

	"golang.org/x/sys/unix"
)

// Tie makes the kernel send SIGKILL to this process when its parent dies.
// If the parent died before the request took hold (the process has a new
// parent already), it exits at once with status 1, as the kill would
// have. A process without a parent (PID 1 in a container, as kpt runs
// functions) has nothing to tie to and runs on.
//
// The kernel sends the signal when the thread that started the process
// ends, not the whole parent: Go's runtime does not end its threads while
// the process runs (only a goroutine locked to its thread ends one), so
// for a Go parent the two are the same.
func Tie() {
	parent := os.Getppid()
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
