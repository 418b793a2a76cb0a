package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// argoRepo lays out a repository copy as argocd-cmp-server does and moves
// into the application's directory, apps/models.
func argoRepo(t *testing.T, files map[string]string) (root string) {
	t.Helper()
	root = t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(root, filepath.FromSlash(name)), content)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "apps", "models"), 0o755))
	t.Chdir(filepath.Join(root, "apps", "models"))
	t.Setenv(envSourcePath, "apps/models")
	return root
}

func argo(t *testing.T, cmd string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Execute([]string{"argocd", cmd}, nil, &out, &errb)
	return out.String(), errb.String(), code
}

// renderDeclaration declares airunway-render as kustomize's exec function
// (build runs this test binary in its place).
const renderDeclaration = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: render\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ../../bin/airunway-render\n"

// TestArgoCDGeneratePlainYAML: a directory without a kustomization is
// rendered, nested kustomizations and all, with the named capability file.
func TestArgoCDGeneratePlainYAML(t *testing.T) {
	argoRepo(t, map[string]string{
		"apps/models/qwen.yaml":              goodMD,
		"apps/models/sub/kustomization.yaml": "resources:\n- other.yaml\n",
		"apps/models/sub/other.yaml":         strings.ReplaceAll(goodMD, "qwen", "other"),
		"clusters/dev/capabilities.yaml":     capsPinned,
		"apps/models/.hidden/ignored.yaml":   badMD,
		"apps/models/notes/not-yaml.txt":     "x",
		"clusters/prod/unrelated-input.yaml": badMD,
	})
	t.Setenv(envCapabilities, "clusters/dev/capabilities.yaml")
	for i := 0; i < 2; i++ {
		out, stderr, code := argo(t, "generate")
		require.Equal(t, 0, code, stderr)
		got := items(t, out)
		require.Len(t, got, 6, "two ModelDeployments, Deployments and Services:\n%s", out)
		require.Contains(t, out, "image: vllm/vllm-openai:v0.11.0", "the named capability file is used")
		require.NotContains(t, out, "config.kubernetes.io/")
	}
}

// TestArgoCDGenerateKustomization: a kustomization is built as kustomize
// builds it. Without the function, the built objects (the patch applied,
// the unlisted file left out) are rendered with the named capability file;
// an overlay that runs the function gives exactly what build gives.
func TestArgoCDGenerateKustomization(t *testing.T) {
	const patch = "patches:\n- target: {kind: ModelDeployment, name: qwen}\n  patch: |\n    - op: add\n      path: /spec/scaling\n      value: {replicas: 3}\n"
	root := argoRepo(t, map[string]string{
		"apps/models/kustomization.yaml":  "resources: [qwen.yaml]\n" + patch,
		"apps/models/qwen.yaml":           goodMD,
		"apps/models/unlisted.yaml":       strings.ReplaceAll(goodMD, "qwen", "unlisted"),
		"clusters/dev/capabilities.yaml":  capsPinned,
		"clusters/dev/kustomization.yaml": "resources: [../../apps/models, capabilities.yaml]\ntransformers: [fn.yaml]\n",
		"clusters/dev/fn.yaml":            renderDeclaration,
	})
	t.Setenv(asFunction, "1")
	t.Setenv(envCapabilities, "clusters/dev/capabilities.yaml")
	out, stderr, code := argo(t, "generate")
	require.Equal(t, 0, code, stderr)
	require.Len(t, items(t, out), 3, "one ModelDeployment, Deployment and Service:\n%s", out)
	require.Contains(t, out, "replicas: 3", "the kustomization's patch")
	require.NotContains(t, out, "unlisted")
	require.Contains(t, out, "image: vllm/vllm-openai:v0.11.0")

	// The overlay: the same objects, as `build` prints them.
	t.Chdir(filepath.Join(root, "clusters", "dev"))
	t.Setenv(envSourcePath, "clusters/dev")
	t.Setenv(envCapabilities, "")
	overlay, stderr, code := argo(t, "generate")
	require.Equal(t, 0, code, stderr)
	built, stderr, code := run(t, "", "build", ".", "--root", root)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, built, overlay)
	require.Contains(t, overlay, "replicas: 3")
	require.Contains(t, overlay, "kind: Deployment")
	require.NotContains(t, overlay, "kind: ClusterCapabilities", "local config stays out")
}

func TestArgoCDGenerateErrors(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.yaml")
	writeFile(t, outside, capsPinned)
	cases := []struct {
		name       string
		files      map[string]string
		caps       string
		sourcePath string // "" keeps apps/models
		link       [2]string
		want       []string
	}{
		{
			name: "plain YAML and no capability file named",
			want: []string{"`ARGOCD_ENV_CAPABILITIES` must name the cluster's capability file", "spec.source.plugin.env"},
		},
		{
			name: "absolute path",
			caps: outside,
			want: []string{"it must be a relative path inside the repository"},
		},
		{
			name: "path leaving the repository",
			caps: "../../etc/passwd",
			want: []string{`"../../etc/passwd"`, "without `..`"},
		},
		{
			name: "symlink leaving the repository",
			caps: "clusters/dev/capabilities.yaml",
			link: [2]string{outside, "clusters/dev/capabilities.yaml"},
			want: []string{"outside the repository"},
		},
		{
			name: "model file linked out of the repository",
			caps: "clusters/dev/capabilities.yaml",
			link: [2]string{outside, "apps/models/leak.yaml"},
			want: []string{"must stay inside the repository", "(file leak.yaml)"},
		},
		{
			name:  "resources not a list",
			files: map[string]string{"apps/models/kustomization.yaml": "resources: qwen.yaml\n"},
			caps:  "clusters/dev/capabilities.yaml",
			want:  []string{"kustomize build of the application's directory", "invalid Kustomization"},
		},
		{
			name: "missing capability file",
			caps: "clusters/none.yaml",
			want: []string{"cannot read it"},
		},
		{
			name:       "not run in the application's directory",
			caps:       "clusters/dev/capabilities.yaml",
			sourcePath: "other/dir",
			want:       []string{"`ARGOCD_APP_SOURCE_PATH` is \"other/dir\"", "must run in the application's directory"},
		},
		{
			name:  "kustomization with a remote resource",
			files: map[string]string{"apps/models/kustomization.yaml": "resources:\n- qwen.yaml\n- https://example.com/x.yaml\n"},
			caps:  "clusters/dev/capabilities.yaml",
			want:  []string{"`resources[1]` is \"https://example.com/x.yaml\", a remote reference"},
		},
		{
			name:  "kustomization with a base outside the repository",
			files: map[string]string{"apps/models/kustomization.yaml": "resources:\n- ../../../outside\n"},
			caps:  "clusters/dev/capabilities.yaml",
			want:  []string{"is outside the repository"},
		},
		{
			name:  "kustomization running the renderer, and CAPABILITIES too",
			files: map[string]string{"apps/models/kustomization.yaml": "resources: [qwen.yaml, caps.yaml]\ntransformers: [fn.yaml]\n", "apps/models/fn.yaml": renderDeclaration, "apps/models/caps.yaml": capsPinned},
			caps:  "clusters/dev/capabilities.yaml",
			want:  []string{"`ARGOCD_ENV_CAPABILITIES` is set, but the application's kustomization runs airunway-render itself"},
		},
		{
			name:  "kustomization without the renderer, and no CAPABILITIES",
			files: map[string]string{"apps/models/kustomization.yaml": "resources: [qwen.yaml]\n"},
			want:  []string{"does not run airunway-render and `ARGOCD_ENV_CAPABILITIES` is unset"},
		},
		{
			name:  "nested kustomization past 1 MiB",
			files: map[string]string{"apps/models/sub/kustomization.yaml": "resources: []\n# " + strings.Repeat("x", 1<<20) + "\n"},
			caps:  "clusters/dev/capabilities.yaml",
			want:  []string{`"sub/kustomization.yaml": is larger than 1 MiB; a kustomization must be at most 1 MiB`},
		},
		{
			name:  "invalid model",
			files: map[string]string{"apps/models/broken.yaml": badMD},
			caps:  "clusters/dev/capabilities.yaml",
			want:  []string{"spec.scaling.replicas", "broken.yaml"},
		},
		{
			name:  "nothing to render",
			files: map[string]string{"apps/models/qwen.yaml": "", "apps/models/README.md": "no YAML"},
			caps:  "clusters/dev/capabilities.yaml",
			want:  []string{"rendered no objects", "Argo CD could prune every object"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"apps/models/qwen.yaml": goodMD, "clusters/dev/capabilities.yaml": capsPinned}
			for k, v := range tc.files {
				files[k] = v
			}
			if tc.link[0] != "" {
				delete(files, tc.link[1])
			}
			root := argoRepo(t, files)
			if tc.link[0] != "" {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, filepath.FromSlash(tc.link[1]))), 0o755))
				require.NoError(t, os.Symlink(tc.link[0], filepath.Join(root, filepath.FromSlash(tc.link[1]))))
			}
			if tc.sourcePath != "" {
				t.Setenv(envSourcePath, tc.sourcePath)
			}
			t.Setenv(envCapabilities, tc.caps)
			t.Setenv(asFunction, "1")
			out, stderr, code := argo(t, "generate")
			require.Equal(t, 1, code, "stdout:\n%s", out)
			require.Empty(t, out, "nothing is printed on error")
			for _, w := range tc.want {
				require.Contains(t, stderr, w)
			}
		})
	}
}

func TestArgoCDUsage(t *testing.T) {
	_, stderr, code := argo(t, "render")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `unknown command "render"`)
}
