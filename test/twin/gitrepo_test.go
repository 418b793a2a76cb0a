package twin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// platformRepo is the Git repository the GitOps engines read: the
// project's examples/ and deploy/ as a user's platform repository holds
// them, committed on `main` and served read-only over HTTP on 127.0.0.1.
type platformRepo struct {
	work, bare string
	// URL is what an Application's repoURL or a GitRepository's url names.
	URL string
}

var (
	repoOnce sync.Once
	repo     *platformRepo
	repoErr  error
)

func usePlatformRepo(t *testing.T) *platformRepo {
	t.Helper()
	repoOnce.Do(func() { repo, repoErr = newPlatformRepo() })
	require.NoError(t, repoErr)
	return repo
}

func newPlatformRepo() (*platformRepo, error) {
	r := &platformRepo{work: filepath.Join(scratch, "platform"), bare: filepath.Join(scratch, "git", "platform.git")}
	for _, d := range []string{"examples", "deploy"} {
		if err := os.CopyFS(filepath.Join(r.work, d), os.DirFS(filepath.Join(repoRoot, d))); err != nil {
			return nil, err
		}
	}
	for _, args := range [][]string{
		{"-C", r.work, "init", "-q", "-b", "main"},
		{"-C", r.work, "add", "-A"},
		{"-C", r.work, "commit", "-q", "-m", "the platform: examples and deploy"},
		{"clone", "-q", "--bare", r.work, r.bare},
	} {
		if _, err := gitIn(scratch, args...); err != nil {
			return nil, err
		}
	}
	server, err := twin.StartGitServer(filepath.Dir(r.bare))
	if err != nil {
		return nil, err
	}
	r.URL = server.URL + "/platform.git"
	return r, nil
}

// commitAll commits the work tree and pushes it to the served repository.
func (r *platformRepo) commitAll(msg string) error {
	if _, err := gitIn(r.work, "add", "-A"); err != nil {
		return err
	}
	if _, err := gitIn(r.work, "commit", "-q", "--allow-empty", "-m", msg); err != nil {
		return err
	}
	_, err := gitIn(r.work, "push", "-q", r.bare, "HEAD:main")
	return err
}

// gitIn runs git in dir without the user's or the system's configuration.
func gitIn(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "user.name=twin", "-c", "user.email=twin@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &gitError{args: args, out: strings.TrimSpace(string(out)), err: err}
	}
	return string(out), nil
}

type gitError struct {
	args []string
	out  string
	err  error
}

func (e *gitError) Error() string {
	return "git " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.out
}
