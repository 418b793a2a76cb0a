// Command runner starts one program for hack/procbench and reports what
// it cost. procbench itself holds tens of MiB of outputs, and Linux counts
// the memory of the process that starts a program in that program's peak
// RSS (the old address space's high-water mark is carried over exec); the
// runner is small, so the peak it reports is the program's own.
//
// Usage: runner PROGRAM [ARG...]. The program gets the runner's stdin,
// stdout and stderr. The runner writes "WALL CPU MAXRSS" (nanoseconds,
// nanoseconds of user and system time, KiB) to file descriptor 3 and
// exits as the program exited (128 + the signal when it was killed).
// wait4's usage covers the program and the children it waited for (kpt's
// function), and its Maxrss is the largest of them.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: runner PROGRAM [ARG...]")
		os.Exit(125)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(125)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	report := os.NewFile(3, "usage")
	fmt.Fprintf(report, "%d %d %d\n", wall.Nanoseconds(), ru.Utime.Nano()+ru.Stime.Nano(), ru.Maxrss)
	report.Close()
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		os.Exit(code)
	}
	os.Exit(128 + int(cmd.ProcessState.Sys().(syscall.WaitStatus).Signal()))
}
