package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	kustomizeNS = "inference"
	// The image pinned by the dev capability file and the kpt example's:
	// seeing it proves the capability file was read.
	pinnedImage = "vllm/vllm-openai:v0.19.1"
	// kustomizeRenderExec and kustomizeRenderImage are the transformer
	// entries of examples/kustomize/clusters/*; docs/gitops.md tells kubectl
	// kustomize users to swap the first for the second.
	kustomizeRenderExec  = "- ../../render/exec\n"
	kustomizeRenderImage = "- ../../render/image\n"
)

// exampleModels are the ModelDeployments of examples/kustomize/base.
var exampleModels = []string{"llama-3-1-8b", "qwen3-0-6b"}

// examplesTree copies examples/ to <tmp>/examples with the binary linked at
// <tmp>/bin/airunway-render, where examples/flux/render.sh looks first, as
// in a clone after `make build`.
func examplesTree(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	copyDir(t, filepath.Join(repoRoot, "examples"), filepath.Join(root, "examples"))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(renderBin(t), filepath.Join(root, "bin", "airunway-render")))
	return root
}

func overlayDir(root, cluster string) string {
	return filepath.Join(root, "examples", "kustomize", "clusters", cluster)
}

// kustomizeBuild runs standalone kustomize exactly as docs/gitops.md says,
// with the binary first on PATH, where the exec declaration's bare name
// (`path: airunway-render`) is looked up, as after `make install`.
func kustomizeBuild(t *testing.T, dir string, env ...string) result {
	t.Helper()
	env = append([]string{renderOnPath(t)}, env...)
	// Run from elsewhere: nothing may depend on kustomize's cwd.
	return run(t, t.TempDir(), env, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
}

// renderOnPath is a PATH setting whose first directory holds the binary
// under its installed name (AIRUNWAY_RENDER_BIN may name it otherwise).
func renderOnPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(renderBin(t), filepath.Join(dir, "airunway-render")))
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

func TestKustomizeDevOverlay(t *testing.T) {
	root := examplesTree(t)
	res := kustomizeBuild(t, overlayDir(root, "dev"))
	require.Zero(t, res.exit, "kustomize build failed\nstderr:\n%s", res.stderr)
	requireDevObjects(t, parseObjects(t, res.stdout))
}

func TestKustomizeProdOverlay(t *testing.T) {
	root := examplesTree(t)
	res := kustomizeBuild(t, overlayDir(root, "prod"))
	require.Zero(t, res.exit, "kustomize build failed\nstderr:\n%s", res.stderr)
	requireProdObjects(t, parseObjects(t, res.stdout))
}

// TestBuildMatchesKustomize: `airunway-render build` prints exactly what
// standalone kustomize prints for each overlay, with the exec and the
// image declaration alike (build runs itself for both; kustomize runs the
// exec one here) and without a bin/ beside the examples.
func TestBuildMatchesKustomize(t *testing.T) {
	root := examplesTree(t)
	bare := t.TempDir()
	copyDir(t, filepath.Join(repoRoot, "examples"), filepath.Join(bare, "examples"))
	for _, cluster := range []string{"dev", "prod"} {
		want := kustomizeBuild(t, overlayDir(root, cluster))
		require.Zero(t, want.exit, "kustomize build failed\nstderr:\n%s", want.stderr)
		got := mustRun(t, t.TempDir(), nil, renderBin(t), "build", overlayDir(bare, cluster))
		require.Equal(t, want.stdout, got.stdout, cluster)

		editFile(t, filepath.Join(overlayDir(bare, cluster), "kustomization.yaml"), kustomizeRenderExec, kustomizeRenderImage)
		image := mustRun(t, t.TempDir(), nil, renderBin(t), "build", overlayDir(bare, cluster))
		require.Equal(t, want.stdout, image.stdout, cluster+", image declaration")
		t.Logf("%s: %d bytes, identical to kustomize build", cluster, len(got.stdout))
	}
}

// requireDevObjects: plain vLLM on the dev cluster's L4 nodes.
func requireDevObjects(t *testing.T, objs []*yaml.RNode) {
	t.Helper()
	require.Len(t, objs, 7, "the Namespace, and two models, each with a Deployment and a Service: %v", identities(objs))
	gpus := map[string]string{"llama-3-1-8b": "2", "qwen3-0-6b": "1"}
	for _, name := range exampleModels {
		md := requireObject(t, objs, "airunway.ai/v1alpha1", "ModelDeployment", kustomizeNS, name)
		requireRenderedMD(t, md, "vllm")
		require.Equal(t, "l4", md.GetAnnotations()["render.airunway.ai/node-pool"])

		var dep appsv1.Deployment
		decodeStrict(t, requireObject(t, objs, "apps/v1", "Deployment", kustomizeNS, name), &dep)
		require.Equal(t, name, dep.Annotations["render.airunway.ai/generated-from"])
		pod := dep.Spec.Template.Spec
		require.Equal(t, map[string]string{"cloud.google.com/gke-accelerator": "nvidia-l4"}, pod.NodeSelector)
		require.Len(t, pod.Containers, 1)
		require.Equal(t, pinnedImage, pod.Containers[0].Image)
		require.Equal(t, resource.MustParse(gpus[name]), pod.Containers[0].Resources.Limits["nvidia.com/gpu"], "GPU limit of %s", name)

		var svc corev1.Service
		decodeStrict(t, requireObject(t, objs, "v1", "Service", kustomizeNS, name), &svc)
		require.Equal(t, dep.Spec.Selector.MatchLabels, svc.Spec.Selector, "the Service must select the Deployment's pods")
	}
	requireOnlyClusterObjects(t, objs)
}

// requireProdObjects: Dynamo on the prod cluster, each model on the pool
// that fits it, and the overlay's replica patch rendered (the transformer
// runs after the patches).
func requireProdObjects(t *testing.T, objs []*yaml.RNode) {
	t.Helper()
	require.Len(t, objs, 5, "the Namespace, and two models, each with a DynamoGraphDeployment: %v", identities(objs))
	pools := map[string]string{"llama-3-1-8b": "a100", "qwen3-0-6b": "l4"}
	products := map[string]string{"llama-3-1-8b": "NVIDIA-A100-PCIE-80GB", "qwen3-0-6b": "NVIDIA-L4"}
	workers := map[string]string{"llama-3-1-8b": "1", "qwen3-0-6b": "2"}
	for _, name := range exampleModels {
		md := requireObject(t, objs, "airunway.ai/v1alpha1", "ModelDeployment", kustomizeNS, name)
		requireRenderedMD(t, md, "dynamo")
		require.Equal(t, pools[name], md.GetAnnotations()["render.airunway.ai/node-pool"])

		dgd := requireObject(t, objs, "nvidia.com/v1alpha1", "DynamoGraphDeployment", kustomizeNS, name)
		requireSchemaValid(t, dgd)
		s, err := dgd.String()
		require.NoError(t, err)
		require.Contains(t, s, "nvidia.com/gpu.product: "+products[name])
		worker, err := dgd.Pipe(yaml.Lookup("spec", "services", "VllmWorker", "replicas"))
		require.NoError(t, err)
		require.NotNil(t, worker, "no VllmWorker in\n%s", s)
		require.Equal(t, workers[name], yaml.GetValue(worker), "worker replicas of %s", name)
	}
	requireOnlyClusterObjects(t, objs)
}

// requireOnlyClusterObjects: the capability file and the function
// declaration configure the build and must never reach a cluster.
func requireOnlyClusterObjects(t *testing.T, objs []*yaml.RNode) {
	t.Helper()
	for _, o := range objs {
		require.NotEqual(t, "ClusterCapabilities", o.GetKind(), "the capability file leaked into the output")
		require.NotEqual(t, "ConfigMap", o.GetKind(), "the function declaration leaked into the output")
	}
	requireNoOrchestratorAnnotations(t, objs)
}

func TestKustomizeRejectsInvalidInput(t *testing.T) {
	files := map[string]string{
		"modeldeployment.yaml": "examples/kustomize/base/qwen3-0-6b.yaml",
		"capabilities.yaml":    "examples/kustomize/clusters/dev/capabilities.yaml",
	}
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			root := examplesTree(t)
			editFile(t, filepath.Join(root, files[tc.file]), tc.old, tc.new)
			res := kustomizeBuild(t, overlayDir(root, "dev"))
			require.NotZero(t, res.exit, "kustomize build succeeded on invalid input\nstdout:\n%s", res.stdout)
			for _, w := range tc.want {
				require.Contains(t, res.stderr, w)
			}
			require.Empty(t, res.stdout, "no partial output on failure")
		})
	}
}

// Building the build output again with the same capability file and
// transformer must change nothing: the function drops and re-renders what
// it generated.
func TestKustomizeBuildIsFixedPoint(t *testing.T) {
	root := examplesTree(t)
	for _, cluster := range []string{"dev", "prod"} {
		first := kustomizeBuild(t, overlayDir(root, cluster))
		require.Zero(t, first.exit, "stderr:\n%s", first.stderr)

		again := filepath.Join(root, "examples", "kustomize", "clusters", cluster+"-again")
		require.NoError(t, os.MkdirAll(again, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(again, "rendered.yaml"), []byte(first.stdout), 0o644))
		copyFile(t, filepath.Join(overlayDir(root, cluster), "capabilities.yaml"), filepath.Join(again, "capabilities.yaml"), 0o644)
		require.NoError(t, os.WriteFile(filepath.Join(again, "kustomization.yaml"),
			[]byte("resources:\n- rendered.yaml\n- capabilities.yaml\ntransformers:\n"+kustomizeRenderExec), 0o644))

		second := kustomizeBuild(t, again)
		require.Zero(t, second.exit, "stderr:\n%s", second.stderr)
		require.Equal(t, first.stdout, second.stdout, "cluster %s", cluster)
	}
}

// kubectl kustomize cannot run exec functions and says nothing about it:
// exit 0, the models unrendered. docs/gitops.md warns about this; the test
// keeps the warning true (if kubectl ever runs them, docs/gitops.md must change).
func TestKubectlKustomizeSkipsExecFunctions(t *testing.T) {
	root := examplesTree(t)
	res := run(t, t.TempDir(), nil, "kubectl", "kustomize", "--enable-alpha-plugins", overlayDir(root, "dev"))
	require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
	objs := parseObjects(t, res.stdout)
	require.Len(t, objs, 3, "kubectl kustomize now runs exec functions (%v): update docs/gitops.md", identities(objs))
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		require.Equal(t, "ModelDeployment", o.GetKind())
		require.Empty(t, o.GetAnnotations()["render.airunway.ai/provider"])
	}
	// Without --enable-alpha-plugins it fails loudly instead.
	res = run(t, t.TempDir(), nil, "kubectl", "kustomize", overlayDir(root, "dev"))
	require.NotZero(t, res.exit)
	require.Contains(t, res.stderr, "external plugins disabled")
	require.True(t, strings.Contains(readFileString(t, filepath.Join(root, "examples", "kustomize", "clusters", "dev", "kustomization.yaml")), kustomizeRenderExec))
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestKustomizeModelCatalog: a ModelCatalog listed in the models'
// kustomization reaches the renderer as an item, which reads the house
// model's facts from it (no unknown-model warning; 70B parameters keep it
// off one L4, naming the catalog), and never reaches the output.
func TestKustomizeModelCatalog(t *testing.T) {
	root := examplesTree(t)
	base := filepath.Join(root, "examples", "kustomize", "base")
	require.NoError(t, os.WriteFile(filepath.Join(base, "house-model.yaml"), []byte(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: house-model
  namespace: inference
spec:
  model:
    id: my-org/house-model
  engine:
    type: vllm
    contextLength: 8192
  resources:
    gpu:
      count: 1
`), 0o644))
	catalog := `apiVersion: airunway.ai/v1alpha1
kind: ModelCatalog
metadata:
  name: house-models
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  models:
  - id: my-org/house-model
    params: 600000000
    dtype: bfloat16
    layers: 28
    kvHeads: 8
    headDim: 128
    context: 40960
    source: hand-written for the test
`
	require.NoError(t, os.WriteFile(filepath.Join(base, "catalog.yaml"), []byte(catalog), 0o644))
	editFile(t, filepath.Join(base, "kustomization.yaml"), "- llama-3-1-8b.yaml\n", "- llama-3-1-8b.yaml\n- house-model.yaml\n")

	// Without the catalog: the fit is not checked, and a warning says so.
	res := kustomizeBuild(t, overlayDir(root, "dev"))
	require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
	require.Contains(t, res.stderr, "[warning unknown-model]")

	editFile(t, filepath.Join(base, "kustomization.yaml"), "- house-model.yaml\n", "- house-model.yaml\n- catalog.yaml\n")
	res = kustomizeBuild(t, overlayDir(root, "dev"))
	require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
	require.NotContains(t, res.stderr, "unknown-model")
	objs := parseObjects(t, res.stdout)
	requireObject(t, objs, "apps/v1", "Deployment", kustomizeNS, "house-model")
	for _, o := range objs {
		require.NotEqual(t, "ModelCatalog", o.GetKind(), "the catalog is local configuration")
	}

	editFile(t, filepath.Join(base, "catalog.yaml"), "params: 600000000", "params: 70000000000")
	res = kustomizeBuild(t, overlayDir(root, "dev"))
	require.NotZero(t, res.exit)
	require.Empty(t, res.stdout)
	require.Contains(t, res.stderr, `my-org/house-model does not fit 1 GPU of pool "l4"`)
	require.Contains(t, res.stderr, "model facts from the ModelCatalog house-models: hand-written for the test")
}
