package argocdcmp

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pins the complete request environment and its order: newEnv (9 vars),
// then KUBE_VERSION/KUBE_API_VERSIONS (getPluginEnvs), then ARGOCD_ENV_*
// in spec order, ARGOCD_APP_PARAMETERS, PARAM_* in parameter order
// (getPluginParamEnvs, ApplicationSourcePluginParameters.Environ); and that
// the sidecar runs generate with os.Environ() followed by those entries
// (generateManifest in cmpserver/plugin/plugin.go).
func TestFullEnvironmentAndOrder(t *testing.T) {
	app := testApp()
	app.Plugin.Env = []EnvEntry{{Name: "FOO", Value: "bar-$ARGOCD_APP_REVISION_SHORT"}, {Name: "lower", Value: "x"}}
	app.Plugin.Parameters = []Parameter{
		StringParam("some-string", "s"),
		MapParam("helm-parameters", map[string]string{"image.tag": "v1.2.3"}),
		ArrayParam("values-files", "a.yaml", "b.yaml"),
	}
	want := []string{
		"ARGOCD_APP_NAME=guestbook",
		"ARGOCD_APP_NAMESPACE=prod",
		"ARGOCD_APP_PROJECT_NAME=default",
		"ARGOCD_APP_REVISION=" + testRevision,
		"ARGOCD_APP_REVISION_SHORT=0123456",
		"ARGOCD_APP_REVISION_SHORT_8=01234567",
		"ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/org/repo.git",
		"ARGOCD_APP_SOURCE_PATH=apps/web",
		"ARGOCD_APP_SOURCE_TARGET_REVISION=main",
		"KUBE_VERSION=1.30.2",
		"KUBE_API_VERSIONS=v1,apps/v1,apps/v1/Deployment",
		"ARGOCD_ENV_FOO=bar-0123456",
		"ARGOCD_ENV_lower=x", // the name is not upper-cased or escaped
		`ARGOCD_APP_PARAMETERS=[{"name":"some-string","string":"s"},{"map":{"image.tag":"v1.2.3"},"name":"helm-parameters"},{"array":["a.yaml","b.yaml"],"name":"values-files"}]`,
		"PARAM_SOME_STRING=s",
		"PARAM_HELM_PARAMETERS_IMAGE_TAG=v1.2.3",
		"PARAM_VALUES_FILES_0=a.yaml",
		"PARAM_VALUES_FILES_1=b.yaml",
	}
	env, err := PluginEnv(app)
	require.NoError(t, err)
	assert.Equal(t, want, env)

	// The same list reaches the command, after the sidecar's environment.
	p := shPlugin(`echo '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}'`)
	opts := testOptions(t)
	res, err := run(t, p, appRepo(t, nil), app, opts)
	require.NoError(t, err)
	assert.Equal(t, want, res.RequestEnv)
	assert.Equal(t, append(append([]string(nil), opts.BaseEnv...), want...), res.Env)
	// The process sees no PWD: cmd.Env is set, so os/exec adds none.
	assert.NotContains(t, strings.Join(res.Env, "\n"), "PWD=")
}

// Pins getPluginParamEnvs with plugin == nil vs plugin: {} and
// ApplicationSourcePluginParameters.Environ's "null" for an empty list.
func TestPluginSectionPresence(t *testing.T) {
	app := testApp()
	app.Plugin = nil
	env, err := PluginEnv(app)
	require.NoError(t, err)
	require.Len(t, env, 11, "only the build variables without a plugin section")
	assert.Equal(t, "KUBE_API_VERSIONS=v1,apps/v1,apps/v1/Deployment", env[10])

	app.Plugin = &AppPlugin{}
	env, err = PluginEnv(app)
	require.NoError(t, err)
	assert.Equal(t, "ARGOCD_APP_PARAMETERS=null", env[len(env)-1])

	app.Plugin = &AppPlugin{Parameters: []Parameter{}}
	env, err = PluginEnv(app)
	require.NoError(t, err)
	assert.Equal(t, "ARGOCD_APP_PARAMETERS=null", env[len(env)-1], "an empty list crosses protobuf as nil")
}

// Pins parseKubeVersion (k8s ParseGeneric + String) and shortenRevision.
func TestKubeVersionAndShortRevision(t *testing.T) {
	tests := []struct {
		kube, want, wantErr string
		revision            string
		short, short8       string
	}{
		{kube: "", want: "", revision: "", short: "", short8: ""},
		{kube: "v1.30.2", want: "1.30.2", revision: "abc", short: "abc", short8: "abc"},
		{kube: "1.30", want: "1.30", revision: "abcdefgh", short: "abcdefg", short8: "abcdefgh"},
		{kube: "v1.29.3+k3s1", want: "1.29.3", revision: "abcdefghi", short: "abcdefg", short8: "abcdefgh"},
		{kube: "1.31.0-rc.1", want: "1.31.0"},
		{kube: "banana", wantErr: `could not parse kubernetes version banana: could not parse "banana" as version`},
		{kube: "1", wantErr: `could not parse kubernetes version 1: illegal version string "1"`},
	}
	for _, tt := range tests {
		t.Run(tt.kube, func(t *testing.T) {
			app := testApp()
			app.KubeVersion, app.Revision = tt.kube, tt.revision
			env, err := PluginEnv(app)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				// In Run it surfaces wrapped by GenerateManifests.
				_, err = run(t, shPlugin("true"), appRepo(t, nil), app, testOptions(t))
				require.EqualError(t, err, `CMP processing failed for application "guestbook": `+tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, env, "KUBE_VERSION="+tt.want)
			assert.Contains(t, env, "ARGOCD_APP_REVISION_SHORT="+tt.short)
			assert.Contains(t, env, "ARGOCD_APP_REVISION_SHORT_8="+tt.short8)
		})
	}
}

// Pins Env.Envsubst (types.go): os.Expand over the build variables only
// (nine ARGOCD_APP_* + KUBE_VERSION + KUBE_API_VERSIONS), "$$" → "$".
func TestPluginEnvExpansion(t *testing.T) {
	tests := []struct{ value, want string }{
		{"plain", "plain"},
		{"$ARGOCD_APP_NAME", "guestbook"},
		{"${ARGOCD_APP_NAMESPACE}-x", "prod-x"},
		{"rev-$ARGOCD_APP_REVISION_SHORT_8", "rev-01234567"},
		{"$KUBE_VERSION/$KUBE_API_VERSIONS", "1.30.2/v1,apps/v1,apps/v1/Deployment"},
		{"cost: $$5", "cost: $5"},
		{"$$ARGOCD_APP_NAME", "$ARGOCD_APP_NAME"},
		{"$$$ARGOCD_APP_NAME", "$guestbook"},
		{"$HOME", ""},             // the sidecar's env is not consulted (docs say otherwise)
		{"$SIDECAR_VAR", ""},      // ditto
		{"$ARGOCD_ENV_FIRST", ""}, // earlier plugin env entries are not visible
		{"${UNDEFINED}", ""},
		{"$1$@$*", ""},
		{"trailing $", "trailing $"},
		{"${ARGOCD_APP_NAME", "ARGOCD_APP_NAME"}, // os.Expand eats an unterminated "${"
	}
	app := testApp()
	for _, tt := range tests {
		app.Plugin.Env = append(app.Plugin.Env, EnvEntry{Name: "V", Value: tt.value})
	}
	app.Plugin.Env = append([]EnvEntry{{Name: "FIRST", Value: "1"}}, app.Plugin.Env...)
	env, err := PluginEnv(app)
	require.NoError(t, err)
	var got []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ARGOCD_ENV_V="); ok {
			got = append(got, v)
		}
	}
	require.Len(t, got, len(tests))
	for i, tt := range tests {
		assert.Equal(t, tt.want, got[i], "value %q", tt.value)
	}
}

// Pins ApplicationSourcePluginParameters.Environ / escaped and
// ApplicationSourcePluginParameter.MarshalJSON.
func TestParameterEnvironment(t *testing.T) {
	empty := ""
	tests := []struct {
		name     string
		params   []Parameter
		wantJSON string
		wantVars []string // order-insensitive (map entries come from a Go map range)
	}{
		{
			name:     "string, upper-cased and escaped",
			params:   []Parameter{StringParam("some-string.param/x", "v")},
			wantJSON: `[{"name":"some-string.param/x","string":"v"}]`,
			wantVars: []string{"PARAM_SOME_STRING_PARAM_X=v"},
		},
		{
			name:     "non-ASCII characters each become one underscore",
			params:   []Parameter{StringParam("größe", "1")},
			wantJSON: `[{"name":"größe","string":"1"}]`,
			wantVars: []string{"PARAM_GR__E=1"},
		},
		{
			name:     "underscores and digits survive",
			params:   []Parameter{StringParam("a_1", "x")},
			wantJSON: `[{"name":"a_1","string":"x"}]`,
			wantVars: []string{"PARAM_A_1=x"},
		},
		{
			name:     "empty string is still set",
			params:   []Parameter{{Name: "e", String: &empty}},
			wantJSON: `[{"name":"e","string":""}]`,
			wantVars: []string{"PARAM_E="},
		},
		{
			name:     "map keys escaped too",
			params:   []Parameter{MapParam("helm-parameters", map[string]string{"image.tag": "v1", "replica-count": "2"})},
			wantJSON: `[{"map":{"image.tag":"v1","replica-count":"2"},"name":"helm-parameters"}]`,
			wantVars: []string{"PARAM_HELM_PARAMETERS_IMAGE_TAG=v1", "PARAM_HELM_PARAMETERS_REPLICA_COUNT=2"},
		},
		{
			name:     "array indexes",
			params:   []Parameter{ArrayParam("values", "a", "b", "c")},
			wantJSON: `[{"array":["a","b","c"],"name":"values"}]`,
			wantVars: []string{"PARAM_VALUES_0=a", "PARAM_VALUES_1=b", "PARAM_VALUES_2=c"},
		},
		{
			name:     "present but empty map and array marshal as {} and []",
			params:   []Parameter{MapParam("m", nil), ArrayParam("a")},
			wantJSON: `[{"map":{},"name":"m"},{"array":[],"name":"a"}]`,
		},
		{
			name:     "a parameter with no value",
			params:   []Parameter{{Name: "bare"}},
			wantJSON: `[{"name":"bare"}]`,
		},
		{
			name:     "all three kinds on one parameter",
			params:   []Parameter{{Name: "all", String: &empty, Map: map[string]string{"k": "v"}, Array: []string{"i"}}},
			wantJSON: `[{"array":["i"],"map":{"k":"v"},"name":"all","string":""}]`,
			wantVars: []string{"PARAM_ALL=", "PARAM_ALL_K=v", "PARAM_ALL_0=i"},
		},
		{
			name:     "colliding names are all emitted; the last one wins in the process",
			params:   []Parameter{StringParam("a-b", "1"), StringParam("a.b", "2")},
			wantJSON: `[{"name":"a-b","string":"1"},{"name":"a.b","string":"2"}]`,
			wantVars: []string{"PARAM_A_B=1", "PARAM_A_B=2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := parametersEnviron(tt.params)
			require.NoError(t, err)
			assert.Equal(t, "ARGOCD_APP_PARAMETERS="+tt.wantJSON, env[0])
			assert.True(t, json.Valid([]byte(tt.wantJSON)))
			got := append([]string(nil), env[1:]...)
			want := append([]string(nil), tt.wantVars...)
			sort.Strings(got)
			sort.Strings(want)
			if len(want) == 0 {
				want = nil
			}
			if len(got) == 0 {
				got = nil
			}
			assert.Equal(t, want, got)
		})
	}
}

// Pins that the plugin process sees the last of duplicate variables (os/exec
// dedup), e.g. a sidecar KUBE_VERSION is overridden by the request's, and
// that the process receives the variables exactly (via a real command).
func TestEnvReachesProcess(t *testing.T) {
	app := testApp()
	app.Plugin.Env = []EnvEntry{{Name: "FOO", Value: "bar-$ARGOCD_APP_REVISION_SHORT"}}
	app.Plugin.Parameters = []Parameter{MapParam("helm-parameters", map[string]string{"image.tag": "v1.2.3"})}
	opts := testOptions(t)
	opts.BaseEnv = append(append([]string(nil), testBaseEnv...), "KUBE_VERSION=from-sidecar")
	p := shPlugin(configMap("env", map[string]string{
		"name":    "$ARGOCD_APP_NAME",
		"ns":      "$ARGOCD_APP_NAMESPACE",
		"project": "$ARGOCD_APP_PROJECT_NAME",
		"foo":     "$ARGOCD_ENV_FOO",
		"tag":     "$PARAM_HELM_PARAMETERS_IMAGE_TAG",
		"kube":    "$KUBE_VERSION",
		"sidecar": "$SIDECAR_VAR",
		"home":    "$HOME",
	}))
	res, err := run(t, p, appRepo(t, nil), app, opts)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"name": "guestbook", "ns": "prod", "project": "default", "foo": "bar-0123456",
		"tag": "v1.2.3", "kube": "1.30.2", "sidecar": "sidecar", "home": "/home/argocd",
	}, cmData(t, res, 0))
}

// Pins runConfigManagementPluginSidecars: git credential env is appended
// after everything else, only when the plugin sets provideGitCreds.
func TestGitCredsEnv(t *testing.T) {
	for _, provide := range []bool{false, true} {
		p := shPlugin(`echo '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}'`)
		p.Spec.ProvideGitCreds = provide
		opts := testOptions(t)
		opts.GitCredsEnv = []string{"GIT_ASKPASS=/bin/askpass", "GIT_USERNAME=u"}
		res, err := Run(context.Background(), p, appRepo(t, nil), testApp(), opts)
		require.NoError(t, err)
		n := len(res.RequestEnv)
		if provide {
			assert.Equal(t, []string{"GIT_ASKPASS=/bin/askpass", "GIT_USERNAME=u"}, res.RequestEnv[n-2:])
			assert.Equal(t, "ARGOCD_APP_PARAMETERS=null", res.RequestEnv[n-3])
		} else {
			assert.Equal(t, "ARGOCD_APP_PARAMETERS=null", res.RequestEnv[n-1])
		}
	}
}
