package hostile

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestBuildLeavesNoFunctionBehind: when `build` ends before the function
// kustomize started has finished, by its --timeout or killed (as Argo CD
// stops a generate that runs too long), the function ends with it. The
// binary runs from a path of its own, so that its processes are told from
// every other. The function is stopped (SIGSTOP) as soon as it is seen, so
// that it is surely still running when `build` ends, however fast the
// machine; this test is the processes' subreaper, so that the function,
// orphaned, becomes its child, and how it ended can be read: killed by
// the kernel (it had tied itself to `build`), or, continued, exit status
// 1 (it had not yet, and found `build` gone when it did).
func TestBuildLeavesNoFunctionBehind(t *testing.T) {
	require.NoError(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	buildWith := func(timeout string) func(bin, repo string) *exec.Cmd {
		return func(bin, repo string) *exec.Cmd {
			return exec.Command(bin, "build", filepath.Join(repo, "app"), "--root", repo, "--timeout", timeout)
		}
	}
	kill := func(t *testing.T, build *exec.Cmd) { require.NoError(t, build.Process.Kill()) }
	for _, tc := range []struct {
		name    string
		command func(bin, repo string) *exec.Cmd
		// end makes the build end, once its function is stopped.
		end    func(t *testing.T, build *exec.Cmd)
		stderr string
		// working: the function is stopped only once it has read its
		// input, long after it tied itself: the kernel must kill it.
		// Otherwise it is stopped as soon as it runs.
		working bool
	}{
		{"build stopped at its timeout", buildWith("5s"), func(*testing.T, *exec.Cmd) {}, "[error] the build took longer than 5s and was stopped", false},
		{"build killed", buildWith("10m"), kill, "", false},
		{"the Argo CD plugin killed", func(bin, repo string) *exec.Cmd {
			// As argocd-cmp-server runs the plugin's generate: in the
			// application's directory, which it names.
			cmd := exec.Command(bin, "argocd", "generate")
			cmd.Dir = filepath.Join(repo, "app")
			cmd.Env = append(os.Environ(), "ARGOCD_APP_SOURCE_PATH=app")
			return cmd
		}, kill, "", false},
		{"build killed while its function works", buildWith("10m"), kill, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "airunway-render")
			copyFile(t, renderBin(t), bin)
			repo := filepath.Join(t.TempDir(), "repo")
			// Every case runs the repository whose function works for a
			// second or so: one that ends in milliseconds (a served name
			// was used) could end before a busy machine let the poll below
			// see it, and the test failed with "never started" (twice in
			// a loaded make test).
			require.NoError(t, copyTree(filepath.Join(cases, "selection-rules-multiply", "repo"), repo, strings.NewReplacer()))
			build := tc.command(bin, repo)
			var stderr bytes.Buffer
			build.Stderr = &stderr
			require.NoError(t, build.Start())
			defer func() { _ = build.Process.Kill(); _ = build.Wait() }()

			var function int
			require.Eventually(t, func() bool {
				pids := functionsOf(bin)
				if len(pids) == 0 {
					return false
				}
				function = pids[0]
				if tc.working && readBytes(function) < 4096 {
					return false // not yet past reading its input
				}
				return syscall.Kill(function, syscall.SIGSTOP) == nil
			}, time.Minute, time.Millisecond, "build never started the function")
			t.Cleanup(func() { _ = syscall.Kill(function, syscall.SIGKILL) })

			tc.end(t, build)
			// The function holds build's stderr while it lives: wait for
			// the process, not for the copy of its output.
			_, _ = build.Process.Wait()
			require.NoError(t, syscall.Kill(function, syscall.SIGCONT))
			ended := make(chan syscall.WaitStatus, 1)
			go func() {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(function, &ws, 0, nil)
				ended <- ws
			}()
			select {
			case ws := <-ended:
				if ws.Signaled() {
					t.Logf("the function ended by the signal %v", ws.Signal())
				} else {
					t.Logf("the function ended with exit status %d", ws.ExitStatus())
				}
				killed := ws.Signaled() && ws.Signal() == syscall.SIGKILL
				require.True(t, killed || (!tc.working && ws.Exited() && ws.ExitStatus() == 1), "%#v", ws)
			case <-time.After(30 * time.Second): // only catches a function that never ends
				t.Fatalf("the function %d outlived the build", function)
			}
			require.Contains(t, stderr.String(), tc.stderr)
		})
	}
}

// readBytes is what process pid has read so far (rchar of /proc/pid/io):
// the Go runtime reads a few bytes as it starts, the function its input.
func readBytes(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "io"))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.Atoi(rest)
			return n
		}
	}
	return 0
}

// functionsOf lists the live processes that run bin as the KRM function
// (without arguments); one that died and waits to be reaped is not live.
func functionsOf(bin string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || string(cmdline) != bin+"\x00" {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if s := string(stat); strings.Contains(s[strings.LastIndexByte(s, ')'):], ") Z ") {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
