//go:build unix

package fit

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A named pipe called config.json would block the run: refused.
func TestReadDirRefusesAPipe(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "config.json"), 0o644))
	_, err := ReadDir("x", dir)
	require.ErrorContains(t, err, "named pipe")
}
