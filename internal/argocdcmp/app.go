package argocdcmp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	k8sversion "k8s.io/apimachinery/pkg/util/version"
)

// App is the Application side of a manifest request: the fields of the
// repo-server's ManifestRequest (and ApplicationSource) that reach a CMP.
type App struct {
	// Name is ManifestRequest.AppName, which the application controller sets
	// to app.InstanceName(controllerNamespace) (controller/state.go): the
	// bare name for Applications in the control-plane namespace, otherwise
	// "<namespace>_<name>". It becomes ARGOCD_APP_NAME.
	Name string
	// Namespace is ManifestRequest.Namespace, which the controller fills
	// with spec.destination.namespace (not the Application's own
	// namespace). It becomes ARGOCD_APP_NAMESPACE.
	Namespace string
	// Project is the AppProject name (ARGOCD_APP_PROJECT_NAME).
	Project string
	// Revision is the resolved revision (commit SHA) the repo-server
	// generates for; ARGOCD_APP_REVISION and its 7/8-character prefixes.
	Revision string
	// RepoURL is spec.source.repoURL (ARGOCD_APP_SOURCE_REPO_URL).
	RepoURL string
	// Path is spec.source.path, relative to the repository root
	// (ARGOCD_APP_SOURCE_PATH); the plugin's commands run there.
	Path string
	// TargetRevision is spec.source.targetRevision
	// (ARGOCD_APP_SOURCE_TARGET_REVISION, set even when empty).
	TargetRevision string
	// KubeVersion is the destination cluster's version as the controller
	// sends it; it is normalised with k8s.io/apimachinery's ParseGeneric
	// (parseKubeVersion in reposerver/repository/repository.go).
	KubeVersion string
	// APIVersions is the cluster's API version list; comma-joined into
	// KUBE_API_VERSIONS.
	APIVersions []string
	// Plugin is spec.source.plugin. nil means the Application has no plugin
	// section at all, so the repo-server auto-detects the source type and
	// neither ARGOCD_ENV_* nor ARGOCD_APP_PARAMETERS is set. A non-nil but
	// empty value is `plugin: {}`.
	Plugin *AppPlugin
}

// AppPlugin is spec.source.plugin (ApplicationSourcePlugin in
// pkg/apis/application/v1alpha1/types.go).
type AppPlugin struct {
	// Name selects the plugin by socket name ("<name>-<version>" or
	// "<name>"); empty means "any plugin whose discovery matches".
	Name string
	// Env entries, in order; each becomes ARGOCD_ENV_<Name>.
	Env []EnvEntry
	// Parameters, in order.
	Parameters []Parameter
}

// EnvEntry is one spec.source.plugin.env item.
type EnvEntry struct {
	Name  string
	Value string
}

// Parameter is one spec.source.plugin.parameters item
// (ApplicationSourcePluginParameter). Presence is what counts, as with
// Argo CD's pointer fields: String is set when non-nil; Map and Array are
// set when non-nil, even if empty (then they marshal as {} and []).
type Parameter struct {
	Name   string
	String *string
	Map    map[string]string
	Array  []string
}

// StringParam, ArrayParam and MapParam build parameters of one kind.
func StringParam(name, value string) Parameter { return Parameter{Name: name, String: &value} }

// ArrayParam builds an array parameter; with no values it is a present but
// empty array.
func ArrayParam(name string, values ...string) Parameter {
	if values == nil {
		values = []string{}
	}
	return Parameter{Name: name, Array: values}
}

// MapParam builds a map parameter; a nil map becomes a present but empty map.
func MapParam(name string, m map[string]string) Parameter {
	if m == nil {
		m = map[string]string{}
	}
	return Parameter{Name: name, Map: m}
}

// MarshalJSON reproduces ApplicationSourcePluginParameter.MarshalJSON: the
// value is built as a map[string]any, so encoding/json emits the keys sorted
// ("array", "map", "name", "string"), not in declaration order.
func (p Parameter) MarshalJSON() ([]byte, error) {
	out := map[string]any{"name": p.Name}
	if p.String != nil {
		out["string"] = *p.String
	}
	if p.Map != nil {
		out["map"] = p.Map
	}
	if p.Array != nil {
		out["array"] = p.Array
	}
	return json.Marshal(out)
}

// shortenRevision mirrors shortenRevision in reposerver/repository/repository.go.
func shortenRevision(revision string, length int) string {
	if len(revision) > length {
		return revision[:length]
	}
	return revision
}

// manifestBuildEnv is newEnv(q, revision).Environ() from
// reposerver/repository/repository.go: the nine build variables, always
// present (an entry is dropped by Env.Environ only when both name and value
// are empty, and all of these have names).
func manifestBuildEnv(app App) []string {
	return []string{
		"ARGOCD_APP_NAME=" + app.Name,
		"ARGOCD_APP_NAMESPACE=" + app.Namespace,
		"ARGOCD_APP_PROJECT_NAME=" + app.Project,
		"ARGOCD_APP_REVISION=" + app.Revision,
		"ARGOCD_APP_REVISION_SHORT=" + shortenRevision(app.Revision, 7),
		"ARGOCD_APP_REVISION_SHORT_8=" + shortenRevision(app.Revision, 8),
		"ARGOCD_APP_SOURCE_REPO_URL=" + app.RepoURL,
		"ARGOCD_APP_SOURCE_PATH=" + app.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + app.TargetRevision,
	}
}

// appDetailsBuildEnv is newEnvRepoQuery(q, revision).Environ(), the env used
// for source-type detection in GetAppDetails.
func appDetailsBuildEnv(app App) []string {
	return []string{
		"ARGOCD_APP_NAME=" + app.Name,
		"ARGOCD_APP_REVISION=" + app.Revision,
		"ARGOCD_APP_SOURCE_REPO_URL=" + app.RepoURL,
		"ARGOCD_APP_SOURCE_PATH=" + app.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + app.TargetRevision,
	}
}

// parameterAnnouncementBaseEnv is the literal list populatePluginAppDetails
// (reposerver/repository/repository.go) starts from.
func parameterAnnouncementBaseEnv(app App) []string {
	return []string{
		"ARGOCD_APP_NAME=" + app.Name,
		"ARGOCD_APP_SOURCE_REPO_URL=" + app.RepoURL,
		"ARGOCD_APP_SOURCE_PATH=" + app.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + app.TargetRevision,
	}
}

// parseKubeVersion mirrors parseKubeVersion in
// reposerver/repository/repository.go.
func parseKubeVersion(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	parsed, err := k8sversion.ParseGeneric(v)
	if err != nil {
		return "", err
	}
	return parsed.String(), nil
}

// PluginEnv returns the request environment the repo-server sends to the
// cmp-server for manifest generation, in Argo CD's order. It is
// getPluginEnvs (reposerver/repository/repository.go):
//
//  1. the nine ARGOCD_APP_* build variables (newEnv);
//  2. KUBE_VERSION (normalised) and KUBE_API_VERSIONS (comma-joined);
//  3. then getPluginParamEnvs: one ARGOCD_ENV_<name> per plugin env entry,
//     its value passed through Env.Envsubst against 1+2 only;
//  4. ARGOCD_APP_PARAMETERS (JSON) and the PARAM_* variables.
//
// 3 and 4 only exist when app.Plugin is non-nil. Git credentials
// (provideGitCreds) are appended later by the caller.
func PluginEnv(app App) ([]string, error) {
	kubeVersion, err := parseKubeVersion(app.KubeVersion)
	if err != nil {
		return nil, fmt.Errorf("could not parse kubernetes version %s: %w", app.KubeVersion, err)
	}
	env := manifestBuildEnv(app)
	env = append(env, "KUBE_VERSION="+kubeVersion)
	env = append(env, "KUBE_API_VERSIONS="+strings.Join(app.APIVersions, ","))
	return pluginParamEnvs(env, app.Plugin)
}

// pluginParamEnvs mirrors getPluginParamEnvs
// (reposerver/repository/repository.go).
func pluginParamEnvs(envVars []string, plugin *AppPlugin) ([]string, error) {
	env := append([]string(nil), envVars...)
	vars := map[string]string{}
	for _, kv := range envVars {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, errors.New("failed to parse env vars")
		}
		vars[name] = value
	}
	if plugin == nil {
		return env, nil
	}
	for _, e := range plugin.Env {
		env = append(env, fmt.Sprintf("ARGOCD_ENV_%s=%s", e.Name, envsubst(vars, e.Value)))
	}
	paramEnv, err := parametersEnviron(plugin.Parameters)
	if err != nil {
		return nil, fmt.Errorf("failed to generate env vars from parameters: %w", err)
	}
	return append(env, paramEnv...), nil
}

// envsubst mirrors Env.Envsubst (pkg/apis/application/v1alpha1/types.go):
// os.Expand over the given variables only, with "$$" yielding "$". Unknown
// names (including the sidecar's own environment and other ARGOCD_ENV_*
// entries) expand to "".
func envsubst(vars map[string]string, s string) string {
	return os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		return vars[name]
	})
}

var invalidParamChar = regexp.MustCompile("[^A-Z0-9_]")

// escapeParamName mirrors escaped() in pkg/apis/application/v1alpha1/types.go:
// upper-case, then every character outside [A-Z0-9_] becomes "_".
func escapeParamName(name string) string {
	return invalidParamChar.ReplaceAllString(strings.ToUpper(name), "_")
}

// parametersEnviron mirrors ApplicationSourcePluginParameters.Environ
// (pkg/apis/application/v1alpha1/types.go).
//
// An empty parameter list marshals as "null": the list crosses the
// controller→repo-server gRPC hop as a protobuf repeated field, which comes
// back nil when empty, and json.Marshal(nil slice) is "null".
//
// Map entries are emitted by ranging over a Go map, exactly as Argo CD does,
// so their relative order is random from run to run; do not depend on it.
func parametersEnviron(params []Parameter) ([]string, error) {
	var list []Parameter
	if len(params) > 0 {
		list = params
	}
	out, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal plugin parameters: %w", err)
	}
	env := []string{"ARGOCD_APP_PARAMETERS=" + string(out)}
	for _, p := range params {
		base := "PARAM_" + escapeParamName(p.Name)
		if p.String != nil {
			env = append(env, fmt.Sprintf("%s=%s", base, *p.String))
		}
		if p.Map != nil {
			for k, v := range p.Map {
				env = append(env, fmt.Sprintf("%s_%s=%s", base, escapeParamName(k), v))
			}
		}
		if p.Array != nil {
			for i, v := range p.Array {
				env = append(env, fmt.Sprintf("%s_%d=%s", base, i, v))
			}
		}
	}
	return env, nil
}

// requestEnviron converts the repo-server's []string into the entries the
// cmp-server appends to its own environment: toEnvEntry (util/cmp/stream.go)
// drops strings without "=", environ (cmpserver/plugin/plugin.go) drops
// entries with an empty name.
func requestEnviron(env []string) []string {
	var out []string
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		out = append(out, name+"="+value)
	}
	return out
}
