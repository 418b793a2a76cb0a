package e2e

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// argoCDVersion is the release whose install.yaml the example installs
// and whose Application CRD it is checked against.
const argoCDVersion = "v3.6.1"

// The example Applications and the plugin run on the real Argo CD in the
// GitOps suite (test/twin, TestGitOpsArgoCD). Here: the files themselves,
// and the plugin's command inside the sidecar image.

// TestArgoCDExampleFiles: the Applications are valid for Argo CD's CRD and
// name the plugin and a cluster overlay that exists; the plugin has no
// discover section, so Argo CD hands it only the Applications that name it
// (never a rendered directory).
func TestArgoCDExampleFiles(t *testing.T) {
	objs := parseObjects(t, readFileString(t, filepath.Join(repoRoot, "examples", "argocd", "applications.yaml")))
	require.Len(t, objs, 2)
	for _, o := range objs {
		requireSchemaValid(t, o)
		s, err := o.String()
		require.NoError(t, err)
		var app struct {
			Spec struct {
				Source struct {
					Path   string
					Plugin struct{ Name string }
				}
			}
		}
		require.NoError(t, sigsyaml.Unmarshal([]byte(s), &app))
		require.Equal(t, "airunway-render", app.Spec.Source.Plugin.Name, o.GetName())
		require.FileExists(t, filepath.Join(repoRoot, app.Spec.Source.Path, "kustomization.yaml"), o.GetName())
	}
	var plugin map[string]any
	require.NoError(t, sigsyaml.Unmarshal([]byte(readFileString(t, filepath.Join(repoRoot, "examples", "argocd", "plugin.yaml"))), &plugin))
	spec, _ := plugin["spec"].(map[string]any)
	require.NotContains(t, spec, "discover")
	require.Equal(t, map[string]any{"command": []any{"airunway-render", "argocd", "generate"}}, spec["generate"])
}

// runPluginInImage runs the plugin's command inside the sidecar image as
// argocd-cmp-server runs it in the sidecar (v3, cmpserver/plugin): in the
// application's directory of an unpacked copy of the repository, as user
// 999 (which owns that copy), with ARGOCD_APP_* set, here also with a
// read-only root filesystem and no network.
func runPluginInImage(t *testing.T, im images) {
	t.Helper()
	work := t.TempDir()
	require.NoError(t, os.Chmod(work, 0o755))
	copyDir(t, filepath.Join(repoRoot, "examples"), filepath.Join(work, "examples"))
	out, err := exec.Command("chown", "-R", "999:999", work).CombinedOutput()
	require.NoError(t, err, "%s", out)
	const path = "examples/kustomize/clusters/dev"
	args := []string{"run", "--rm", "--network", "none", "--read-only", "--user", "999:999",
		"-v", work + ":" + work, "-w", filepath.Join(work, path),
		"--env", "ARGOCD_APP_NAME=models-dev", "--env", "ARGOCD_APP_NAMESPACE=inference",
		"--env", "ARGOCD_APP_SOURCE_PATH=" + path, "--env", "ARGOCD_APP_SOURCE_REPO_URL=https://github.com/example/platform",
		"--env", "ARGOCD_APP_REVISION=0123456789abcdef0123456789abcdef01234567", "--env", "KUBE_VERSION=1.34.2",
		argocdPluginImage, "airunway-render", "argocd", "generate"}
	res := mustRun(t, work, im.env, "podman", args...)
	requireDevObjects(t, parseObjects(t, res.stdout))
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
