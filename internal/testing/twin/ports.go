package twin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/airunway-render/airunway-render/internal/testing/procnet"
)

// A port picked free (listened on, closed) and then handed to another
// process is not reserved: any process may take it before that one binds
// it. The twin avoids it: a component that can listen on port 0 does, and
// the test learns its port from the kernel (procnet.ListeningPorts) or from the
// component's log (WaitLog); one that cannot is started on a free port
// again when the port was taken (StartOnFreePort).

// pollEvery is how often the waits below look again.
const pollEvery = 50 * time.Millisecond

// ListeningPort waits until process pid listens on a TCP port (given
// 127.0.0.1:0, say) and returns it. The process must listen on no other
// port: its other endpoints off.
func ListeningPort(ctx context.Context, pid int) (int, error) {
	return listeningPort(ctx, pid, nil)
}

// listeningPort is ListeningPort that also gives up when exited closes.
func listeningPort(ctx context.Context, pid int, exited <-chan struct{}) (int, error) {
	for {
		ports, err := procnet.ListeningPorts(pid)
		switch {
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return 0, err
		case len(ports) == 1:
			return ports[0], nil
		case len(ports) > 1:
			return 0, fmt.Errorf("process %d listens on %v, not on one port: turn its other endpoints off", pid, ports)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("process %d listens on no TCP port: %w", pid, ctx.Err())
		case <-exited:
			return 0, fmt.Errorf("process %d exited without listening", pid)
		case <-time.After(pollEvery):
		}
	}
}

// ListeningPort waits until the program StartProcess or StartOperator
// started as name listens on a TCP port, and returns it: for a program
// told to listen on 127.0.0.1:0 and no other port. It fails, with the
// program's log, when the program exits first.
func (t *Twin) ListeningPort(ctx context.Context, name string) (int, error) {
	p, err := t.running(name)
	if err != nil {
		return 0, err
	}
	port, err := listeningPort(ctx, p.cmd.Process.Pid, p.done)
	if err != nil {
		return 0, fmt.Errorf("%s: %w\n%s", name, err, p.tail(30))
	}
	return port, nil
}

// WaitLog waits until a line of the log of the program started as name
// matches re, and returns the match's submatches: for a program that says
// where it listens. It fails, with the log, when the program exits first.
func (t *Twin) WaitLog(ctx context.Context, name string, re *regexp.Regexp) ([]string, error) {
	p, err := t.running(name)
	if err != nil {
		return nil, err
	}
	for {
		// Read before looking at the exit: a program that logged and
		// then exited is still found.
		exited := p.exited()
		data, err := os.ReadFile(p.log)
		if err != nil {
			return nil, err
		}
		if m := re.FindStringSubmatch(string(data)); m != nil {
			return m, nil
		}
		if exited {
			return nil, fmt.Errorf("%s exited before logging %q\n%s", name, re, p.tail(30))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s has not logged %q: %w\n%s", name, re, ctx.Err(), p.tail(30))
		case <-time.After(pollEvery):
		}
	}
}

// portTaken is how a program says its port is held by another ("bind:
// address already in use", redis's "Address already in use").
var portTaken = regexp.MustCompile(`(?i)address already in use`)

// startAttempts bounds StartOnFreePort's starts: taken several times in a
// row, a port taken is no longer bad luck.
const startAttempts = 5

// pickPort picks the port StartOnFreePort hands over (a test replaces it).
var pickPort = freePort

// StartOnFreePort runs a program that must be told the port to listen on
// (it cannot listen on port 0 and say which port it got): args gives its
// arguments for a port. The port is picked free and then handed over, and
// another process may take it in between: when the program exits saying
// its address is in use, it is started again, on another port. It returns
// once the program holds the port, and fails when the program exits for
// another reason (with its log).
func (t *Twin) StartOnFreePort(ctx context.Context, name, bin string, env []string, args func(port int) []string) (int, error) {
	for range startAttempts {
		port, err := pickPort()
		if err != nil {
			return 0, err
		}
		if err := t.runEnv(name, bin, append([]string{"KUBECONFIG=" + t.Kubeconfig}, env...), args(port)...); err != nil {
			return 0, err
		}
		p := t.procs[len(t.procs)-1]
		err = waitHolding(ctx, p, port)
		if err == nil {
			return port, nil
		}
		if !p.exited() || !portTaken.MatchString(p.tail(30)) {
			return 0, fmt.Errorf("%s: %w\n%s", name, err, p.tail(30))
		}
		// Taken: forget this start, its log too, and try another port.
		t.procs = t.procs[:len(t.procs)-1]
		_ = os.Remove(p.log)
	}
	return 0, fmt.Errorf("%s: its port was taken %d times in a row", name, startAttempts)
}

// waitHolding waits until process p listens on port, or exits.
func waitHolding(ctx context.Context, p *process, port int) error {
	for {
		ports, err := procnet.ListeningPorts(p.cmd.Process.Pid)
		if err == nil && slices.Contains(ports, port) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not listening on port %d: %w", port, ctx.Err())
		case <-p.done:
			return fmt.Errorf("exited before listening on port %d", port)
		case <-time.After(pollEvery):
		}
	}
}

// FreePort returns a port of 127.0.0.1 that was free a moment ago. Handed
// to another process it is not reserved: see StartOnFreePort, and prefer
// port 0 with ListeningPort or WaitLog.
func FreePort() string {
	port, err := freePort()
	if err != nil {
		return "0"
	}
	return strconv.Itoa(port)
}
