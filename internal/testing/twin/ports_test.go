package twin

import (
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/procnet"
)

// helperEnv makes the test binary, started again, a program that listens
// on the address its argument names, as a component does: the child the
// tests below start.
const helperEnv = "TWIN_TEST_LISTENER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(listenAndAccept(os.Args[1]))
	}
	os.Exit(m.Run())
}

// listenAndAccept listens on addr, says where, and accepts until killed;
// it exits 1 with the error ("address already in use") when it cannot.
func listenAndAccept(addr string) int {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening on", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		_ = c.Close()
	}
}

func newTestTwin(t *testing.T) *Twin {
	tw := &Twin{Name: "test", dir: t.TempDir()}
	t.Cleanup(func() { require.NoError(t, tw.Stop()) })
	return tw
}

// TestListeningPorts: a child's listener is the child's, not the test's
// (procnet tests the reading itself).
func TestListeningPorts(t *testing.T) {
	tw := newTestTwin(t)
	require.NoError(t, tw.StartProcess("child", os.Args[0], []string{helperEnv + "=1"}, "127.0.0.1:0"))
	ctx, cancel := context.WithTimeout(context.Background(), HangBound)
	defer cancel()
	child, err := tw.ListeningPort(ctx, "child")
	require.NoError(t, err)
	mine, err := procnet.ListeningPorts(os.Getpid())
	require.NoError(t, err)
	require.NotContains(t, mine, child, "the child's listener is not the test's")
}

// TestListeningPortAndLog: a program told 127.0.0.1:0 says its port, and
// the kernel agrees.
func TestListeningPortAndLog(t *testing.T) {
	tw := newTestTwin(t)
	require.NoError(t, tw.StartProcess("child", os.Args[0], []string{helperEnv + "=1"}, "127.0.0.1:0"))
	ctx, cancel := context.WithTimeout(context.Background(), HangBound)
	defer cancel()
	port, err := tw.ListeningPort(ctx, "child")
	require.NoError(t, err)
	said, err := tw.WaitLog(ctx, "child", regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)`))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(port), said[1])
	conn, err := net.Dial("tcp", "127.0.0.1:"+said[1])
	require.NoError(t, err)
	require.NoError(t, conn.Close())
}

// TestStartOnFreePortAgain: a program whose port was taken before it
// bound it is started again on another port, and the port returned is
// the one it holds.
func TestStartOnFreePortAgain(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	picks := 0
	pickPort = func() (int, error) {
		picks++
		if picks == 1 {
			return takenPort, nil
		}
		return freePort()
	}
	t.Cleanup(func() { pickPort = freePort })

	tw := newTestTwin(t)
	ctx, cancel := context.WithTimeout(context.Background(), HangBound)
	defer cancel()
	port, err := tw.StartOnFreePort(ctx, "child", os.Args[0], []string{helperEnv + "=1"}, func(port int) []string {
		return []string{"127.0.0.1:" + strconv.Itoa(port)}
	})
	require.NoError(t, err)
	require.Equal(t, 2, picks, "started again once")
	require.NotEqual(t, takenPort, port)
	require.Len(t, tw.procs, 1, "the start whose port was taken is forgotten")
	held, err := procnet.ListeningPorts(tw.procs[0].cmd.Process.Pid)
	require.NoError(t, err)
	require.Equal(t, []int{port}, held)
}

// TestStartOnFreePortFails: a program that exits for another reason is
// not started again, and its log says why.
func TestStartOnFreePortFails(t *testing.T) {
	tw := newTestTwin(t)
	ctx, cancel := context.WithTimeout(context.Background(), HangBound)
	defer cancel()
	starts := 0
	_, err := tw.StartOnFreePort(ctx, "child", os.Args[0], []string{helperEnv + "=1"}, func(int) []string {
		starts++
		return []string{"not-an-address"}
	})
	require.ErrorContains(t, err, "not-an-address")
	require.Equal(t, 1, starts)
}
