// Package safefile opens the files a repository holds only when they are
// regular files.
//
// A repository can hold a named pipe where a YAML file should be (opening
// it waits for a writer, forever) or a link to a device (reading /dev/zero
// never ends; opening some devices does something). So a file is stat'ed
// first, and neither is opened; then it is opened with O_NONBLOCK, which
// makes a pipe swapped in after the stat open at once, and the opened file
// is checked again, so nothing can slip in between.
package safefile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// NotRegular is a file that is not opened because it is not a regular
// file.
type NotRegular struct{ Mode fs.FileMode }

func (e NotRegular) Error() string {
	return fmt.Sprintf("must be a regular file, but it is %s; only regular files are read (a named pipe or a device could block the run, or never end)", Kind(e.Mode))
}

// Kind names a file's type for a message: "a named pipe (FIFO)".
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}

// Open opens the file at name (symbolic links followed), only when it is a
// regular file.
func Open(name string, flag int) (*os.File, fs.FileInfo, error) {
	return open(func() (fs.FileInfo, error) { return os.Stat(name) },
		func(flag int) (*os.File, error) { return os.OpenFile(name, flag, 0) }, flag)
}

// OpenIn opens name in root (symbolic links followed inside it), only when
// it is a regular file.
func OpenIn(root *os.Root, name string, flag int) (*os.File, fs.FileInfo, error) {
	return open(func() (fs.FileInfo, error) { return root.Stat(name) },
		func(flag int) (*os.File, error) { return root.OpenFile(name, flag, 0) }, flag)
}

func open(stat func() (fs.FileInfo, error), openFile func(flag int) (*os.File, error), flag int) (*os.File, fs.FileInfo, error) {
	if err := regular(stat()); err != nil {
		return nil, nil, err
	}
	f, err := openFile(flag | syscall.O_NONBLOCK)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil {
		err = regular(info, nil)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

func regular(info fs.FileInfo, err error) error {
	if err != nil || info.Mode().IsRegular() {
		return err
	}
	return NotRegular{info.Mode()}
}
