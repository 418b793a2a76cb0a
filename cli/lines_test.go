package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Inputs of issue 35, "Errors that lose their place".
const (
	linesModel = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: m
  namespace: inference
spec:
  model:
    id: Qwen/Qwen2.5-0.5B-Instruct
  provider:
    name: kuberay
  resources:
    gpu:
      count: 1
`
	linesCaps = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: l4only
spec:
  providers:
  - name: kuberay
    version: "1.4.2"
  - name: vllm
  nodePools:
  - name: l4
    selector:
      nvidia.com/gpu.product: NVIDIA-L4
    gpu:
      resourceName: nvidia.com/gpu
      product: NVIDIA-L4
      memoryMiB: 23034
      perNode: 1
    nodes: {count: 4}
`
)

// TestProblemsKeepTheirPlace: `render` names the list element of a type
// error and the line of the field, and a YAML syntax error the line of
// the mistake, in a model and in a capability file alike.
func TestProblemsKeepTheirPlace(t *testing.T) {
	envModel := strings.Replace(linesModel, "  resources:\n", "  env:\n  - name: A\n    value: \"x\"\n  - name: B\n    value: 3\n  resources:\n", 1)
	for _, tc := range []struct {
		name, model, caps string
		want              string
	}{{
		name: "a type error in a pool",
		caps: strings.Replace(linesCaps, "perNode: 1", `perNode: "x"`, 1),
		want: "[error] airunway.ai/v1alpha1/ClusterCapabilities/l4only spec.nodePools[0].gpu.perNode: must be an integer, got string (file caps.yaml, line 18)",
	}, {
		name: "a type error in a provider",
		caps: strings.Replace(linesCaps, `version: "1.4.2"`, "version: 1.4", 1),
		want: "[error] airunway.ai/v1alpha1/ClusterCapabilities/l4only spec.providers[0].version: must be a string, got number (file caps.yaml, line 8)",
	}, {
		name:  "a type error in a variable",
		model: envModel,
		want:  "[error] airunway.ai/v1alpha1/ModelDeployment/inference/m spec.env[1].value: must be a string, got number (file models.yaml, line 15)",
	}, {
		name:  "a type error in the second document of a file",
		model: linesModel + "---\n" + strings.Replace(envModel, "name: m\n", "name: n\n", 1),
		want:  "[error] airunway.ai/v1alpha1/ModelDeployment/inference/n spec.env[1].value: must be a string, got number (file models.yaml, line 29)",
	}, {
		name:  "a missing field: the line of its parent",
		model: strings.Replace(linesModel, "    id: Qwen/Qwen2.5-0.5B-Instruct\n", "    source: huggingface\n", 1),
		want:  "[error] airunway.ai/v1alpha1/ModelDeployment/inference/m spec.model.id: ",
	}, {
		name:  "a key indented 1 space (the issue's indent.yaml)",
		model: strings.Replace(linesModel, "  provider:\n    name: kuberay\n  resources:", " resources:", 1),
		want:  "[error]: cannot read YAML: line 9: `resources:` is indented 1 space, but the keys of `spec` are indented 2 and the top-level keys 0; line it up with the block it belongs to (file models.yaml)",
	}, {
		name:  "a model's `resources:` on line 7 the parser puts on line 4",
		model: "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: m, namespace: inference}\nspec:\n  model:\n      id: Qwen/Qwen2.5-0.5B-Instruct\n    resources:\n      gpu: {count: 1}\n",
		want:  "[error]: cannot read YAML: line 7: `resources:` is indented 4 spaces, but the keys of `spec.model` are indented 6 and the keys of `spec` 2; line it up with the block it belongs to (file models.yaml)",
	}, {
		name:  "the same mistake after another document",
		model: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: m, namespace: inference}\nspec:\n  model:\n      id: Qwen/Qwen2.5-0.5B-Instruct\n    resources:\n      gpu: {count: 1}\n",
		want:  "[error]: cannot read YAML: line 11: `resources:` is indented 4 spaces, but the keys of `spec.model` are indented 6 and the keys of `spec` 2; line it up with the block it belongs to (file models.yaml)",
	}, {
		name: "a capability file's `nodePools:` on line 7 the parser puts on line 4",
		caps: "apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: l4only}\nspec:\n  providers:\n      - name: vllm\n    nodePools:\n    - name: l4\n",
		want: "[error]: is not a single YAML object: line 7: `nodePools:` is indented 4 spaces, but the entries of `spec.providers` are indented 6 and the keys of `spec` 2; line it up with the block it belongs to (file caps.yaml)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			model, caps := tc.model, tc.caps
			if model == "" {
				model = linesModel
			}
			if caps == "" {
				caps = linesCaps
			}
			writeFile(t, filepath.Join(dir, "models.yaml"), model)
			writeFile(t, filepath.Join(dir, "caps.yaml"), caps)
			_, stderr, code := run(t, "", "render", "-f", "models.yaml", "--capabilities", "caps.yaml")
			require.Equal(t, 1, code, stderr)
			require.Contains(t, stderr, tc.want)
			if strings.HasSuffix(tc.want, ": ") { // a missing field: the line of `model:`
				require.Contains(t, stderr, "(file models.yaml, line 7)")
			}
		})
	}
}

// TestProblemLinesOnlyWhereKnown: read from stdin, a model's lines are
// stdin's; an item of a List names its own file, whose lines the CLI does
// not know, and gets none; the function's items never get one.
func TestProblemLinesOnlyWhereKnown(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, "caps.yaml", linesCaps)
	bad := strings.Replace(linesModel, "      count: 1", "      count: \"one\"", 1)

	_, stderr, code := run(t, bad, "render", "-f", "-", "--capabilities", "caps.yaml")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "spec.resources.gpu.count: must be an integer, got string (file <stdin>, line 13)")

	list := `apiVersion: v1
kind: List
items:
- apiVersion: airunway.ai/v1alpha1
  kind: ModelDeployment
  metadata:
    name: m
    namespace: inference
    annotations: {config.kubernetes.io/path: models/m.yaml}
  spec:
    model: {id: Qwen/Qwen2.5-0.5B-Instruct}
    resources: {gpu: {count: "one"}}
`
	writeFile(t, "list.yaml", list)
	_, stderr, code = run(t, "", "render", "-f", "list.yaml", "--capabilities", "caps.yaml")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "spec.resources.gpu.count: must be an integer, got string (file models/m.yaml)\n")

	_, stderr, code = run(t, resourceList("", bad))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "spec.resources.gpu.count: must be an integer, got string\n", "no file, no line")
}

// TestMergeFileLines: the capability file `discover --merge` reads names
// the line of a problem too.
func TestMergeFileLines(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "caps.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(linesCaps, `version: "1.4.2"`, "version: 1.4", 1)), 0o644))
	_, _, problems := readMergeFile(hostFiles{}, file)
	require.Len(t, problems, 1, "%v", problems)
	require.Equal(t, "spec.providers[0].version", problems[0].Field)
	require.Equal(t, 8, problems[0].Line)
}
