package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOnlyRegularFilesOpen: a regular file opens, in a root and outside
// one; a named pipe, a device and a directory are refused, at once (a
// pipe without a writer would block the open), naming what they are.
func TestOnlyRegularFilesOpen(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file.yaml"), []byte("a: b\n"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o644))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	for name, kind := range map[string]string{"file.yaml": "", "pipe.yaml": "a named pipe (FIFO)", "zero.yaml": "a device", "sub": "a directory"} {
		for inRoot, open := range []func() (*os.File, error){
			func() (*os.File, error) { f, _, err := Open(filepath.Join(dir, name), os.O_RDONLY); return f, err },
			func() (*os.File, error) { f, _, err := OpenIn(root, name, os.O_RDONLY); return f, err },
		} {
			if inRoot == 1 && name == "zero.yaml" {
				_, err := open()
				require.ErrorContains(t, err, "path escapes from parent", "the root keeps the link out first")
				continue
			}
			f, err := open()
			if kind == "" {
				require.NoError(t, err, name)
				require.NoError(t, f.Close())
				continue
			}
			var notRegular NotRegular
			require.True(t, errors.As(err, &notRegular), "%s: %v", name, err)
			require.Equal(t, "must be a regular file, but it is "+kind+"; only regular files are read (a named pipe or a device could block the run, or never end)", err.Error())
		}
	}
}

// TestReadAtMost: a read stops one byte past its limit, whatever the
// reader holds, and fails with a *TooLarge naming the limit.
func TestReadAtMost(t *testing.T) {
	data, err := ReadAtMost(strings.NewReader("12345"), 5)
	require.NoError(t, err)
	require.Equal(t, "12345", string(data))
	counted := &countingReader{r: strings.NewReader(strings.Repeat("x", 1<<20))}
	_, err = ReadAtMost(counted, 5)
	var tooLarge *TooLarge
	require.ErrorAs(t, err, &tooLarge)
	require.Equal(t, int64(5), tooLarge.Limit)
	require.Equal(t, 6, counted.n, "read one byte past the limit, no further")
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	if len(p) > 6 {
		p = p[:6] // as a slow pipe would
	}
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestEscapes holds Escapes to os.Root's error for a name that leads out:
// a symbolic link out of the root, and `..`.
func TestEscapes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "repo"), 0o755))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "repo", "up")))
	root, err := os.OpenRoot(filepath.Join(dir, "repo"))
	require.NoError(t, err)
	defer root.Close()
	for _, name := range []string{"up/x", "../x"} {
		_, err := root.Open(name)
		require.True(t, Escapes(err), "%s: %v", name, err)
	}
	_, err = root.Open("missing")
	require.False(t, Escapes(err))
}

// TestWriteAtomic: the file is replaced whole, and no temporary file is
// left beside it.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	for _, content := range []string{"one\n", "two\n"} {
		require.NoError(t, WriteAtomic(root, "a/b.yaml", []byte(content), 0o644))
		data, err := os.ReadFile(filepath.Join(dir, "a", "b.yaml"))
		require.NoError(t, err)
		require.Equal(t, content, string(data))
	}
	entries, err := os.ReadDir(filepath.Join(dir, "a"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
}
