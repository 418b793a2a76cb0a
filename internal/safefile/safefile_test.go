package safefile

import (
	"errors"
	"os"
	"path/filepath"
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
