package twin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// TestGitServer: a repository served on 127.0.0.1 clones over HTTP, and
// refuses pushes.
func TestGitServer(t *testing.T) {
	work, served := t.TempDir(), t.TempDir()
	git(t, work, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(work, "a.yaml"), []byte("a: 1\n"), 0o644))
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "one")
	git(t, served, "clone", "-q", "--bare", work, "repo.git")

	s, err := twin.StartGitServer(served)
	require.NoError(t, err)
	defer s.Close()
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, s.URL)

	clone := filepath.Join(t.TempDir(), "c")
	git(t, t.TempDir(), "clone", "-q", s.URL+"/repo.git", clone)
	data, err := os.ReadFile(filepath.Join(clone, "a.yaml"))
	require.NoError(t, err)
	require.Equal(t, "a: 1\n", string(data))

	require.NoError(t, os.WriteFile(filepath.Join(clone, "b.yaml"), []byte("b: 2\n"), 0o644))
	git(t, clone, "add", ".")
	git(t, clone, "commit", "-q", "-m", "two")
	cmd := exec.Command("git", "push", "-q", "origin", "HEAD:main")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "push accepted: %s", out)
}
