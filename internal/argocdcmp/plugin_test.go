package argocdcmp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fullPluginYAML = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: my-plugin
spec:
  version: v1.0
  init:
    command: [sh]
    args: [-c, 'echo "Initializing..."']
  generate:
    command: [sh, -c]
    args: ["echo hi"]
  discover:
    fileName: "./subdir/s*.yaml"
    find:
      glob: "**/Chart.yaml"
      command: [sh, -c, find . -name env.yaml]
      args: [extra]
  parameters:
    static:
      - name: string-param
        title: A string
        tooltip: tip
        required: true
        itemType: ""
        collectionType: ""
        string: default-string-value
      - name: array-param
        array: [default, items]
        collectionType: array
      - name: map-param
        map:
          some: value
        collectionType: map
    dynamic:
      command: [echo, '[{"name": "example-param", "string": "default-string-value"}]']
  preserveFileMode: true
  provideGitCreds: true
`

// Pins cmpserver/plugin/config.go PluginConfig/PluginConfigSpec field names
// and util/config.UnmarshalLocalFile (YAML→JSON, encoding/json) decoding.
func TestLoadPluginAllFields(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plugin.yaml"), []byte(fullPluginYAML), 0o644))

	for _, path := range []string{filepath.Join(dir, "plugin.yaml"), dir, dir + "/"} {
		p, err := LoadPlugin(path)
		require.NoError(t, err, path)
		assert.Equal(t, filepath.Join(dir, "plugin.yaml"), filepath.Clean(p.File))
		assert.Equal(t, "argoproj.io/v1alpha1", p.APIVersion)
		assert.Equal(t, "my-plugin", p.Metadata.Name)
		s := p.Spec
		assert.Equal(t, "v1.0", s.Version)
		assert.Equal(t, []string{"sh", "-c", `echo "Initializing..."`}, s.Init.Argv())
		assert.Equal(t, []string{"sh", "-c", "echo hi"}, s.Generate.Argv())
		assert.Equal(t, "./subdir/s*.yaml", s.Discover.FileName)
		assert.Equal(t, "**/Chart.yaml", s.Discover.Find.Glob)
		// Find embeds Command: find.command and find.args.
		assert.Equal(t, []string{"sh", "-c", "find . -name env.yaml", "extra"}, s.Discover.Find.Argv())
		require.Len(t, s.Parameters.Static, 3)
		assert.Equal(t, ParameterAnnouncement{Name: "string-param", Title: "A string", Tooltip: "tip", Required: true, String: "default-string-value"}, *s.Parameters.Static[0])
		assert.Equal(t, []string{"default", "items"}, s.Parameters.Static[1].Array)
		assert.Equal(t, map[string]string{"some": "value"}, s.Parameters.Static[2].Map)
		assert.Equal(t, "echo", s.Parameters.Dynamic.Command[0])
		assert.True(t, s.PreserveFileMode)
		assert.True(t, s.ProvideGitCreds)
		// PluginConfig.Address: <name>-<version>.sock
		assert.Equal(t, "my-plugin-v1.0", p.SocketName())
		assert.True(t, p.IsDiscoveryConfigured())
	}
}

// Pins ValidatePluginConfig (cmpserver/plugin/config.go): its three checks,
// their order and messages, and that nothing else is validated; and
// util/config's non-strict decoding.
func TestParsePluginValidation(t *testing.T) {
	tests := []struct {
		name       string
		yaml       string
		wantErr    string
		prefixOnly bool
		check      func(t *testing.T, p *Plugin)
	}{
		{
			name:    "missing metadata.name is reported first, even with a wrong kind",
			yaml:    "kind: Nope\nspec:\n  generate:\n    command: [x]\n",
			wantErr: "invalid plugin configuration file. metadata.name should be non-empty",
		},
		{
			name:    "wrong kind",
			yaml:    "kind: ConfigMap\nmetadata: {name: p}\nspec:\n  generate:\n    command: [x]\n",
			wantErr: "invalid plugin configuration file. kind should be ConfigManagementPlugin, found ConfigMap",
		},
		{
			name:    "missing kind",
			yaml:    "metadata: {name: p}\nspec:\n  generate:\n    command: [x]\n",
			wantErr: "invalid plugin configuration file. kind should be ConfigManagementPlugin, found ",
		},
		{
			name:    "no generate command",
			yaml:    "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec: {}\n",
			wantErr: "invalid plugin configuration file. spec.generate command should be non-empty",
		},
		{
			name:    "generate args without command is still empty",
			yaml:    "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  generate:\n    args: [x]\n",
			wantErr: "invalid plugin configuration file. spec.generate command should be non-empty",
		},
		{
			name: "apiVersion is not checked, unknown fields are ignored",
			yaml: "apiVersion: totally/wrong\nkind: ConfigManagementPlugin\nmetadata: {name: p}\nbogus: 1\nspec:\n  nonsense: true\n  generate:\n    command: [x]\n",
			check: func(t *testing.T, p *Plugin) {
				assert.Equal(t, "totally/wrong", p.APIVersion)
				assert.Equal(t, "p", p.SocketName(), "no version: socket is just the name")
				assert.False(t, p.IsDiscoveryConfigured())
			},
		},
		{
			name: "encoding/json matches keys case-insensitively",
			yaml: "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  Generate:\n    COMMAND: [x]\n  PreserveFileMode: true\n  Parameters:\n    Static: [{name: a}]\n",
			check: func(t *testing.T, p *Plugin) {
				assert.Equal(t, []string{"x"}, p.Spec.Generate.Command)
				assert.True(t, p.Spec.PreserveFileMode)
				require.Len(t, p.Spec.Parameters.Static, 1)
			},
		},
		{
			name: "JSON is YAML",
			yaml: `{"kind":"ConfigManagementPlugin","metadata":{"name":"p"},"spec":{"generate":{"command":["x"]}}}`,
		},
		{
			name:       "type errors come from encoding/json",
			yaml:       "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  generate: [x]\n",
			wantErr:    "json: cannot unmarshal array into Go struct field",
			prefixOnly: true,
		},
		{
			// sigs.k8s.io/yaml parses YAML 1.1: an unquoted y is a boolean.
			name:       "YAML 1.1 booleans in argv are rejected",
			yaml:       "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  generate: {command: [x], args: [y]}\n",
			wantErr:    "json: cannot unmarshal bool into Go struct field",
			prefixOnly: true,
		},
		{
			name: "discover with only find.args is not discovery",
			yaml: "kind: ConfigManagementPlugin\nmetadata: {name: p}\nspec:\n  generate: {command: [x]}\n  discover:\n    find:\n      args: [foo]\n",
			check: func(t *testing.T, p *Plugin) {
				// Service.isDiscoveryConfigured only looks at find.command.
				assert.False(t, p.IsDiscoveryConfigured())
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePlugin([]byte(tt.yaml))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				if !tt.prefixOnly {
					assert.Equal(t, tt.wantErr, err.Error())
				}
				return
			}
			require.NoError(t, err)
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}

// Pins ReadPluginConfig: the os.ReadFile error is returned as is.
func TestLoadPluginMissingFile(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadPlugin(dir)
	require.Error(t, err)
	assert.True(t, os.IsNotExist(err))
	assert.Contains(t, err.Error(), filepath.Join(dir, "plugin.yaml"))
}
