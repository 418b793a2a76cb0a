package safefile

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// TooLarge is a read that stopped at its limit.
type TooLarge struct{ Limit int64 }

func (e *TooLarge) Error() string {
	return fmt.Sprintf("is larger than %d bytes, the most read of it", e.Limit)
}

// ReadAtMost reads r to its end, but not more than one byte past limit:
// a hostile file cannot exhaust memory before its size is checked. Past
// limit it fails with a *TooLarge.
func ReadAtMost(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := CopyAtMost(&buf, r, limit); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CopyAtMost copies r to w, as ReadAtMost reads it.
func CopyAtMost(w io.Writer, r io.Reader, limit int64) (int64, error) {
	n, err := io.Copy(w, io.LimitReader(r, limit+1))
	if err != nil {
		return n, err
	}
	if n > limit {
		return n, &TooLarge{Limit: limit}
	}
	return n, nil
}

// ReadFileAtMost opens name, only when it is a regular file (Open), and
// reads it with ReadAtMost.
func ReadFileAtMost(name string, limit int64) ([]byte, error) {
	f, _, err := Open(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAtMost(f, limit)
}

// Escapes reports an os.Root refusal of a name that leads out of the
// root (a symbolic link out of it, or `..`). os.Root's error for it is not
// exported; its text is stable, and TestEscapes holds it.
func Escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// CreateTemp creates a new, empty file in dir of root, hidden and named
// after prefix, for a write that renames or links it into place; its
// name is returned with it.
func CreateTemp(root *os.Root, dir, prefix string, perm fs.FileMode) (*os.File, string, error) {
	for range 100 {
		name := path.Join(dir, "."+prefix+"-"+rand.Text()[:12])
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("cannot create a temporary file")
}

// SyncDir makes a rename or a link in dir of root durable.
func SyncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteAtomic replaces name in root with data: a temporary file beside
// it, made durable before the rename, and the directory after it, so a
// crash leaves the old file or the new one, never a part. A new file gets
// perm, less the umask.
func WriteAtomic(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	dir := path.Dir(name)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, tmpName, err := CreateTemp(root, dir, "airunway-render", perm)
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmpName, name)
	}
	if err != nil {
		_ = root.Remove(tmpName)
		return err
	}
	return SyncDir(root, dir)
}
