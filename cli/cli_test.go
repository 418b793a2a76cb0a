package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/fn"
)

const goodMD = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: qwen
  namespace: ml
spec:
  model: {id: Qwen/Qwen3-0.6B}
  provider: {name: vllm}
  engine: {type: vllm}
`

const badMD = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: broken
  namespace: ml
spec:
  model: {id: x}
  provider: {name: vllm}
  engine: {type: vllm}
  scaling: {replicas: 99}
`

const capsPinned = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: pinned
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  providers:
  - name: vllm
    images: {vllm: "vllm/vllm-openai:v0.11.0"}
`

func resourceList(config string, items ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, it := range items {
		for i, line := range strings.Split(strings.TrimRight(it, "\n"), "\n") {
			if i == 0 {
				b.WriteString("- " + line + "\n")
			} else {
				b.WriteString("  " + line + "\n")
			}
		}
	}
	if config != "" {
		b.WriteString("functionConfig:\n")
		for _, line := range strings.Split(strings.TrimRight(config, "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	var code int
	if len(args) == 0 {
		code = fn.Run(strings.NewReader(stdin), &out, &errOut) // as cmd/airunway-render does
	} else {
		code = Execute(args, strings.NewReader(stdin), &out, &errOut)
	}
	return out.String(), errOut.String(), code
}

func items(t *testing.T, rl string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(rl), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	return nodes
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func TestCLIRenderStream(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "models", "qwen.yaml"), goodMD)
	writeFile(t, filepath.Join(dir, "caps.yaml"), capsPinned)
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), "resources: [models/qwen.yaml]\n")
	out, stderr, code := run(t, "", "render", dir)
	require.Equal(t, 0, code, stderr)
	got := items(t, out)
	require.Len(t, got, 3, "ModelDeployment, Deployment, Service; no capability file, no kustomization")
	require.NotContains(t, out, "config.kubernetes.io/path")
	require.NotContains(t, out, "config.kubernetes.io/index")
	require.Contains(t, out, "v0.11.0", "the capability file among the inputs is used")
	require.True(t, strings.HasPrefix(out, "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment"), "objects are sorted")
}

func TestCLIOutputDir(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	out := filepath.Join(dir, "out")
	writeFile(t, filepath.Join(in, "qwen.yaml"), goodMD)
	writeFile(t, filepath.Join(out, "kustomization.yaml"), "resources: []\n")
	_, stderr, code := run(t, "", "render", "--output-dir", out, in)
	require.Equal(t, 0, code, stderr)
	want := []string{"kustomization.yaml", "ml/deployment_qwen.yaml", "ml/modeldeployment_qwen.yaml", "ml/service_qwen.yaml"}
	require.Equal(t, want, listFiles(t, out))
	first := readAll(t, out)
	require.True(t, strings.HasPrefix(first["ml/deployment_qwen.yaml"], GeneratedHeader))

	// Again: same bytes.
	_, stderr, code = run(t, "", "render", in, "--output-dir", out)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, first, readAll(t, out))

	// The model is deleted: its files go, the user's file stays.
	require.NoError(t, os.Remove(filepath.Join(in, "qwen.yaml")))
	writeFile(t, filepath.Join(in, "other.yaml"), strings.ReplaceAll(goodMD, "qwen", "other"))
	_, stderr, code = run(t, "", "render", "--output-dir", out, in)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"kustomization.yaml", "ml/deployment_other.yaml", "ml/modeldeployment_other.yaml", "ml/service_other.yaml"}, listFiles(t, out))
}

func TestCLIOutputDirKustomization(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	writeFile(t, filepath.Join(in, "qwen.yaml"), goodMD)
	_, stderr, code := run(t, "", "render", "--output-dir", out, "--kustomization", in)
	require.Equal(t, 0, code, stderr)
	want := GeneratedHeader + `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ml/deployment_qwen.yaml
- ml/modeldeployment_qwen.yaml
- ml/service_qwen.yaml
`
	require.Equal(t, want, readAll(t, out)["kustomization.yaml"])

	// Without the flag the generated kustomization is stale and goes.
	_, stderr, code = run(t, "", "render", "--output-dir", out, in)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, listFiles(t, out), "kustomization.yaml")

	// A hand-written kustomization is never replaced.
	writeFile(t, filepath.Join(out, "kustomization.yaml"), "resources: []\n")
	_, stderr, code = run(t, "", "render", "--output-dir", out, "--kustomization", in)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "was not generated by airunway-render")

	_, stderr, code = run(t, "", "render", "--kustomization", in)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "`--kustomization` must be used with `--output-dir`")

	empty := filepath.Join(dir, "empty")
	writeFile(t, filepath.Join(empty, "notes.yaml"), "")
	_, stderr, code = run(t, "", "render", "--output-dir", out, "--kustomization", empty)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "must not write an empty directory")
}

func TestCLIOutputDirFailsClosed(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	writeFile(t, filepath.Join(in, "a.yaml"), goodMD)
	writeFile(t, filepath.Join(in, "b.yaml"), badMD)
	stdout, stderr, code := run(t, "", "render", "--output-dir", out, in)
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "spec.scaling.replicas")
	require.Contains(t, stderr, "(file "+filepath.Join(in, "b.yaml")+")")
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "nothing is written when any input is invalid")

	// A hand-written file in the way is never overwritten.
	require.NoError(t, os.Remove(filepath.Join(in, "b.yaml")))
	writeFile(t, filepath.Join(out, "ml", "service_qwen.yaml"), "# mine\n")
	_, stderr, code = run(t, "", "render", "--output-dir", out, in)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "was not generated by airunway-render")
	require.Equal(t, "# mine\n", readAll(t, out)["ml/service_qwen.yaml"])
}

func TestCLICapabilitiesFlag(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "md.yaml"), goodMD)
	writeFile(t, filepath.Join(dir, "caps", "good.yaml"), capsPinned)
	writeFile(t, filepath.Join(dir, "caps", "bad.yaml"), strings.Replace(capsPinned, "name: vllm", "name: tgi", 1))
	out, stderr, code := run(t, "", "render", "--capabilities", filepath.Join(dir, "caps", "good.yaml"), filepath.Join(dir, "md.yaml"))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "v0.11.0")

	_, stderr, code = run(t, "", "render", "--capabilities", filepath.Join(dir, "caps", "bad.yaml"), filepath.Join(dir, "md.yaml"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `spec.providers[0].name: "tgi" is not a known provider`)
	require.Contains(t, stderr, "bad.yaml")
}

func TestCLIUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"render"}, {"bogus"}, {"render", "--nope", "x"}, {"version", "--json"}, {"render", "/does/not/exist"}} {
		_, stderr, code := run(t, "", args...)
		require.Equal(t, 1, code, "%v", args)
		require.NotEmpty(t, stderr, "%v", args)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := run(t, "", "version")
	require.Equal(t, 0, code)
	require.Contains(t, out, "airunway-render dev")
	for _, want := range []string{"kaito", ">= 0.6.0, < 0.13.0", "0.10.0", "vllm", "kaito.sh/v1beta1 Workspace", "≥ 1.18 (startupProbe)"} {
		require.Contains(t, out, want)
	}
}

// TestREADMEMatrixIsCurrent keeps the README's compatibility matrix
// generated from the code (`make readme` rewrites it).
func TestREADMEMatrixIsCurrent(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	require.Contains(t, string(readme), "<!-- matrix:begin -->\n"+capabilities.MatrixMarkdown()+"<!-- matrix:end -->", "README.md matrix is stale: run `make readme`")
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	}))
	return files
}

func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range listFiles(t, dir) {
		data, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		out[f] = string(data)
	}
	return out
}
