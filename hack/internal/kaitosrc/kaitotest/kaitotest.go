// Package kaitotest builds small KAITO-like Git repositories, with files
// committed under release tags, for the tests of the hack/derive-kaito-*
// commands.
package kaitotest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Repo is a Git repository in a temporary directory.
type Repo struct {
	t   *testing.T
	Dir string
}

// New makes an empty repository.
func New(t *testing.T) *Repo {
	r := &Repo{t, t.TempDir()}
	r.Git("init", "-q")
	return r
}

// Git runs git in the repository; a failure fails the test.
func (r *Repo) Git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.Dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
}

// Write writes a file of the work tree.
func (r *Repo) Write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.Dir, path)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

// Commit commits the work tree and tags the commit with each tag.
func (r *Repo) Commit(tags ...string) {
	r.t.Helper()
	r.Git("add", "-A")
	r.Git("commit", "-qm", "c")
	for _, tag := range tags {
		r.Git("tag", tag)
	}
}
