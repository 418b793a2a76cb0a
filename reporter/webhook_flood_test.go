package reporter

// TestWebhookConnectionFlood floods the conversion webhook with the
// connections a hostile client in the cluster can open, in a process of
// its own (this test binary, started again), so that what it holds is
// measured as the kernel counts it: the process's peak resident memory,
// as in the pod whose limit is 512Mi.

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// webhookChildEnv makes the test binary serve the webhook with the
// default limits and the pod's GOMEMLIMIT, print its address and CA as
// one line of JSON, and exit when its standard input closes.
const webhookChildEnv = "AIRUNWAY_REPORTER_TEST_WEBHOOK_CHILD"

// webhookChild is what the child prints.
type webhookChild struct {
	Addr string `json:"addr"`
	CA   []byte `json:"ca"`
}

// ServeWebhookChildIfAsked is the child's main, when this process is the
// child; it is called first in TestMain (in package reporter_test).
func ServeWebhookChildIfAsked() {
	if os.Getenv(webhookChildEnv) != "" {
		os.Exit(serveWebhookChild())
	}
}

// serveWebhookChild serves the webhook until standard input closes.
func serveWebhookChild() int {
	cert, err := newWebhookCert([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	serving := &servingCert{}
	if err := serving.set(cert); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	addr, stop, err := serveOnLoopback(serving, defaultWebhookLimits(), false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	line, _ := json.Marshal(webhookChild{Addr: addr, CA: cert.CA})
	fmt.Println(string(line))
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startWebhookChild starts the child and returns the webhook it serves and
// a function that reads the child's peak resident memory in bytes.
func startWebhookChild(t *testing.T) (*testWebhook, func() int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), webhookChildEnv+"=1", "GOMEMLIMIT=384MiB")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	require.NoError(t, err, "the webhook child did not start")
	var child webhookChild
	require.NoError(t, json.Unmarshal(line, &child))
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(child.CA))
	peak := func() int64 {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		require.NoError(t, err)
		for l := range strings.SplitSeq(string(status), "\n") {
			if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				require.NoError(t, err)
				return kib << 10
			}
		}
		t.Fatal("no VmHWM in the child's status")
		return 0
	}
	return &testWebhook{addr: child.Addr, roots: roots}, peak
}

// attack is one flooding client's connection: it calls connected once
// it holds one, and returns when the server or stop closes it.
type attack func(stop <-chan struct{}, connected func())

// flood runs n clients, each doing attack over and over until stop
// closes; it returns once they have made at least made connections, with
// the function that waits for every client to end.
func flood(t *testing.T, n, made int, stop <-chan struct{}, attack attack) (wait func()) {
	var wg sync.WaitGroup
	var connections atomic.Int64
	connected := func() { connections.Add(1) }
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				attack(stop, connected)
			}
		})
	}
	require.Eventually(t, func() bool { return connections.Load() >= int64(made) }, 5*time.Minute, 10*time.Millisecond,
		"the flood never made %d connections", made)
	return wg.Wait
}

// headerAttack dials the webhook, sends request headers that never end,
// total bytes of them in chunks, then holds the connection until the
// server closes it or stop closes.
func (w *testWebhook) headerAttack(total int) attack {
	chunk := "X-Flood: " + strings.Repeat("a", 4000) + "\r\n"
	return func(stop <-chan struct{}, connected func()) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Minute}, "tcp", w.addr, &tls.Config{RootCAs: w.roots})
		if err != nil {
			return
		}
		connected()
		defer conn.Close()
		go func() { <-stop; _ = conn.Close() }()
		if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\n", ConversionPath); err != nil {
			return
		}
		for sent := 0; sent < total; sent += len(chunk) {
			if _, err := io.WriteString(conn, chunk); err != nil {
				return
			}
		}
		_, _ = io.Copy(io.Discard, conn) // until the server gives up on it
	}
}

// silentAttack opens a TCP connection and never speaks, until the server
// closes it or stop closes.
func (w *testWebhook) silentAttack(stop <-chan struct{}, connected func()) {
	conn, err := net.DialTimeout("tcp", w.addr, time.Minute)
	if err != nil {
		return
	}
	connected()
	defer conn.Close()
	go func() { <-stop; _ = conn.Close() }()
	_, _ = io.Copy(io.Discard, conn)
}

// TestWebhookConnectionFlood: the floods a review found took
// controller-runtime's webhook server to 2.27 GB (600 connections sending
// 1,000,000 header bytes) and 186 MB (4,000 connections never speaking).
// Against the reporter's server, each flood runs on while a valid review
// is sent: the review converts (how long it took is logged: a loaded
// machine takes longer, the flood no more memory), and the child's peak
// resident memory stays within webhookConnectionBudget.
func TestWebhookConnectionFlood(t *testing.T) {
	w, peak := startWebhookChild(t)
	w.requireConverts(t)
	before := peak()
	for _, tc := range []struct {
		name          string
		clients, made int
		attack        attack
	}{
		// A TLS connection is made once the server accepts it, so at most
		// webhookMaxConnections at once; a TCP one once the kernel queues
		// it.
		{"600 clients sending 1,000,000 header bytes", 600, 600, w.headerAttack(1_000_000)},
		{"1,200 clients stalling just under the header bound", 1200, webhookMaxConnections, w.headerAttack(webhookMaxHeaderBytes - 2048)},
		{"4,000 clients never speaking", 4000, 4000, w.silentAttack},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop := make(chan struct{})
			wait := flood(t, tc.clients, tc.made, stop, tc.attack)
			defer wait()
			defer close(stop)
			// A connection the flood's load breaks is tried again, as the
			// API server's client would; the two minutes only catch a
			// server the flood has stopped.
			start := time.Now()
			hung := start.Add(2 * time.Minute)
			var status int
			var body string
			var err error
			for attempt := 1; time.Now().Before(hung); attempt++ {
				c := w.client()
				c.Timeout = time.Until(hung)
				if status, body, err = w.post(c, reviewOf(smallModel)); err == nil {
					break
				}
				t.Logf("attempt %d after %s: %v", attempt, time.Since(start).Round(time.Millisecond), err)
			}
			require.NoError(t, err, "a valid review during the flood")
			require.Equal(t, http.StatusOK, status, body)
			require.Contains(t, body, `"status":"Success"`)
			t.Logf("a valid review converted after %s during the flood; the webhook's peak resident memory is %s (%s before the floods)", time.Since(start).Round(time.Millisecond), mib(int(peak())), mib(int(before)))
		})
	}
	require.LessOrEqual(t, peak(), int64(webhookConnectionBudget))
}
