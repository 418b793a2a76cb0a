package procnet

import (
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListenersNotConnections: the ports a process listens on are its
// listeners', not its connections', and a closed listener is gone.
func TestListenersNotConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	conn, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer conn.Close()

	ports, err := ListeningPorts(os.Getpid())
	require.NoError(t, err)
	require.Contains(t, ports, port)
	require.NotContains(t, ports, conn.LocalAddr().(*net.TCPAddr).Port, "a connection is not a listener")

	require.NoError(t, l.Close())
	ports, err = ListeningPorts(os.Getpid())
	require.NoError(t, err)
	require.NotContains(t, ports, port, "closed")
}

// TestListeningIn reads a /proc/net/tcp table: LISTEN sockets (state 0A)
// among the given inodes only.
func TestListeningIn(t *testing.T) {
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1
`
	ports, err := listeningIn(table, map[string]bool{"111": true, "333": true})
	require.NoError(t, err)
	require.Equal(t, []int{8080}, ports, "222 is another process's; 333 is a connection")
	_, err = listeningIn("heading\n 0: nonsense 0 0A a b c d e 111\n", map[string]bool{"111": true})
	require.ErrorContains(t, err, "nonsense")
}
