package argocdcmp

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const okManifest = `echo '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"ok"}}'`

// Pins plugin name/version matching: the Application's plugin name must be
// the socket name "<name>-<version>" (PluginConfig.Address,
// DetectConfigManagementPlugin dialling "<name>.sock"), and the dial error
// wording of cmpSupports.
func TestPluginNameVersionMatching(t *testing.T) {
	tests := []struct {
		name, version, appPlugin string
		wantErr                  string
	}{
		{name: "cmp", version: "", appPlugin: "cmp"},
		{name: "cmp", version: "v1.0", appPlugin: "cmp-v1.0"},
		{name: "cmp", version: "v1.0", appPlugin: "cmp",
			wantErr: `CMP processing failed for application "guestbook": could not find cmp-server plugin with name "cmp" supporting the given repository: error dialing to cmp-server for plugin cmp.sock: error dial proxy: dial unix /home/argocd/cmp-server/plugins/cmp.sock: connect: no such file or directory`},
		{name: "cmp", version: "", appPlugin: "cmp-v1.0",
			wantErr: `CMP processing failed for application "guestbook": could not find cmp-server plugin with name "cmp-v1.0" supporting the given repository: error dialing to cmp-server for plugin cmp-v1.0.sock: error dial proxy: dial unix /home/argocd/cmp-server/plugins/cmp-v1.0.sock: connect: no such file or directory`},
		{name: "cmp", version: "", appPlugin: "../cmp",
			wantErr: `CMP processing failed for application "guestbook": could not find cmp-server plugin with name "../cmp" supporting the given repository: invalid socket file path, "../cmp.sock" is outside plugin socket dir "/home/argocd/cmp-server/plugins"`},
	}
	for _, tt := range tests {
		t.Run(tt.appPlugin+"@"+tt.name+"-"+tt.version, func(t *testing.T) {
			p := shPlugin(okManifest)
			p.Metadata.Name, p.Spec.Version = tt.name, tt.version
			app := testApp()
			app.Plugin.Name = tt.appPlugin
			res, err := run(t, p, appRepo(t, nil), app, testOptions(t))
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, res.Manifests, 1)
			assert.False(t, res.Discovered, "chosen by name, no discover section")
			assert.Empty(t, res.Matches, "no discover section: no MatchRepository RPC")
		})
	}
}

// discoverPlugin returns a plugin with the given discover section.
func discoverPlugin(d DiscoverSpec) *Plugin {
	p := shPlugin(okManifest)
	p.Spec.Discover = d
	return p
}

// Pins the routing rules of GetAppSourceType, DetectConfigManagementPlugin,
// cmpSupports and Service.matchRepository for each discover method.
func TestDiscovery(t *testing.T) {
	type mode int
	const (
		auto   mode = iota // no plugin section
		empty              // plugin: {}
		byName             // plugin: {name: test-cmp}
	)
	repoFiles := map[string]file{
		"apps/web/main.cmp":        {content: "x"},
		"apps/web/nested/deep.jnk": {content: "x"},
		"apps/other/x.cmp":         {content: "x"},
		"top.cmp":                  {content: "x"},
		"apps/web/linkdir":         {link: "nested"},
	}
	tests := []struct {
		name       string
		discover   DiscoverSpec
		mode       mode
		extraFiles map[string]file
		// wantType is the source type; "Plugin" with wantErr == "" means
		// manifests were generated.
		wantType       string
		wantDiscovered bool
		wantErr        string
		wantMatches    int
	}{
		{name: "no discover, auto: not a plugin app", mode: auto, wantType: "Directory"},
		{name: "no discover, auto, kustomization present", mode: auto, wantType: "Kustomize",
			extraFiles: map[string]file{"apps/web/kustomization.yaml": {content: "{}"}}},
		{name: "no discover, auto, Chart.yaml suffix", mode: auto, wantType: "Helm",
			extraFiles: map[string]file{"apps/web/MyChart.yaml": {content: "{}"}}},
		{name: "no discover, plugin: {}", mode: empty, wantType: "Plugin",
			wantErr: `CMP processing failed for application "guestbook": could not find plugin supporting the given repository`},
		{name: "no discover, named", mode: byName, wantType: "Plugin"},

		{name: "fileName matches in the app dir", discover: DiscoverSpec{FileName: "*.cmp"}, mode: auto,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 2},
		{name: "fileName is relative to the app dir, not the repo root", discover: DiscoverSpec{FileName: "top.cmp"}, mode: auto,
			wantType: "Directory", wantMatches: 1},
		{name: "fileName may climb out of the app dir", discover: DiscoverSpec{FileName: "../../top.cmp"}, mode: auto,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 2},
		{name: "fileName is filepath.Glob: no **", discover: DiscoverSpec{FileName: "**/*.jnk"}, mode: auto,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 2}, // ** acts as *: nested/deep.jnk
		{name: "fileName no match, plugin: {}", discover: DiscoverSpec{FileName: "*.nope"}, mode: empty,
			wantType: "Plugin", wantMatches: 1,
			wantErr: `CMP processing failed for application "guestbook": could not find plugin supporting the given repository`},
		{name: "fileName no match, named: discovery still applies", discover: DiscoverSpec{FileName: "*.nope"}, mode: byName,
			wantType: "Plugin", wantMatches: 1,
			wantErr: `CMP processing failed for application "guestbook": could not find cmp-server plugin with name "test-cmp" supporting the given repository`},
		{name: "fileName bad pattern", discover: DiscoverSpec{FileName: "[x"}, mode: byName, wantType: "Plugin", wantMatches: 1,
			wantErr: `could not find cmp-server plugin with name "test-cmp" supporting the given repository: error checking repository support for plugin test-cmp.sock: error receiving stream response: rpc error: code = Unknown desc = match repository error: error finding filename match for pattern`},
		{name: "fileName wins over glob", discover: DiscoverSpec{FileName: "*.nope", Find: FindSpec{Glob: "**/*.cmp"}}, mode: auto,
			wantType: "Directory", wantMatches: 1},

		{name: "glob ** recursive", discover: DiscoverSpec{Find: FindSpec{Glob: "**/*.jnk"}}, mode: empty,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},
		{name: "glob **/ matches zero directories", discover: DiscoverSpec{Find: FindSpec{Glob: "**/main.cmp"}}, mode: empty,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},
		{name: "glob walk root is followed when it is a symlink", discover: DiscoverSpec{Find: FindSpec{Glob: "linkdir/*.jnk"}}, mode: byName,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},
		{name: "glob walk does not descend into symlinked dirs", discover: DiscoverSpec{Find: FindSpec{Glob: "**/only.lnk"}}, mode: empty,
			extraFiles: map[string]file{"elsewhere/only.lnk": {}, "apps/web/to-elsewhere": {link: "../../elsewhere"}},
			wantType:   "Plugin", wantMatches: 1,
			wantErr: `could not find plugin supporting the given repository`},
		{name: "glob trailing ** is one level", discover: DiscoverSpec{Find: FindSpec{Glob: "**"}}, mode: empty,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},
		{name: "glob without wildcard and missing file is an error", discover: DiscoverSpec{Find: FindSpec{Glob: "missing.txt"}}, mode: byName,
			wantType: "Plugin", wantMatches: 1,
			wantErr: `error finding glob match for pattern`},
		{name: "glob error is swallowed in auto-detection", discover: DiscoverSpec{Find: FindSpec{Glob: "missing.txt"}}, mode: auto,
			wantType: "Directory", wantMatches: 1},
		{name: "glob ? is literal", discover: DiscoverSpec{Find: FindSpec{Glob: "*/deep.jn?"}}, mode: empty, wantType: "Plugin", wantMatches: 1,
			wantErr: `could not find plugin supporting the given repository`},
		{name: "glob brace alternation", discover: DiscoverSpec{Find: FindSpec{Glob: "**/*.{jnk,zzz}"}}, mode: empty,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},

		{name: "command prints: match", discover: DiscoverSpec{Find: FindSpec{Command: sh("ls main.cmp")}}, mode: auto,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 2},
		{name: "command runs in the app dir", discover: DiscoverSpec{Find: FindSpec{Command: sh(`test "$(basename "$(pwd)")" = web && echo yes`)}}, mode: empty,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},
		{name: "command exit 0 without output: no match", discover: DiscoverSpec{Find: FindSpec{Command: sh("true")}}, mode: empty,
			wantType: "Plugin", wantMatches: 1,
			wantErr: `CMP processing failed for application "guestbook": could not find plugin supporting the given repository`},
		{name: "command output is a newline: still a match", discover: DiscoverSpec{Find: FindSpec{Command: sh(`printf '\n\n'`)}}, mode: empty,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},
		{name: "command failing, named", discover: DiscoverSpec{Find: FindSpec{Command: sh("echo no >&2; exit 3")}}, mode: byName,
			wantType: "Plugin", wantMatches: 1,
			wantErr: "CMP processing failed for application \"guestbook\": could not find cmp-server plugin with name \"test-cmp\" supporting the given repository: error checking repository support for plugin test-cmp.sock: error receiving stream response: rpc error: code = Unknown desc = match repository error: error running find command: `sh -c \"echo no >&2; exit 3\"` failed exit status 3: no"},
		{name: "command args appended", discover: DiscoverSpec{Find: FindSpec{Command: Command{Command: []string{"sh", "-c", `echo "$0"`}, Args: []string{"arg0"}}}}, mode: empty,
			wantType: "Plugin", wantDiscovered: true, wantMatches: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]file{}
			for k, v := range repoFiles {
				files[k] = v
			}
			for k, v := range tt.extraFiles {
				files[k] = v
			}
			repo := writeRepo(t, files)
			app := testApp()
			switch tt.mode {
			case auto:
				app.Plugin = nil
			case empty:
				app.Plugin = &AppPlugin{}
			}
			p := discoverPlugin(tt.discover)

			opts := testOptions(t)
			sel, derr := Discover(context.Background(), p, repo, app, opts)
			res, err := run(t, p, repo, app, opts)
			assert.Equal(t, tt.wantType, res.SourceType)
			assert.Equal(t, tt.wantType, sel.SourceType, "Discover agrees with Run")
			assert.Len(t, res.Matches, tt.wantMatches, "MatchRepository calls")
			if tt.wantType != "Plugin" {
				var np *NotPluginError
				require.ErrorAs(t, err, &np)
				assert.Equal(t, tt.wantType, np.SourceType)
				require.ErrorAs(t, derr, &np)
				return
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				require.Error(t, derr)
				// Same message up to the random request directory.
				reqDir := regexp.MustCompile(`/_cmp_server/[0-9a-f-]{36}/`)
				assert.Contains(t, derr.Error(), tt.wantErr)
				assert.Equal(t, reqDir.ReplaceAllString(err.Error(), "/<req>/"), reqDir.ReplaceAllString(derr.Error(), "/<req>/"))
				return
			}
			require.NoError(t, err)
			require.NoError(t, derr)
			assert.Len(t, res.Manifests, 1)
			assert.Equal(t, tt.wantDiscovered, res.Discovered)
			assert.Equal(t, tt.wantDiscovered, sel.Discovered)
		})
	}
}

// Pins which env each discovery call gets: source-type auto-detection
// (GenerateManifests → GetAppSourceType) passes newEnv's nine variables
// only; plugin detection (runConfigManagementPluginSidecars) passes the full
// getPluginEnvs list. Each MatchRepository RPC gets its own copy of the
// repository, so files a find command writes are gone for generate.
func TestDiscoveryEnvironments(t *testing.T) {
	p := discoverPlugin(DiscoverSpec{Find: FindSpec{Command: sh(`touch written-by-find; env | grep -E '^(ARGOCD_|KUBE_|PARAM_)' | sort`)}})
	p.Spec.Generate = sh(`test -e written-by-find && echo leaked >&2 && exit 1; ` + okManifest)
	app := testApp()
	app.Plugin = nil
	res, err := run(t, p, appRepo(t, nil), app, testOptions(t))
	require.NoError(t, err)
	require.Len(t, res.Matches, 2)
	assert.Equal(t, "GetAppSourceType", res.Matches[0].Stage)
	assert.Equal(t, manifestBuildEnv(app), res.Matches[0].Env)
	assert.Equal(t, "DetectConfigManagementPlugin", res.Matches[1].Stage)
	assert.Equal(t, res.RequestEnv, res.Matches[1].Env)
	assert.Contains(t, res.Matches[1].Env, "KUBE_VERSION=1.30.2")
	assert.True(t, res.Discovered)

	var finds []CommandRun
	for _, c := range res.Commands {
		if c.Phase == "discover" {
			finds = append(finds, c)
		}
	}
	require.Len(t, finds, 2)
	first := strings.Split(strings.TrimSpace(finds[0].Stdout), "\n")
	want := append([]string(nil), manifestBuildEnv(app)...)
	sort.Strings(want)
	assert.Equal(t, want, first)
	assert.NotEqual(t, finds[0].Dir, finds[1].Dir, "each RPC has its own request directory")
	assert.True(t, strings.HasSuffix(finds[0].Dir, "/apps/web"))
}

// Pins matching with a plugin-env-dependent find command: named plugins are
// matched with the full env, so ARGOCD_ENV_* can steer discovery.
func TestDiscoveryUsesPluginEnvWhenNamed(t *testing.T) {
	p := discoverPlugin(DiscoverSpec{Find: FindSpec{Command: sh(`test "$ARGOCD_ENV_ENABLE" = yes && echo ok`)}})
	app := testApp()
	app.Plugin.Env = []EnvEntry{{Name: "ENABLE", Value: "yes"}}
	_, err := run(t, p, appRepo(t, nil), app, testOptions(t))
	require.NoError(t, err)

	app.Plugin.Env[0].Value = "no"
	_, err = run(t, p, appRepo(t, nil), app, testOptions(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "error running find command: `sh -c \"test \\\"$ARGOCD_ENV_ENABLE\\\" = yes && echo ok\"` failed exit status 1")
}

// Pins the zglob v0.0.6 translation directly.
func TestZGlob(t *testing.T) {
	root := writeRepo(t, map[string]file{
		"a/b/c/x.yaml":  {},
		"a/x.yaml":      {},
		"a/y.yml":       {},
		"weird[1]/z.md": {},
		"q?.txt":        {},
		"qa.txt":        {},
		"link":          {link: "a"},
		"d/dir.yaml":    {dir: true},
	})
	env := func(name string) string {
		if name == "SUB" {
			return "a"
		}
		return ""
	}
	tests := []struct {
		pattern string
		want    []string
		wantErr bool
	}{
		{pattern: "**/x.yaml", want: []string{"a/b/c/x.yaml", "a/x.yaml"}},
		{pattern: "a/**/x.yaml", want: []string{"a/b/c/x.yaml", "a/x.yaml"}},
		{pattern: "*/x.yaml", want: []string{"a/x.yaml"}},
		{pattern: "a/*", want: []string{"a/b", "a/x.yaml", "a/y.yml"}},
		{pattern: "a/**", want: []string{"a/b", "a/x.yaml", "a/y.yml"}},
		{pattern: "a/*.{yaml,yml}", want: []string{"a/x.yaml", "a/y.yml"}},
		{pattern: "a/[xy].y*", want: []string{"a/x.yaml", "a/y.yml"}},
		{pattern: "q?.txt", want: []string{"q?.txt"}}, // no '*' or '{': plain stat
		{pattern: "q*.txt", want: []string{"q?.txt", "qa.txt"}},
		{pattern: "*?.txt", want: []string{"q?.txt"}}, // '?' is literal
		{pattern: "*/dir.yaml", want: []string{"d/dir.yaml"}},
		{pattern: "link/*.yaml", want: []string{"link/x.yaml"}}, // the walk root is stat'ed, so a linked root is read
		{pattern: "*/*/c/*.yaml", want: []string{"a/b/c/x.yaml"}},
		{pattern: "$SUB/*.yml", want: []string{"a/y.yml"}},
		{pattern: "weird[1]/*.md", want: nil},   // the literal walk root exists, but the regexp reads [1] as a class
		{pattern: "nope/**/x", wantErr: true},   // missing walk root
		{pattern: "missing.txt", wantErr: true}, // plain stat fails
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			got, err := zglobMatches(filepath.Join(root, tt.pattern), env)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			var rel []string
			for _, g := range got {
				r, err := filepath.Rel(root, g)
				require.NoError(t, err)
				rel = append(rel, r)
			}
			sort.Strings(rel)
			assert.Equal(t, tt.want, rel)
		})
	}
	_, err := zglobMatches(filepath.Join(root, "missing.txt"), env)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
