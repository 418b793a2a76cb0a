//go:build unix

package cli

import (
	"io/fs"
	"syscall"
)

// fileIdentity is the device, inode, link count, owner and group of a
// file, from its stat.
func fileIdentity(info fs.FileInfo) (dev, ino, links uint64, uid, gid int) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, -1, -1
	}
	return uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink), int(st.Uid), int(st.Gid)
}
