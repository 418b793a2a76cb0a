package e2e

import (
	"archive/zip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/argocdcmp"
)

// argoCDVersion is the release whose argocd-cmp-server behaviour
// internal/argocdcmp reproduces and whose install.yaml and Application CRD
// the example is checked against.
const argoCDVersion = "v3.6.1"

// argoApplications reads examples/argocd/applications.yaml as the harness's
// App values, so the test runs the Applications users copy.
func argoApplications(t *testing.T) map[string]argocdcmp.App {
	t.Helper()
	objs := parseObjects(t, readFileString(t, filepath.Join(repoRoot, "examples", "argocd", "applications.yaml")))
	apps := map[string]argocdcmp.App{}
	for _, o := range objs {
		requireSchemaValid(t, o)
		s, err := o.String()
		require.NoError(t, err)
		var a struct {
			Metadata struct{ Name string }
			Spec     struct {
				Project string
				Source  struct {
					RepoURL, TargetRevision, Path string
					Plugin                        struct {
						Name string
						Env  []argocdcmp.EnvEntry
					}
				}
				Destination struct{ Namespace string }
			}
		}
		require.NoError(t, sigsyaml.Unmarshal([]byte(s), &a))
		src := a.Spec.Source
		apps[a.Metadata.Name] = argocdcmp.App{
			Name: a.Metadata.Name, Namespace: a.Spec.Destination.Namespace, Project: a.Spec.Project,
			Revision: "0123456789abcdef0123456789abcdef01234567", RepoURL: src.RepoURL, Path: src.Path,
			TargetRevision: src.TargetRevision, KubeVersion: "v1.34.2",
			APIVersions: []string{"apps/v1", "v1", "airunway.ai/v1alpha1", "nvidia.com/v1alpha1"},
			Plugin:      &argocdcmp.AppPlugin{Name: src.Plugin.Name, Env: src.Plugin.Env},
		}
	}
	require.Len(t, apps, 2)
	return apps
}

// argoRepo is the repository the Applications point at: a copy of
// examples/ only (Argo CD sends the repository, never our bin/).
func argoRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	copyDir(t, filepath.Join(repoRoot, "examples"), filepath.Join(repo, "examples"))
	return repo
}

func argoPlugin(t *testing.T) *argocdcmp.Plugin {
	t.Helper()
	p, err := argocdcmp.LoadPlugin(filepath.Join(repoRoot, "examples", "argocd", "plugin.yaml"))
	require.NoError(t, err)
	return p
}

// onPath puts the binary under test on the test process's PATH, where the
// harness (like the sidecar) looks up the plugin's bare command name.
func onPath(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(renderBin(t), filepath.Join(dir, "airunway-render")))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func runPlugin(t *testing.T, app argocdcmp.App, repo string, opts argocdcmp.Options) (*argocdcmp.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return argocdcmp.Run(ctx, argoPlugin(t), repo, app, opts)
}

// manifestNodes turns the objects Argo CD would apply into RNodes.
func manifestNodes(t *testing.T, res *argocdcmp.Result) []*yaml.RNode {
	t.Helper()
	var out []*yaml.RNode
	for _, m := range res.Manifests {
		b, err := json.Marshal(m.Object)
		require.NoError(t, err)
		n, err := yaml.Parse(string(b))
		require.NoError(t, err)
		out = append(out, n)
	}
	return out
}

func requireNoWarnings(t *testing.T, res *argocdcmp.Result) {
	t.Helper()
	for _, w := range res.Warnings {
		require.NotEqual(t, "generate", w.Phase, "generate warned: %s", w.Message)
	}
}

// TestArgoCDPluginApplications runs both example Applications through the
// plugin exactly as argocd-cmp-server runs it: the same models become
// different objects per cluster.
func TestArgoCDPluginApplications(t *testing.T) {
	onPath(t)
	apps := argoApplications(t)
	repo := argoRepo(t)
	opts := argocdcmp.Options{WorkDir: t.TempDir()}

	res, err := runPlugin(t, apps["models-dev"], repo, opts)
	require.NoError(t, err, "stderr:\n%s", stderrOf(res))
	requireNoWarnings(t, res)
	requireDevObjects(t, manifestNodes(t, res))
	requireArgoEnv(t, res)

	res, err = runPlugin(t, apps["models-prod"], repo, opts)
	require.NoError(t, err, "stderr:\n%s", stderrOf(res))
	requireNoWarnings(t, res)
	objs := manifestNodes(t, res)
	require.Len(t, objs, 5, "the Namespace, and two models with their graphs: %v", identities(objs))
	for _, name := range exampleModels {
		requireRenderedMD(t, requireObject(t, objs, "airunway.ai/v1alpha1", "ModelDeployment", kustomizeNS, name), "dynamo")
		requireSchemaValid(t, requireObject(t, objs, "nvidia.com/v1alpha1", "DynamoGraphDeployment", kustomizeNS, name))
	}
	// The overlay's patch: two replicas of qwen3-0-6b, in the model and in
	// the graph's worker.
	md := requireObject(t, objs, "airunway.ai/v1alpha1", "ModelDeployment", kustomizeNS, "qwen3-0-6b")
	replicas, err := md.Pipe(yaml.Lookup("spec", "scaling", "replicas"))
	require.NoError(t, err)
	require.Equal(t, "2", yaml.GetValue(replicas))
	graph := requireObject(t, objs, "nvidia.com/v1alpha1", "DynamoGraphDeployment", kustomizeNS, "qwen3-0-6b")
	worker, err := graph.Pipe(yaml.Lookup("spec", "services", "VllmWorker", "replicas"))
	require.NoError(t, err)
	require.Equal(t, "2", yaml.GetValue(worker))
}

// requireArgoEnv checks the plugin saw what Argo CD passes: the app path
// it uses to find the repository root (the overlay names its own
// capability file).
func requireArgoEnv(t *testing.T, res *argocdcmp.Result) {
	t.Helper()
	env := strings.Join(res.Env, "\n")
	require.NotContains(t, env, "ARGOCD_ENV_CAPABILITIES")
	require.Contains(t, env, "ARGOCD_APP_SOURCE_PATH=examples/kustomize/clusters/dev")
	require.Contains(t, env, "KUBE_VERSION=1.34.2")
	require.Equal(t, filepath.Join(res.WorkDir, "examples", "kustomize", "clusters", "dev"), res.AppDir)
}

func stderrOf(res *argocdcmp.Result) string {
	if res == nil {
		return ""
	}
	return res.Stderr
}

// The plugin has no discover section: an Application that names no plugin
// is never handed to it, not even over a directory of models (a rendered
// directory must stay a plain Argo CD application).
func TestArgoCDPluginIsNeverDiscovered(t *testing.T) {
	onPath(t)
	app := argoApplications(t)["models-dev"]
	repo := argoRepo(t)
	for _, path := range []string{"examples/kustomize/base", "examples/flux/rendered/dev"} {
		app.Path = path
		app.Plugin = nil
		res, err := runPlugin(t, app, repo, argocdcmp.Options{WorkDir: t.TempDir()})
		require.Error(t, err, "%s was handed to the plugin", path)
		require.False(t, res.Discovered)
		require.NotEqual(t, "Plugin", res.SourceType, path)
	}
}

// What Argo CD shows on the application when generate fails: the plugin's
// stderr, never an empty manifest list.
func TestArgoCDPluginErrors(t *testing.T) {
	onPath(t)
	base := argoApplications(t)["models-dev"]
	cases := []struct {
		name  string
		edit  func(repo string, app *argocdcmp.App)
		want  []string
		never string
	}{
		{
			name: "capability file outside the repository",
			edit: func(_ string, app *argocdcmp.App) {
				app.Plugin.Env = []argocdcmp.EnvEntry{{Name: "CAPABILITIES", Value: "../../../etc/passwd"}}
			},
			want: []string{"ARGOCD_ENV_CAPABILITIES", "must be a relative path inside the repository"},
		},
		{
			name: "model file linked out of the repository",
			edit: func(repo string, _ *argocdcmp.App) {
				outside := filepath.Join(t.TempDir(), "secret.yaml")
				require.NoError(t, os.WriteFile(outside, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"), 0o644))
				require.NoError(t, os.Symlink(outside, filepath.Join(repo, "examples", "kustomize", "base", "leak.yaml")))
			},
			// Argo CD's own out-of-bounds symlink check refuses first.
			want: []string{"leak.yaml"},
		},
		{
			name: "plain YAML and no capability file named",
			edit: func(_ string, app *argocdcmp.App) { app.Path = "examples/vllm-basic" },
			want: []string{"`ARGOCD_ENV_CAPABILITIES` must name the cluster's capability file"},
		},
		{
			name: "capability file named for an overlay that has its own",
			edit: func(_ string, app *argocdcmp.App) {
				app.Plugin.Env = []argocdcmp.EnvEntry{{Name: "CAPABILITIES", Value: "examples/kustomize/clusters/dev/capabilities.yaml"}}
			},
			want: []string{"`ARGOCD_ENV_CAPABILITIES` is set, but the application's kustomization runs airunway-render itself"},
		},
		{
			name: "kustomization with a remote base",
			edit: func(repo string, _ *argocdcmp.App) {
				f := filepath.Join(repo, "examples", "kustomize", "base", "kustomization.yaml")
				editFile(t, f, "resources:\n", "resources:\n- github.com/example/models//base?ref=v1\n")
			},
			want: []string{"a remote reference", "may only read files in the repository"},
		},
		{
			name: "invalid model",
			edit: func(repo string, _ *argocdcmp.App) {
				f := filepath.Join(repo, "examples", "kustomize", "base", "qwen3-0-6b.yaml")
				editFile(t, f, "      count: 1\n", "      count: 99\n")
			},
			// The function's own error, passed on by the build.
			want: []string{"ModelDeployment/inference/qwen3-0-6b spec.resources.gpu.count", "kustomize build of the application's directory"},
		},
		{
			name: "nothing to render",
			edit: func(repo string, app *argocdcmp.App) {
				dir := filepath.Join(repo, "examples", "empty")
				require.NoError(t, os.MkdirAll(dir, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("nothing\n"), 0o644))
				app.Path = "examples/empty"
				app.Plugin.Env = []argocdcmp.EnvEntry{{Name: "CAPABILITIES", Value: "examples/kustomize/clusters/dev/capabilities.yaml"}}
			},
			want: []string{"rendered no objects", "could prune every object"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := argoRepo(t)
			app := base
			app.Plugin = &argocdcmp.AppPlugin{Name: base.Plugin.Name, Env: base.Plugin.Env}
			tc.edit(repo, &app)
			res, err := runPlugin(t, app, repo, argocdcmp.Options{WorkDir: t.TempDir()})
			require.Error(t, err, "the plugin accepted it")
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			if res != nil {
				require.Empty(t, res.Manifests)
			}
		})
	}
}

// runPluginInImage runs the dev Application with every plugin command inside
// the sidecar image, as argocd-cmp-server would in the sidecar: user 999
// (which owns the request directory, as the server that unpacks it runs as
// 999), read-only root filesystem, no network, the image's own environment.
func runPluginInImage(t *testing.T, im images) {
	t.Helper()
	app := argoApplications(t)["models-dev"]
	workDir := t.TempDir()
	require.NoError(t, os.Chmod(workDir, 0o755))
	opts := argocdcmp.Options{
		WorkDir: workDir,
		// The container's environment (the image's ENV), not the test's.
		BaseEnv: []string{"PATH=/usr/local/bin"},
		Command: func(dir string, env, argv []string) *exec.Cmd {
			chown := exec.Command("chown", "-R", "999:999", workDir)
			out, err := chown.CombinedOutput()
			require.NoError(t, err, "%s", out)
			args := []string{"run", "--rm", "--network", "none", "--read-only", "--user", "999:999",
				"-v", workDir + ":" + workDir, "-w", dir}
			for _, e := range env {
				if !strings.HasPrefix(e, "PATH=") {
					args = append(args, "--env", e)
				}
			}
			args = append(append(args, argocdPluginImage), argv...)
			cmd := exec.Command("podman", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), im.env...)
			return cmd
		},
	}
	res, err := runPlugin(t, app, argoRepo(t), opts)
	require.NoError(t, err, "stderr:\n%s", stderrOf(res))
	requireNoWarnings(t, res)
	requireDevObjects(t, manifestNodes(t, res))
}

// TestArgoCDInstall builds examples/argocd/install over the real install.yaml
// of the Argo CD release (from its Go module; the example fetches it by URL):
// the sidecar joins argocd-repo-server with the volumes it mounts, and the
// health check lands in argocd-cm.
func TestArgoCDInstall(t *testing.T) {
	root := t.TempDir()
	copyDir(t, filepath.Join(repoRoot, "examples", "argocd"), filepath.Join(root, "examples", "argocd"))
	copyDir(t, filepath.Join(repoRoot, "deploy", "argocd"), filepath.Join(root, "deploy", "argocd"))
	dir := filepath.Join(root, "examples", "argocd", "install")
	url := "https://raw.githubusercontent.com/argoproj/argo-cd/" + argoCDVersion + "/manifests/install.yaml"
	editFile(t, filepath.Join(dir, "kustomization.yaml"), url, "install.yaml")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "install.yaml"), argoCDModuleFile(t, "manifests/install.yaml"), 0o644))

	res := mustRun(t, t.TempDir(), nil, kustomizeBin(t), "build", dir)
	objs := parseObjects(t, res.stdout)

	var repoServer appsv1.Deployment
	decodeStrict(t, requireObject(t, objs, "apps/v1", "Deployment", "argocd", "argocd-repo-server"), &repoServer)
	pod := repoServer.Spec.Template.Spec
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
	}
	var sidecar, server bool
	for _, c := range pod.Containers {
		switch c.Name {
		case "airunway-render":
			sidecar = true
			require.Equal(t, argocdPluginImage, c.Image)
			require.Equal(t, []string{"/var/run/argocd/argocd-cmp-server"}, c.Command)
			require.Equal(t, int64(999), *c.SecurityContext.RunAsUser)
			for _, m := range c.VolumeMounts {
				require.True(t, volumes[m.Name], "the sidecar mounts %q, which the Deployment does not have", m.Name)
			}
		case "argocd-repo-server":
			server = true
		}
	}
	require.True(t, sidecar && server, "containers: %v", pod.Containers)
	// The init container that copies argocd-cmp-server into var-files is
	// upstream's; the sidecar depends on it.
	require.Contains(t, res.stdout, "/var/run/argocd/argocd-cmp-server")

	cm := requireObject(t, objs, "v1", "ConfigMap", "argocd", "argocd-cm")
	data := cm.GetDataMap()
	lua := readFileString(t, filepath.Join(repoRoot, "deploy", "argocd", "health.lua"))
	require.Equal(t, lua, data["resource.customizations.health.airunway.ai_ModelDeployment"])
	requireSchemaValid(t, requireObject(t, objs, "apps/v1", "Deployment", "argocd", "argocd-repo-server"))
}

// argoCDModuleFile reads one file of the Argo CD release's Go module, as
// `go mod download` fetches and verifies it. The module needs Go 1.27, so
// the go command does not extract it; its verified zip is read instead.
func argoCDModuleFile(t *testing.T, path string) []byte {
	t.Helper()
	const module = "github.com/argoproj/argo-cd/v3"
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+argoCDVersion)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
	out, _ := cmd.Output() // non-zero when only the extraction was refused
	var m struct{ Zip, Error string }
	require.NoError(t, json.Unmarshal(out, &m), "go mod download: %s", out)
	require.NotEmpty(t, m.Zip, "go mod download %s@%s: %s", module, argoCDVersion, m.Error)
	zr, err := zip.OpenReader(m.Zip)
	require.NoError(t, err)
	defer zr.Close()
	f, err := zr.Open(module + "@" + argoCDVersion + "/" + path)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return b
}
