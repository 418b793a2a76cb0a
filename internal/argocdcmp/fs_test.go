package argocdcmp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statScript prints "<mode> <path>" lines for the given paths as a
// ConfigMap-free YAML list under data, one key per path.
const statScript = `set -e
echo "apiVersion: v1"
echo "kind: ConfigMap"
echo "metadata: {name: modes}"
echo "data:"
for f in "$@"; do echo "  \"$f\": \"$(stat -c %a "$f")\""; done
`

func modesPlugin(paths ...string) *Plugin {
	p := shPlugin("")
	p.Spec.Generate = Command{Command: append([]string{"sh", "-c", statScript, "sh"}, paths...)}
	return p
}

// Pins util/io/files/tar.go untar: regular files 0644 and directories 0755
// unless preserveFileMode, then the archived (tar.FileInfoHeader) mode.
func TestFileModes(t *testing.T) {
	repo := appRepo(t, map[string]file{
		"apps/web/tool.sh":    {content: "#!/bin/sh\necho ran\n", mode: 0o755},
		"apps/web/secret.txt": {content: "s", mode: 0o600},
		"apps/web/private":    {dir: true, mode: 0o700},
		"apps/web/private/f":  {content: "f", mode: 0o640},
		"apps/web/ro":         {content: "r", mode: 0o444},
	})
	paths := []string{"tool.sh", "secret.txt", "private", "private/f", "ro", "."}
	tests := []struct {
		preserve bool
		want     map[string]string
	}{
		{false, map[string]string{"tool.sh": "644", "secret.txt": "644", "private": "755", "private/f": "644", "ro": "644", ".": "755"}},
		{true, map[string]string{"tool.sh": "755", "secret.txt": "600", "private": "700", "private/f": "640", "ro": "444", ".": "755"}},
	}
	for _, tt := range tests {
		p := modesPlugin(paths...)
		p.Spec.PreserveFileMode = tt.preserve
		res, err := run(t, p, repo, testApp(), testOptions(t))
		require.NoError(t, err, "preserve=%v", tt.preserve)
		assert.Equal(t, tt.want, cmData(t, res, 0), "preserve=%v", tt.preserve)
	}
}

// Pins the consequence the research note predicted: a committed executable
// cannot be executed by the plugin unless preserveFileMode is set.
func TestRepoExecutableNeedsPreserveFileMode(t *testing.T) {
	repo := appRepo(t, map[string]file{
		"tools/fn": {content: "#!/bin/sh\necho '{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"from-fn\"}}'\n", mode: 0o755},
	})
	p := shPlugin("../../tools/fn")

	_, err := run(t, p, repo, testApp(), testOptions(t))
	require.Error(t, err)
	assert.Regexp(t, "`sh -c ../../tools/fn` failed exit status 126: sh: 1: ../../tools/fn: Permission denied$", err.Error())

	p.Spec.PreserveFileMode = true
	res, err := run(t, p, repo, testApp(), testOptions(t))
	require.NoError(t, err)
	require.Len(t, res.Manifests, 1)
	assert.Equal(t, "from-fn", res.Manifests[0].GetName())
}

// Pins generateManifestGeneric: cmd.Dir is <workdir>/<app path>, the work
// dir is <ARGOCD_CMP_WORKDIR>/_cmp_server/<uuid> (common.GetCMPWorkDir,
// files.CreateTempDir), the whole repository root is copied (the app can
// read files outside its path), and the request directory is removed
// afterwards.
func TestWorkingDirectory(t *testing.T) {
	repo := appRepo(t, map[string]file{"shared/base.txt": {content: "base"}})
	p := shPlugin(configMap("cwd", map[string]string{
		"pwd":    "$(pwd)",
		"shared": "$(cat ../../shared/base.txt)",
		"readme": "$(cat README.md)",
	}))
	opts := testOptions(t)
	res, err := run(t, p, repo, testApp(), opts)
	require.NoError(t, err)
	data := cmData(t, res, 0)
	assert.Equal(t, res.AppDir, data["pwd"])
	assert.Equal(t, filepath.Join(res.WorkDir, "apps/web"), res.AppDir)
	assert.Equal(t, filepath.Join(opts.WorkDir, "_cmp_server"), filepath.Dir(res.WorkDir))
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, filepath.Base(res.WorkDir))
	assert.Equal(t, "base", data["shared"])
	assert.Equal(t, "web", data["readme"])
	_, err = os.Stat(res.WorkDir)
	assert.True(t, os.IsNotExist(err), "request directory removed after the RPC")

	// An app at the repository root runs in the request directory itself.
	app := testApp()
	app.Path = ""
	res, err = run(t, p, repo, app, opts)
	require.NoError(t, err)
	assert.Equal(t, res.WorkDir, cmData(t, res, 0)["pwd"])
	assert.Contains(t, res.RequestEnv, "ARGOCD_APP_SOURCE_PATH=")
}

// Pins that the repo-server sends .git along (no default
// --plugin-tar-exclude) and that exclusion globs apply to the relative path
// (matchesExclusionPattern).
func TestGitDirectoryAndExclusions(t *testing.T) {
	repo := appRepo(t, map[string]file{
		".git/HEAD":          {content: "ref: refs/heads/main\n"},
		"apps/web/x.secret":  {content: "s"},
		"apps/web/keep.yaml": {content: "k"},
		"docs/a/b/c.md":      {content: "c"},
	})
	p := shPlugin(configMap("ls", map[string]string{
		"git":    "$(test -f ../../.git/HEAD && echo yes || echo no)",
		"secret": "$(test -f x.secret && echo yes || echo no)",
		"docs":   "$(test -f ../../docs/a/b/c.md && echo yes || echo no)",
	}))
	tests := []struct {
		excluded []string
		want     map[string]string
	}{
		{nil, map[string]string{"git": "yes", "secret": "yes", "docs": "yes"}},
		{[]string{".git"}, map[string]string{"git": "no", "secret": "yes", "docs": "yes"}},
		// Without "/" filepath.Match runs against the relative path, so
		// "*.secret" only matches at the root.
		{[]string{"*.secret"}, map[string]string{"git": "yes", "secret": "yes", "docs": "yes"}},
		{[]string{"**/*.secret", "docs/**"}, map[string]string{"git": "yes", "secret": "no", "docs": "no"}},
	}
	for _, tt := range tests {
		opts := testOptions(t)
		opts.TarExcludedGlobs = tt.excluded
		res, err := run(t, p, repo, testApp(), opts)
		require.NoError(t, err, "%v", tt.excluded)
		assert.Equal(t, tt.want, cmData(t, res, 0), "%v", tt.excluded)
	}
}

// Pins symlink handling: CheckOutOfBoundsSymlinks in the repo-server
// (util/app/path/path.go), Walk not following links and untar re-creating
// them relative to their directory (util/io/files/tar.go).
func TestSymlinks(t *testing.T) {
	script := configMap("links", map[string]string{
		"rel":     "$(readlink rel-link)",
		"content": "$(cat rel-link)",
		"dir":     "$(readlink ../../dirlink)",
		"dirfile": "$(cat ../../dirlink/base.txt)",
	})
	repo := appRepo(t, map[string]file{
		"shared/base.txt":   {content: "base"},
		"apps/web/rel-link": {link: "../../shared/base.txt"},
		"dirlink":           {link: "shared"},
	})
	res, err := run(t, shPlugin(script), repo, testApp(), testOptions(t))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"rel": "../../shared/base.txt", "content": "base", "dir": "shared", "dirfile": "base",
	}, cmData(t, res, 0))

	tests := []struct {
		name    string
		link    string
		allow   bool
		wantErr string
		want    string
	}{
		{name: "absolute link refused by the repo-server", link: "/etc/hostname",
			wantErr: "repository contains out-of-bounds symlinks. file: apps/web/bad"},
		{name: "escaping link refused by the repo-server", link: "../../../outside",
			wantErr: "repository contains out-of-bounds symlinks. file: apps/web/bad"},
		{name: "with --allow-oob-symlinks an absolute target is re-rooted", link: "/etc/hostname", allow: true,
			want: "etc/hostname"},
		{name: "with --allow-oob-symlinks an escaping target fails in the sidecar", link: "../../../outside", allow: true,
			wantErr: `CMP processing failed for application "guestbook": error generating manifests in cmp: rpc error: code = Unknown desc = generate manifest error receiving stream: error decompressing tgz file: error checking symlink "../outside" target: statat ../outside: path escapes from parent`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := appRepo(t, map[string]file{"apps/web/bad": {link: tt.link}})
			opts := testOptions(t)
			opts.AllowOutOfBoundsSymlinks = tt.allow
			res, err := run(t, shPlugin(configMap("l", map[string]string{"bad": "$(readlink bad)"})), repo, testApp(), opts)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), tt.wantErr), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cmData(t, res, 0)["bad"])
		})
	}
}

// Pins apppathutil.Path errors, "no files to send" from
// GetCompressedRepoAndMetadata, and the harness's refusal of
// .argocd-source*.yaml overrides.
func TestRepositoryPreconditions(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]file
		path    string
		wantErr string
		check   func(t *testing.T, err error)
	}{
		{name: "absolute app path", path: "/apps/web", wantErr: "/apps/web: app path is absolute"},
		{name: "app path outside", path: "../x", wantErr: "../x: app path outside root"},
		{name: "missing app path", path: "apps/nope", wantErr: "apps/nope: app path does not exist"},
		{name: "app path is a file", path: "README.md", wantErr: "README.md: app path is not a directory"},
		{name: "no regular files at all", files: map[string]file{"apps/web": {dir: true}}, path: "apps/web",
			check: func(t *testing.T, err error) {
				assert.Regexp(t, `^CMP processing failed for application "guestbook": error generating manifests in cmp: error sending file to cmp-server: no files to send\(/.*\)$`, err.Error())
			}},
		{name: "source override file", files: map[string]file{"apps/web/.argocd-source.yaml": {content: "plugin: {}"}, "README.md": {}}, path: "apps/web",
			check: func(t *testing.T, err error) {
				var so *SourceOverrideError
				require.ErrorAs(t, err, &so)
				assert.Equal(t, ".argocd-source.yaml", filepath.Base(so.File))
			}},
		{name: "per-app source override file", files: map[string]file{"apps/web/.argocd-source-guestbook.yaml": {content: "{}"}, "README.md": {}}, path: "apps/web",
			check: func(t *testing.T, err error) {
				var so *SourceOverrideError
				require.True(t, errors.As(err, &so))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := tt.files
			if files == nil {
				files = map[string]file{"apps/web/a": {}, "README.md": {}}
			}
			app := testApp()
			app.Path = tt.path
			_, err := run(t, shPlugin("true"), writeRepo(t, files), app, testOptions(t))
			require.Error(t, err)
			if tt.wantErr != "" {
				assert.Equal(t, tt.wantErr, err.Error())
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

// Pins matchesExclusionPattern's two regimes.
func TestMatchesExclusionPattern(t *testing.T) {
	tests := []struct {
		pattern, rel string
		want         bool
	}{
		{".git", ".git", true},
		{".git", "sub/.git", false},
		{"*.md", "README.md", true},
		{"*.md", "docs/README.md", false}, // filepath.Match: '*' does not cross '/'
		{"**/*.md", "README.md", true},    // "**" matches zero segments
		{"**/*.md", "a/b/README.md", true},
		{"docs/**", "docs", true},
		{"docs/**", "docs/x/y", true},
		{"docs/*", "docs/x/y", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
	}
	for _, tt := range tests {
		got, err := matchesExclusionPattern(tt.pattern, tt.rel)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, "%s vs %s", tt.pattern, tt.rel)
	}
}

// Pins a consequence of untar creating directories through os.Root with the
// archived mode when preserveFileMode is set: os.Root.MkdirAll refuses
// modes with bits beyond 0777, so a setgid directory in the repository
// fails the request; without preserveFileMode the fixed 0755 is used.
func TestPreserveFileModeSetgidDirectory(t *testing.T) {
	repo := appRepo(t, map[string]file{"apps/web/sg/f": {content: "x"}})
	require.NoError(t, os.Chmod(filepath.Join(repo, "apps/web/sg"), os.ModeSetgid|0o755))
	p := shPlugin(okManifest)
	_, err := run(t, p, repo, testApp(), testOptions(t))
	require.NoError(t, err)

	p.Spec.PreserveFileMode = true
	_, err = run(t, p, repo, testApp(), testOptions(t))
	require.EqualError(t, err, genFailPrefix[:len(genFailPrefix)-len("error generating manifests: ")]+
		"generate manifest error receiving stream: error decompressing tgz file: error creating nested folders: mkdirat apps/web/sg: unsupported file mode")
}
