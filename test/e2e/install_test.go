package e2e

import (
	"archive/zip"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// modulePath is the module `go install ...@TAG` fetches.
const modulePath = "github.com/airunway-render/airunway-render"

// TestGoInstallFromATag runs the README's `go install ...@version` against
// a module proxy that serves this commit's tracked files as a tagged
// release, the way proxy.golang.org will serve a published tag: a file
// proxy for this module, the machine's module cache for its dependencies,
// a fresh module cache and no network. Both binaries install, run, and
// report the tag.
func TestGoInstallFromATag(t *testing.T) {
	const tag = "v0.1.0-e2e"
	proxy := t.TempDir()
	dir := filepath.Join(proxy, modulePath, "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	writeModuleZip(t, filepath.Join(dir, tag+".zip"), tag)
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, tag+".mod"), gomod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, tag+".info"), []byte(`{"Version":"`+tag+`","Time":"2026-11-25T00:00:00Z"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list"), []byte(tag+"\n"), 0o644))

	modcache := strings.TrimSpace(mustRun(t, repoRoot, nil, "go", "env", "GOMODCACHE").stdout)
	gobin, fresh := t.TempDir(), t.TempDir()
	env := []string{
		"GOBIN=" + gobin,
		"GOMODCACHE=" + fresh,
		// This module from the tag's zip, its dependencies from the cache
		// of modules this machine already verified against go.sum.
		"GOPROXY=file://" + proxy + ",file://" + filepath.Join(modcache, "cache", "download"),
		"GONOSUMDB=" + modulePath, "GOSUMDB=off", "GOFLAGS=-modcacherw -trimpath", "CGO_ENABLED=0",
	}
	t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", fresh).Run() })
	for _, cmd := range []string{"airunway-render", "airunway-status-reporter"} {
		mustRun(t, t.TempDir(), env, "go", "install", modulePath+"/cmd/"+cmd+"@"+tag)
		res := mustRun(t, t.TempDir(), nil, filepath.Join(gobin, cmd), "--version")
		require.Regexp(t, "^"+cmd+" (version )?"+tag+"\n$", res.stdout, "a go-installed binary reports its tag")
	}
	res := mustRun(t, repoRoot, nil, filepath.Join(gobin, "airunway-render"), "render", "--capabilities",
		"examples/kustomize/clusters/dev/capabilities.yaml", "examples/kustomize/base")
	require.Contains(t, res.stdout, "kind: Deployment\n")
}

// writeModuleZip writes the tracked files of the repository as the module
// zip of tag: every path under "module@tag/".
func writeModuleZip(t *testing.T, path, tag string) {
	t.Helper()
	files := strings.Split(strings.TrimSpace(mustRun(t, repoRoot, nil, "git", "ls-files", "-z").stdout), "\x00")
	out, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(out)
	for _, f := range files {
		if f == "" {
			continue
		}
		info, err := os.Lstat(filepath.Join(repoRoot, f))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a symbolic link (module zips hold neither)
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		require.NoError(t, err)
		w, err := zw.Create(modulePath + "@" + tag + "/" + f)
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, out.Close())
}

// TestMakeInstall: the README's install from a clone puts both binaries
// into GOBIN, stamped with `git describe`.
func TestMakeInstall(t *testing.T) {
	gobin := t.TempDir()
	mustRun(t, repoRoot, []string{"GOBIN=" + gobin}, "make", "--no-print-directory", "install")
	describe := strings.TrimSpace(mustRun(t, repoRoot, nil, "git", "describe", "--tags", "--always", "--dirty").stdout)
	for _, cmd := range []string{"airunway-render", "airunway-status-reporter"} {
		res := mustRun(t, t.TempDir(), nil, filepath.Join(gobin, cmd), "--version")
		require.Contains(t, res.stdout, describe, cmd)
	}
}

// TestExamplesInstallAVersionThatExists: every `go install` of this
// module in the examples names a version Go can fetch: a tag the
// repository has, a commit, or the main branch (no release is tagged yet;
// @v0.1.0 was named once and could not be installed).
func TestExamplesInstallAVersionThatExists(t *testing.T) {
	tags := mustRun(t, repoRoot, nil, "git", "tag", "--list").stdout
	install := regexp.MustCompile(`go install ` + regexp.QuoteMeta(modulePath) + `/cmd/[a-z-]+@(\S+)`)
	found := 0
	err := filepath.WalkDir(filepath.Join(repoRoot, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range install.FindAllStringSubmatch(string(data), -1) {
			found++
			v := m[1]
			ok := v == "main" || regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(v) || slices.Contains(strings.Fields(tags), v)
			require.True(t, ok, "%s installs @%s: not a tag of this repository, a commit or main", p, v)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotZero(t, found, "the examples install airunway-render somewhere")
}
