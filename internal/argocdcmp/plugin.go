package argocdcmp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ConfigManagementPluginKind is the only kind argocd-cmp-server accepts
// (cmpserver/plugin/config.go, constant ConfigManagementPluginKind).
const ConfigManagementPluginKind = "ConfigManagementPlugin"

// PluginConfigFileName is the file argocd-cmp-server reads from its
// --config-dir-path (common/common.go, PluginConfigFileName).
const PluginConfigFileName = "plugin.yaml"

// DefaultPluginSockDir is where the repo-server looks for plugin sockets
// (common/common.go, DefaultPluginSockFilePath). The harness never creates a
// socket; the path only appears in error messages, as it does in Argo CD.
const DefaultPluginSockDir = "/home/argocd/cmp-server/plugins"

// Plugin is a parsed plugin.yaml. Its shape follows PluginConfig in
// cmpserver/plugin/config.go: TypeMeta inline, metadata, spec. As in Argo CD
// apiVersion is read but never checked.
type Plugin struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            PluginSpec        `json:"spec"`

	// File is the plugin.yaml the configuration was read from (not part of
	// the YAML).
	File string `json:"-"`
}

// PluginSpec mirrors PluginConfigSpec (cmpserver/plugin/config.go).
type PluginSpec struct {
	Version  string       `json:"version"`
	Init     Command      `json:"init,omitempty"`
	Generate Command      `json:"generate"`
	Discover DiscoverSpec `json:"discover"`
	// Argo CD tags this field `yaml:"parameters"` only, so encoding/json
	// matches it by the Go field name, case-insensitively; "parameters"
	// matches either way.
	Parameters       ParametersSpec `json:"parameters"`
	PreserveFileMode bool           `json:"preserveFileMode,omitempty"`
	ProvideGitCreds  bool           `json:"provideGitCreds,omitempty"`
}

// Command is an argv prefix (command) plus arguments appended after it,
// like Command in cmpserver/plugin/config.go. runCommand executes
// command[0] with command[1:]+args.
type Command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// Argv is the full argument vector runCommand builds: command followed by
// args.
func (c Command) Argv() []string {
	out := make([]string, 0, len(c.Command)+len(c.Args))
	out = append(out, c.Command...)
	return append(out, c.Args...)
}

// DiscoverSpec mirrors Discover in cmpserver/plugin/config.go.
type DiscoverSpec struct {
	Find     FindSpec `json:"find"`
	FileName string   `json:"fileName"`
}

// FindSpec mirrors Find in cmpserver/plugin/config.go: an embedded Command (so
// find.command and find.args) plus glob.
type FindSpec struct {
	Command
	Glob string `json:"glob"`
}

// ParametersSpec mirrors Parameters in cmpserver/plugin/config.go. Argo CD tags
// these with `yaml:` only; encoding/json matches "static" and "dynamic"
// against the field names case-insensitively, which these tags reproduce.
type ParametersSpec struct {
	Static  []*ParameterAnnouncement `json:"static"`
	Dynamic Command                  `json:"dynamic"`
}

// ParameterAnnouncement carries the JSON field names of the protobuf message
// ParameterAnnouncement (reposerver/apiclient/repository.pb.go).
type ParameterAnnouncement struct {
	Name           string            `json:"name,omitempty"`
	Title          string            `json:"title,omitempty"`
	Tooltip        string            `json:"tooltip,omitempty"`
	Required       bool              `json:"required,omitempty"`
	ItemType       string            `json:"itemType,omitempty"`
	CollectionType string            `json:"collectionType,omitempty"`
	String         string            `json:"string,omitempty"`
	Array          []string          `json:"array,omitempty"`
	Map            map[string]string `json:"map,omitempty"`
}

// LoadPlugin reads a plugin configuration the way ReadPluginConfig
// (cmpserver/plugin/config.go) does. path may be the plugin.yaml file itself
// or, like argocd-cmp-server's --config-dir-path, the directory holding it.
//
// Parsing follows util/config.UnmarshalLocalFile: YAML is converted to JSON
// with sigs.k8s.io/yaml and decoded with encoding/json, so unknown fields are
// ignored and field names match case-insensitively (Argo CD is not strict).
// Validation is ValidatePluginConfig: metadata.name, then kind, then
// spec.generate.command, with Argo CD's messages. apiVersion, version,
// discover and parameters are not validated.
func LoadPlugin(path string) (*Plugin, error) {
	file := path
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		file = fmt.Sprintf("%s/%s", strings.TrimRight(path, "/"), PluginConfigFileName)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	p, err := ParsePlugin(data)
	if err != nil {
		return nil, err
	}
	p.File = file
	return p, nil
}

// ParsePlugin is LoadPlugin on in-memory bytes.
func ParsePlugin(data []byte) (*Plugin, error) {
	var p Plugin
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(jsonData, &p); err != nil {
		return nil, err
	}
	if err := validatePlugin(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// validatePlugin reproduces ValidatePluginConfig (cmpserver/plugin/config.go),
// including the order of the checks.
func validatePlugin(p *Plugin) error {
	if p.Metadata.Name == "" {
		return errors.New("invalid plugin configuration file. metadata.name should be non-empty")
	}
	if p.Kind != ConfigManagementPluginKind {
		return fmt.Errorf("invalid plugin configuration file. kind should be %s, found %s", ConfigManagementPluginKind, p.Kind)
	}
	if len(p.Spec.Generate.Command) == 0 {
		return errors.New("invalid plugin configuration file. spec.generate command should be non-empty")
	}
	return nil
}

// SocketName is the name an Application's spec.source.plugin.name must equal
// to address this plugin: "<metadata.name>-<spec.version>", or just
// "<metadata.name>" when version is empty. argocd-cmp-server listens on
// "<SocketName>.sock" (PluginConfig.Address in cmpserver/plugin/config.go) and
// the repo-server dials "<spec.source.plugin.name>.sock"
// (DetectConfigManagementPlugin in util/app/discovery/discovery.go).
func (p *Plugin) SocketName() string {
	if p.Spec.Version != "" {
		return p.Metadata.Name + "-" + p.Spec.Version
	}
	return p.Metadata.Name
}

// IsDiscoveryConfigured mirrors Service.isDiscoveryConfigured
// (cmpserver/plugin/plugin.go), the value CheckPluginConfiguration reports:
// fileName, find.glob or a non-empty find.command. find.args alone does not
// count.
func (p *Plugin) IsDiscoveryConfigured() bool {
	d := p.Spec.Discover
	return d.FileName != "" || d.Find.Glob != "" || len(d.Find.Command.Command) > 0
}
