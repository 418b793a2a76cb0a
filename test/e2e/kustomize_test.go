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
)

const (
	kustomizeMDName = "qwen3-0-6b"
	kustomizeNS     = "inference"
	// The image pinned by examples/kustomize/capabilities.yaml: seeing it
	// proves the transformer config was read as the capability file.
	pinnedImage = "vllm/vllm-openai:v0.11.0"
)

// kustomizeTree copies examples/kustomize to <tmp>/examples/kustomize with
// the binary linked at <tmp>/bin/airunway-render, so the example's own
// relative exec path (../../bin/airunway-render) is what gets exercised.
func kustomizeTree(t *testing.T) (root, dir string) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, "examples", "kustomize")
	copyDir(t, filepath.Join(repoRoot, "examples", "kustomize"), dir)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(renderBin(t), filepath.Join(root, "bin", "airunway-render")))
	return root, dir
}

func kustomizeBuild(t *testing.T, dir string) result {
	t.Helper()
	// Run from elsewhere: kustomize must resolve the exec path against the
	// kustomization directory, not its cwd.
	return run(t, t.TempDir(), nil, kustomizeBin(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
}

func TestKustomizeBuildRendersExample(t *testing.T) {
	_, dir := kustomizeTree(t)
	res := kustomizeBuild(t, dir)
	require.Zero(t, res.exit, "kustomize build failed\nstderr:\n%s", res.stderr)
	objs := parseObjects(t, res.stdout)

	md := requireObject(t, objs, "airunway.ai/v1alpha1", "ModelDeployment", kustomizeNS, kustomizeMDName)
	requireRenderedMD(t, md, "vllm")

	var dep appsv1.Deployment
	decodeStrict(t, requireObject(t, objs, "apps/v1", "Deployment", kustomizeNS, kustomizeMDName), &dep)
	require.Equal(t, kustomizeMDName, dep.Annotations["render.airunway.ai/generated-from"])
	require.Equal(t, kustomizeMDName, dep.Labels["airunway.ai/model-deployment"])
	require.Len(t, dep.Spec.Template.Spec.Containers, 1)
	c := dep.Spec.Template.Spec.Containers[0]
	require.Equal(t, pinnedImage, c.Image)
	require.Contains(t, strings.Join(c.Args, " "), "--model Qwen/Qwen3-0.6B")
	require.Equal(t, resource.MustParse("1"), c.Resources.Limits["nvidia.com/gpu"], "GPU limit")

	var svc corev1.Service
	decodeStrict(t, requireObject(t, objs, "v1", "Service", kustomizeNS, kustomizeMDName), &svc)
	require.Equal(t, kustomizeMDName, svc.Annotations["render.airunway.ai/generated-from"])
	require.Equal(t, dep.Spec.Selector.MatchLabels, svc.Spec.Selector, "the Service must select the Deployment's pods")

	// kustomize drops local-config objects; the capability file is config.
	for _, o := range objs {
		require.NotEqual(t, "ClusterCapabilities", o.GetKind(), "the capability file leaked into the build output")
	}
	require.Len(t, objs, 3, "objects: %v", identities(objs))
	requireNoOrchestratorAnnotations(t, objs)
	require.NotContains(t, res.stdout, "config.kubernetes.io/")
}

func TestKustomizeBuildRejectsInvalidInput(t *testing.T) {
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			_, dir := kustomizeTree(t)
			editFile(t, filepath.Join(dir, tc.file), tc.old, tc.new)
			res := kustomizeBuild(t, dir)
			require.NotZero(t, res.exit, "kustomize build succeeded on invalid input\nstdout:\n%s", res.stdout)
			for _, w := range tc.want {
				require.Contains(t, res.stderr, w)
			}
			require.Empty(t, res.stdout, "no partial output on failure")
		})
	}
}

// Building the build output again with the same transformer must change
// nothing: the function drops and re-renders what it generated.
func TestKustomizeBuildIsFixedPoint(t *testing.T) {
	root, dir := kustomizeTree(t)
	first := kustomizeBuild(t, dir)
	require.Zero(t, first.exit, "stderr:\n%s", first.stderr)
	require.Contains(t, first.stdout, "kind: Deployment", "the function did not run")

	again := filepath.Join(root, "examples", "again")
	require.NoError(t, os.MkdirAll(again, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(again, "rendered.yaml"), []byte(first.stdout), 0o644))
	caps, err := os.ReadFile(filepath.Join(dir, "capabilities.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(again, "capabilities.yaml"), caps, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(again, "kustomization.yaml"),
		[]byte("resources:\n- rendered.yaml\ntransformers:\n- capabilities.yaml\n"), 0o644))

	second := kustomizeBuild(t, again)
	require.Zero(t, second.exit, "stderr:\n%s", second.stderr)
	require.Equal(t, first.stdout, second.stdout)
}
