package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/airunway-render/airunway-render/internal/safefile"
)

// createFile creates file with data, through an os.Root of its directory
// (which must exist): a hidden temporary file is written and synced
// there, then linked to the name, which fails when the name exists, so
// the file appears whole or not at all and never replaces one another
// process created meanwhile; then the directory is synced. A file system
// without hard links gets a rename instead, after a last check that the
// name is still free.
func createFile(file string, data []byte) error {
	dir, base := filepath.Dir(file), filepath.Base(file)
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("its directory %s does not exist; create it first", dir)
	}
	if err != nil {
		return err
	}
	defer root.Close()
	tmp, tmpName, err := safefile.CreateTemp(root, ".", "airunway-render-catalog", 0o666) // the umask decides
	if err != nil {
		return err
	}
	defer func() { _ = root.Remove(tmpName) }() // once linked, the name holds the file
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := syncFile(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	err = root.Link(tmpName, base)
	switch {
	case errors.Is(err, fs.ErrExist):
		return errors.New("another process created it meanwhile; it was left as that process left it: run catalog add again")
	case err != nil:
		if _, statErr := root.Lstat(base); !errors.Is(statErr, fs.ErrNotExist) {
			return errors.New("another process created it meanwhile; it was left as that process left it: run catalog add again")
		}
		if err := root.Rename(tmpName, base); err != nil {
			return err
		}
	}
	if err := syncDir(root, "."); err != nil {
		return fmt.Errorf("was created, but its directory could not be synced, so it may not survive a crash: %w", err)
	}
	return nil
}
