package gitsnap

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=x", "-c", "user.email=x@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v:\n%s", args, out)
}

// TakeTree writes every blob of the revision, links included, and refuses
// a tree past its bound before writing anything.
func TestTakeTree(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "b", "f.yaml"), []byte("x: 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "top.yaml"), []byte("y: 2\n"), 0o644))
	require.NoError(t, os.Symlink("a/b/f.yaml", filepath.Join(dir, "link.yaml")))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")

	repo, err := Open(dir)
	require.NoError(t, err)
	side, err := repo.Resolve("REF", "HEAD")
	require.NoError(t, err)
	snap, err := repo.TakeTree(side)
	require.NoError(t, err)
	defer snap.Close()
	for name, want := range map[string]string{"a/b/f.yaml": "x: 1\n", "top.yaml": "y: 2\n", "link.yaml": "x: 1\n"} {
		data, err := snap.Root.ReadFile(name)
		require.NoError(t, err, name)
		require.Equal(t, want, string(data), name)
	}

	treeLimit = 9 // the two files hold 10 bytes, the link's target 10 more
	defer func() { treeLimit = MaxTreeBytes }()
	_, err = repo.TakeTree(side)
	require.ErrorContains(t, err, `REF "HEAD" holds 20 bytes of files; a kustomization among the paths is built from the whole tree, which may hold at most 9 bytes`)
}
