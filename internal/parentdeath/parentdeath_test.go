//go:build linux

package parentdeath

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// role makes this test binary a process of the tree the test builds:
// "parent" starts a child and waits forever; "child" ties itself (or not,
// "child-untied"), prints its PID and waits forever.
const role = "PARENTDEATH_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(role) {
	case "parent-tied", "parent-untied":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), role+"="+strings.Replace(os.Getenv(role), "parent", "child", 1))
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		waitForever()
	case "child-tied":
		Tie()
		fmt.Println(os.Getpid())
		waitForever()
	case "child-untied":
		fmt.Println(os.Getpid())
		waitForever()
	}
	os.Exit(m.Run())
}

// waitForever blocks the process of a role until it is killed. Not with
// `select {}`: a process whose every goroutine blocks on nothing is one
// the Go runtime may end with "all goroutines are asleep - deadlock!"
// (exit status 2) whenever no timer happens to be pending, which a loaded
// machine made happen to the untied child; a sleeping goroutine always
// has a timer.
func waitForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// startTree starts a parent that starts a child, tied or not, and returns
// the parent and the child's PID once the child runs.
func startTree(t *testing.T, tied bool) (*exec.Cmd, int) {
	t.Helper()
	parent := exec.Command(os.Args[0])
	which := "parent-untied"
	if tied {
		which = "parent-tied"
	}
	parent.Env = append(os.Environ(), role+"="+which)
	out, err := parent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, parent.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return parent, pid
}

// state is a process's state letter in /proc ("" once it is gone):
// R, S, D for a running one, Z for one that died and waits to be reaped.
func state(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	return rest[:1]
}

// TestChildDiesWithItsParent: a child that tied itself is killed when its
// parent is killed with SIGKILL (as Argo CD stops a generate, and as
// `build` ends at its timeout); one that did not lives on, re-parented,
// which shows the test sees the difference.
func TestChildDiesWithItsParent(t *testing.T) {
	for _, tied := range []bool{true, false} {
		t.Run(fmt.Sprintf("tied=%t", tied), func(t *testing.T) {
			parent, child := startTree(t, tied)
			require.NoError(t, parent.Process.Kill())
			_ = parent.Wait()
			if !tied {
				require.Contains(t, []string{"R", "S"}, state(child), "an untied child outlives its parent")
				return
			}
			// Generous: it only catches a child that never dies.
			require.Eventually(t, func() bool { s := state(child); return s == "" || s == "Z" || s == "X" }, 30*time.Second, 10*time.Millisecond,
				"the tied child %d still runs after its parent died", child)
		})
	}
}
