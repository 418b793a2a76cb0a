package argocdcmp

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const genFailPrefix = `CMP processing failed for application "guestbook": error generating manifests in cmp: rpc error: code = Unknown desc = error generating manifests: `

// Pins generateManifest (cmpserver/plugin/plugin.go): init runs first in the
// same directory and its output is ignored; a failing init fails the
// request before generate; the CmdError / GetCommandArgsToLog format and
// the wrapping done by the RPC, runConfigManagementPluginSidecars and
// GenerateManifests.
func TestInitAndGenerateFailures(t *testing.T) {
	tests := []struct {
		name     string
		init     *Command
		generate Command
		wantErr  string
		check    func(t *testing.T, res *Result)
	}{
		{
			name:     "init output ignored, its files visible to generate",
			init:     &Command{Command: []string{"sh", "-c", `echo '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"from-init"}}'; echo from-init > made-by-init`}},
			generate: sh(configMap("gen", map[string]string{"seen": "$(cat made-by-init)"})),
			check: func(t *testing.T, res *Result) {
				require.Len(t, res.Manifests, 1)
				assert.Equal(t, "gen", res.Manifests[0].GetName())
				assert.Equal(t, "from-init", cmData(t, res, 0)["seen"])
				require.Len(t, res.Commands, 2)
				assert.Equal(t, "init", res.Commands[0].Phase)
				assert.Equal(t, res.Commands[0].Dir, res.Commands[1].Dir)
			},
		},
		{
			name:     "init failure stops before generate",
			init:     &Command{Command: []string{"sh", "-c"}, Args: []string{"echo nope >&2; exit 2"}},
			generate: sh("echo generate-ran >&2; " + okManifest),
			wantErr:  genFailPrefix + "`sh -c \"echo nope >&2; exit 2\"` failed exit status 2: nope",
			check: func(t *testing.T, res *Result) {
				require.Len(t, res.Commands, 1)
				assert.Equal(t, "init", res.Commands[0].Phase)
			},
		},
		{
			name:     "generate failure: stderr trimmed, stdout discarded",
			generate: sh("echo partial; printf '  boom\\n\\n' >&2; exit 3"),
			wantErr:  genFailPrefix + "`sh -c \"echo partial; printf '  boom\\\\n\\\\n' >&2; exit 3\"` failed exit status 3: boom",
			check: func(t *testing.T, res *Result) {
				assert.Empty(t, res.Manifests)
				assert.Equal(t, "partial", res.Stdout)
			},
		},
		{
			name:     "no stderr: no trailing colon",
			generate: Command{Command: []string{"false"}},
			wantErr:  genFailPrefix + "`false` failed exit status 1",
		},
		{
			name:     "argv rendering: empty and whitespace arguments",
			generate: Command{Command: []string{"sh", "-c", `exit 4`}, Args: []string{"", "a\tb", "plain"}},
			wantErr:  genFailPrefix + "`sh -c \"exit 4\" \"\" \"a\\tb\" plain` failed exit status 4",
		},
		{
			name:     "killed by a signal",
			generate: sh("kill -9 $$"),
			wantErr:  genFailPrefix + "`sh -c \"kill -9 $$\"` failed signal: killed",
		},
		{
			name:     "command not found: os/exec's error, not a CmdError",
			generate: Command{Command: []string{"definitely-not-a-command-xyz"}},
			wantErr:  genFailPrefix + `exec: "definitely-not-a-command-xyz": executable file not found in $PATH`,
		},
		{
			// A relative command is resolved in the app dir; without
			// preserveFileMode a committed script is not executable, and a
			// failed Start is returned as os/exec reports it.
			name:     "repository script as the command",
			generate: Command{Command: []string{"./gen.sh"}},
			wantErr:  genFailPrefix + "fork/exec ./gen.sh: permission denied",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := shPlugin("")
			p.Spec.Generate = tt.generate
			if tt.init != nil {
				p.Spec.Init = *tt.init
			}
			repo := appRepo(t, map[string]file{"apps/web/gen.sh": {content: "#!/bin/sh\n" + okManifest + "\n", mode: 0o755}})
			res, err := run(t, p, repo, testApp(), testOptions(t))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				var ce *CmdError
				if errors.As(err, &ce) {
					assert.Contains(t, err.Error(), ce.Error())
				}
			} else {
				require.NoError(t, err)
			}
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

// Pins the split of generate's stdout: strings.TrimSuffix(out, "\n")
// (runCommand), kube.SplitYAMLToString on the sidecar (YAMLOrJSONDecoder,
// empty and null documents dropped, JSON text out), kube.SplitYAML in the
// repo-server (kind required) and GenerateManifests' list flattening.
func TestStdoutSplitting(t *testing.T) {
	cm := func(n string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + n + "\n" }
	tests := []struct {
		name      string
		stdout    string
		wantNames []string
		wantCMP   []string
		wantErr   string
		wantWarn  bool
	}{
		{name: "single YAML doc", stdout: cm("a"), wantNames: []string{"a"},
			wantCMP: []string{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`}},
		{name: "multiple docs, leading and doubled separators", stdout: "---\n" + cm("a") + "---\n---\n" + cm("b") + "---\n", wantNames: []string{"a", "b"}},
		{name: "separator with trailing comment", stdout: cm("a") + "--- # next\n" + cm("b"), wantNames: []string{"a", "b"}},
		{name: "comment-only and null documents are dropped", stdout: "# just a comment\n---\nnull\n---\n~\n---\n" + cm("a"), wantNames: []string{"a"}},
		{name: "whitespace only", stdout: "\n\n  \n", wantNames: nil},
		{name: "document separators only", stdout: "---\n---\n", wantNames: nil},
		{name: "no trailing newline", stdout: strings.TrimSuffix(cm("a"), "\n"), wantNames: []string{"a"}},
		{name: "JSON object", stdout: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"j"}}`, wantNames: []string{"j"},
			wantCMP: []string{`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"j"}}`}},
		{name: "JSON stream", stdout: "{\"kind\":\"A\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"1\"}}\n{\"kind\":\"B\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"2\"}}\n{\"kind\":\"C\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"3\"}}", wantNames: []string{"1", "2", "3"}},
		{name: "pretty JSON stream", stdout: "{\n  \"kind\": \"A\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\"name\": \"1\"}\n}\n{\n  \"kind\": \"B\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\"name\": \"2\"}\n}\n", wantNames: []string{"1", "2"}},
		{name: "List kind is flattened", stdout: "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(cm("first"), "\n", "\n  ") + "\n- " + strings.ReplaceAll(cm("second"), "\n", "\n  "), wantNames: []string{"first", "second"}},
		{name: "any object with an items array is treated as a list", stdout: "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: inner}}\n", wantNames: []string{"inner"}},
		{name: "items: null list is dropped", stdout: "apiVersion: v1\nkind: ConfigMapList\nitems: null\n---\n" + cm("a"), wantNames: []string{"a"}},
		{name: "items: null with spec is kept", stdout: "apiVersion: v1\nkind: Thing\nmetadata: {name: s}\nspec: {}\nitems: null\n", wantNames: []string{"s"}},
		{name: "apiVersion is not required", stdout: "kind: ConfigMap\nmetadata: {name: nover}\n", wantNames: []string{"nover"}},
		{name: "empty output: warning only", stdout: "", wantNames: nil, wantWarn: true},

		{name: "top-level JSON array is an error", stdout: `[{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}]`,
			wantErr: `CMP processing failed for application "guestbook": failed to convert CMP manifests to unstructured objects: failed to unmarshal manifest: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}`},
		{name: "missing kind is an error", stdout: "apiVersion: v1\nmetadata: {name: a}\n",
			wantErr: `CMP processing failed for application "guestbook": failed to convert CMP manifests to unstructured objects: failed to unmarshal manifest: error unmarshaling JSON: while decoding JSON: Object 'Kind' is missing in '{"apiVersion":"v1","metadata":{"name":"a"}}'`},
		{name: "scalar document is an error", stdout: "hello\n",
			wantErr: `CMP processing failed for application "guestbook": failed to convert CMP manifests to unstructured objects: failed to unmarshal manifest:`},
		{name: "invalid YAML is a sidecar error", stdout: "a: [\n",
			wantErr: genFailPrefix + "failed to unmarshal manifest: error converting YAML to JSON: yaml: line 1: did not find expected node content"},
		{name: "text after a separator is a sidecar error", stdout: cm("a") + "--- junk\n" + cm("b"),
			wantErr: genFailPrefix + "failed to unmarshal manifest: invalid Yaml document separator: junk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := appRepo(t, map[string]file{"apps/web/out.txt": {content: tt.stdout}})
			res, err := run(t, shPlugin("cat out.txt"), repo, testApp(), testOptions(t))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), tt.wantErr), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSuffix(tt.stdout, "\n"), res.Stdout)
			var names []string
			for _, m := range res.Manifests {
				names = append(names, m.GetName())
			}
			assert.Equal(t, tt.wantNames, names)
			if tt.wantCMP != nil {
				assert.Equal(t, tt.wantCMP, res.CMPManifests)
			}
			var warned bool
			for _, w := range res.Warnings {
				if w.Phase == "generate" && w.Message == ZeroOutputWarning {
					warned = true
				}
			}
			assert.Equal(t, tt.wantWarn, warned)
		})
	}
}

// Pins runCommand's zero-output warning: logged for any successful command
// with an entirely empty stdout (init included), not for a lone newline.
func TestZeroOutputWarnings(t *testing.T) {
	p := shPlugin("echo")
	p.Spec.Init = sh("true")
	res, err := run(t, p, appRepo(t, nil), testApp(), testOptions(t))
	require.NoError(t, err)
	assert.Empty(t, res.Manifests)
	assert.Equal(t, []Warning{{Phase: "init", Argv: []string{"sh", "-c", "true"}, Message: ZeroOutputWarning}}, res.Warnings,
		"generate printed a newline: zero manifests but no warning")
}

// Pins the timeout machinery: the request deadline (Options.Timeout), the
// 100ms earlier RPC deadline (cmpTimeoutBuffer), exec.CommandContext's
// SIGKILL of the command, runCommand's SIGTERM to the process group and
// SIGKILL after the grace period.
func TestTimeouts(t *testing.T) {
	t.Run("the process group is terminated at the RPC deadline", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		opts := testOptions(t)
		opts.Timeout = 700 * time.Millisecond
		start := time.Now()
		_, err := run(t, shPlugin(`sleep 300 & echo $! > `+pidFile+`; wait`), appRepo(t, nil), testApp(), opts)
		elapsed := time.Since(start)
		require.Error(t, err)
		assert.Regexp(t, "^"+regexpQuote(genFailPrefix)+"`sh -c \"sleep 300 & echo .* wait\"` failed signal: (killed|terminated)$", err.Error())
		assert.Less(t, elapsed, 3*time.Second)
		assert.GreaterOrEqual(t, elapsed, 550*time.Millisecond)
		assert.True(t, waitGone(readPid(t, pidFile), 2*time.Second), "background child got SIGTERM")
	})
	t.Run("a child ignoring SIGTERM is killed after the grace period; the client deadline has passed by then", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		opts := testOptions(t)
		opts.Timeout = 500 * time.Millisecond
		opts.KillGrace = 600 * time.Millisecond
		start := time.Now()
		_, err := run(t, shPlugin(`(trap "" TERM; sleep 300) & echo $! > `+pidFile+`; wait`), appRepo(t, nil), testApp(), opts)
		elapsed := time.Since(start)
		require.Error(t, err)
		// cmd.Wait waits for stdout to close, i.e. for the SIGKILL.
		assert.GreaterOrEqual(t, elapsed, 900*time.Millisecond)
		assert.Equal(t, `CMP processing failed for application "guestbook": error generating manifests in cmp: rpc error: code = DeadlineExceeded desc = context deadline exceeded`, err.Error())
		assert.True(t, waitGone(readPid(t, pidFile), 2*time.Second))
	})
	t.Run("leftover background processes are terminated when the RPC ends", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		_, err := run(t, shPlugin(`sleep 300 >/dev/null 2>&1 & echo $! > `+pidFile+`; `+okManifest), appRepo(t, nil), testApp(), testOptions(t))
		require.NoError(t, err)
		assert.True(t, waitGone(readPid(t, pidFile), 2*time.Second))
	})
	t.Run("a context already done refuses to start the command", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Run(ctx, shPlugin(okManifest), appRepo(t, nil), testApp(), testOptions(t))
		require.Error(t, err)
		assert.Equal(t, `CMP processing failed for application "guestbook": error generating manifests in cmp: rpc error: code = Canceled desc = context canceled`, err.Error())
	})
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Pins getParametersAnnouncement: dynamic announcements (JSON array printed
// by the dynamic command, run in the app dir) come first, static ones after;
// and populatePluginAppDetails' env (four variables + plugin env/params).
func TestParameters(t *testing.T) {
	p := shPlugin(okManifest)
	p.Spec.Parameters.Static = []*ParameterAnnouncement{{Name: "static-param", String: "default", CollectionType: "string"}}
	p.Spec.Parameters.Dynamic = sh(`env | grep -E '^(ARGOCD_|KUBE_|PARAM_)' | sort > "$OUT"; printf '[{"name":"dyn","map":{"cwd":"%s"}}]\n' "$(basename "$(pwd)")"`)
	envFile := filepath.Join(t.TempDir(), "env")
	opts := testOptions(t)
	opts.BaseEnv = append(append([]string(nil), testBaseEnv...), "OUT="+envFile)
	app := testApp()
	app.Plugin.Env = []EnvEntry{{Name: "FOO", Value: "$ARGOCD_APP_NAME-$ARGOCD_APP_REVISION"}}
	app.Plugin.Parameters = []Parameter{StringParam("p", "v")}

	ann, err := Parameters(context.Background(), p, appRepo(t, nil), app, opts)
	require.NoError(t, err)
	require.Len(t, ann, 2)
	assert.Equal(t, "dyn", ann[0].Name)
	assert.Equal(t, "web", ann[0].Map["cwd"])
	assert.Equal(t, "static-param", ann[1].Name)
	assert.Equal(t, strings.Join([]string{
		"ARGOCD_APP_NAME=guestbook",
		`ARGOCD_APP_PARAMETERS=[{"name":"p","string":"v"}]`,
		"ARGOCD_APP_SOURCE_PATH=apps/web",
		"ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/org/repo.git",
		"ARGOCD_APP_SOURCE_TARGET_REVISION=main",
		"ARGOCD_ENV_FOO=guestbook-", // no ARGOCD_APP_REVISION in this env
		"PARAM_P=v",
	}, "\n")+"\n", readFile(t, envFile))

	// Static only.
	p.Spec.Parameters.Dynamic = Command{}
	ann, err = Parameters(context.Background(), p, appRepo(t, nil), app, testOptions(t))
	require.NoError(t, err)
	assert.Equal(t, p.Spec.Parameters.Static, ann)

	// Dynamic output errors.
	for out, want := range map[string]string{
		"true":                      "failed to populate plugin app details: failed to get parameter announcement: rpc error: code = Unknown desc = get parameters announcement error: error unmarshaling dynamic parameter output into ParametersAnnouncementResponse: unexpected end of JSON input",
		"echo '{}'":                 "failed to populate plugin app details: failed to get parameter announcement: rpc error: code = Unknown desc = get parameters announcement error: error unmarshaling dynamic parameter output into ParametersAnnouncementResponse: json: cannot unmarshal object into Go value of type []*argocdcmp.ParameterAnnouncement",
		"exit 5":                    "failed to populate plugin app details: failed to get parameter announcement: rpc error: code = Unknown desc = get parameters announcement error: error executing dynamic parameter output command: `sh -c \"exit 5\"` failed exit status 5",
		"echo null":                 "",
		"echo '[{\"name\":\"x\"}]'": "",
	} {
		p.Spec.Parameters.Dynamic = sh(out)
		_, err := Parameters(context.Background(), p, appRepo(t, nil), app, testOptions(t))
		if want == "" {
			assert.NoError(t, err, out)
			continue
		}
		require.Error(t, err, out)
		assert.Equal(t, want, err.Error())
	}

	// Not a plugin app: no announcements.
	app.Plugin = nil
	_, err = Parameters(context.Background(), p, appRepo(t, nil), app, testOptions(t))
	var np *NotPluginError
	require.ErrorAs(t, err, &np)
	assert.Equal(t, "Directory", np.SourceType)
}

// Pins the Options.Command hook: the command can be wrapped (here in a
// second shell standing in for `podman run`), gets the app dir and full
// env, and errors still render the plugin's own argv.
func TestCommandHook(t *testing.T) {
	var seen [][]string
	opts := testOptions(t)
	opts.Command = func(dir string, env []string, argv []string) *exec.Cmd {
		seen = append(seen, argv)
		wrapped := append([]string{"-c", `cd "$WRAP_DIR" && WRAPPED=yes exec "$@"`, "wrapper"}, argv...)
		cmd := exec.Command("sh", wrapped...)
		cmd.Env = append(append([]string(nil), env...), "WRAP_DIR="+dir)
		return cmd
	}
	p := shPlugin(configMap("hook", map[string]string{"wrapped": "$WRAPPED", "dir": "$(basename \"$(pwd)\")"}))
	res, err := run(t, p, appRepo(t, nil), testApp(), opts)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"wrapped": "yes", "dir": "web"}, cmData(t, res, 0))
	require.Len(t, seen, 1)
	assert.Equal(t, p.Spec.Generate.Argv(), seen[0])

	p = shPlugin("exit 9")
	_, err = run(t, p, appRepo(t, nil), testApp(), opts)
	require.Error(t, err)
	assert.Equal(t, genFailPrefix+"`sh -c \"exit 9\"` failed exit status 9", err.Error())
}

// Pins the order of the whole request for an auto-detected app: discovery
// command twice (GetAppSourceType, DetectConfigManagementPlugin), then init,
// then generate, each RPC in a new directory.
func TestRequestSequence(t *testing.T) {
	p := discoverPlugin(DiscoverSpec{Find: FindSpec{Command: sh("echo yes")}})
	p.Spec.Init = sh("echo init")
	app := testApp()
	app.Plugin = nil
	res, err := run(t, p, appRepo(t, nil), app, testOptions(t))
	require.NoError(t, err)
	var phases []string
	for _, c := range res.Commands {
		phases = append(phases, c.Phase)
	}
	assert.Equal(t, []string{"discover", "discover", "init", "generate"}, phases)
	assert.Equal(t, res.AppDir, res.Commands[3].Dir)
	assert.NotContains(t, strings.Join(res.RequestEnv, "\n"), "ARGOCD_APP_PARAMETERS", "no plugin section: no parameters variable")
}
