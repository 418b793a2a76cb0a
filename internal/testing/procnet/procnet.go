// Package procnet reads from the kernel which TCP ports a process listens
// on (/proc/PID/net/tcp and tcp6, and the process's open sockets), so a
// test can start a program on port 0 and learn its ports instead of
// picking a free one, closing it and hoping nobody takes it before the
// program binds it.
package procnet

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ListeningPorts returns, ascending, the TCP ports process pid listens on:
// the LISTEN sockets of its network namespace (/proc/PID/net/tcp and tcp6)
// that are among its open files. Another process's sockets are not
// counted, so a port this returns is one pid holds.
func ListeningPorts(pid int) ([]int, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return nil, err
	}
	var ports []int
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return nil, err
		}
		found, err := listeningIn(string(data), inodes)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/net/%s: %w", pid, table, err)
		}
		ports = append(ports, found...)
	}
	slices.Sort(ports)
	return slices.Compact(ports), nil
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listeningIn returns the local ports of the LISTEN sockets of a
// /proc/net/tcp table whose inodes are among inodes. A line is
// "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout
// inode ...", an address HEX_IP:HEX_PORT.
func listeningIn(table string, inodes map[string]bool) ([]int, error) {
	var ports []int
	lines := strings.Split(table, "\n")
	for _, line := range lines[min(1, len(lines)):] { // the first is the heading
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != tcpListen || !inodes[f[9]] {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		port, err := strconv.ParseUint(hexPort, 16, 16)
		if !ok || err != nil {
			return nil, fmt.Errorf("local address %q", f[1])
		}
		ports = append(ports, int(port))
	}
	return ports, nil
}

// socketInodes are the inodes of the sockets among process pid's open
// files (a descriptor's link reads "socket:[INODE]").
func socketInodes(pid int) (map[string]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed since the directory was read
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes, nil
}
