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
	kptMDName = "qwen3-1-7b"
	kptNS     = "inference"
)

var (
	kptDeploymentFile = "generated/" + kptNS + "/deployment_" + kptMDName + ".yaml"
	kptServiceFile    = "generated/" + kptNS + "/service_" + kptMDName + ".yaml"
)

// kptPackage copies examples/kpt into a temp dir; the example itself stays
// pristine (no rendered output is committed).
func kptPackage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	copyDir(t, filepath.Join(repoRoot, "examples", "kpt"), dir)
	return dir
}

// kptPathEnv puts a directory holding `airunway-render` first on PATH: the
// Kptfile names the function by bare name because kpt resolves relative
// exec paths against its own cwd, not the package.
func kptPathEnv(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Symlink(renderBin(t), filepath.Join(dir, "airunway-render")))
	return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
}

func kptRender(t *testing.T, kpt, pkg string, env []string) result {
	t.Helper()
	return run(t, filepath.Dir(pkg), env, kpt, "fn", "render", filepath.Base(pkg), "--allow-exec")
}

// requireKptObjects checks the generated Deployment and Service.
func requireKptObjects(t *testing.T, depNode, svcNode *yaml.RNode) {
	t.Helper()
	var dep appsv1.Deployment
	decodeStrict(t, depNode, &dep)
	require.Equal(t, kptMDName, dep.Name)
	require.Equal(t, kptNS, dep.Namespace)
	require.Equal(t, kptMDName, dep.Annotations["render.airunway.ai/generated-from"])
	require.Len(t, dep.Spec.Template.Spec.Containers, 1)
	c := dep.Spec.Template.Spec.Containers[0]
	// Pinned by examples/kpt/capabilities.yaml, the pipeline's configPath.
	require.Equal(t, pinnedImage, c.Image)
	require.Contains(t, strings.Join(c.Args, " "), "--model Qwen/Qwen3-1.7B")
	require.Equal(t, resource.MustParse("1"), c.Resources.Limits["nvidia.com/gpu"], "GPU limit")

	var svc corev1.Service
	decodeStrict(t, svcNode, &svc)
	require.Equal(t, kptMDName, svc.Name)
	require.Equal(t, kptNS, svc.Namespace)
	require.Equal(t, dep.Spec.Selector.MatchLabels, svc.Spec.Selector)
}

func parseFile(t *testing.T, tree map[string]string, name string) *yaml.RNode {
	t.Helper()
	content, ok := tree[name]
	require.True(t, ok, "%s missing; files: %v", name, keys(tree))
	nodes := parseObjects(t, content)
	require.Len(t, nodes, 1, "%s should hold one object", name)
	return nodes[0]
}

func TestKptFnEval(t *testing.T) {
	kpt := kptBin(t)
	pkg := kptPackage(t)
	before := readTree(t, pkg)

	res := mustRun(t, pkg, nil, kpt, "fn", "eval", pkg, "--exec", renderBin(t),
		"--fn-config", filepath.Join(pkg, "capabilities.yaml"), "-o", "stdout")
	objs := parseObjects(t, res.stdout)

	requireRenderedMD(t, requireObject(t, objs, "airunway.ai/v1alpha1", "ModelDeployment", kptNS, kptMDName), "vllm")
	requireKptObjects(t,
		requireObject(t, objs, "apps/v1", "Deployment", kptNS, kptMDName),
		requireObject(t, objs, "v1", "Service", kptNS, kptMDName))
	// The generated objects are told where kpt should write them.
	dep := requireObject(t, objs, "apps/v1", "Deployment", kptNS, kptMDName)
	require.Equal(t, kptDeploymentFile, dep.GetAnnotations()["internal.config.kubernetes.io/path"])
	// kpt passes the Kptfile as an item; local-config must come back.
	requireObject(t, objs, "kpt.dev/v1", "Kptfile", "", "airunway-kpt-example")
	requireObject(t, objs, "airunway.ai/v1alpha1", "ClusterCapabilities", "", "dev-cluster")

	requireSameTree(t, before, readTree(t, pkg))
}

func TestKptFnRenderWritesPrunesAndIsIdempotent(t *testing.T) {
	kpt := kptBin(t)
	pkg := kptPackage(t)
	env := kptPathEnv(t)
	before := readTree(t, pkg)

	res := kptRender(t, kpt, pkg, env)
	require.Zero(t, res.exit, "kpt fn render failed\nstderr:\n%s", res.stderr)
	// kpt hands the capability file over twice (config and item); that is
	// the normal setup and must not produce a warning.
	require.NotContains(t, res.stderr, "[warning")
	first := readTree(t, pkg)
	require.Equal(t, sorted(append(keys(before), kptDeploymentFile, kptServiceFile)), keys(first))

	// Everything but the ModelDeployment is untouched, byte for byte: the
	// local-config items (Kptfile, capabilities.yaml) and non-KRM files.
	for name, content := range before {
		if name != "modeldeployment.yaml" {
			require.Equal(t, content, first[name], "%s changed", name)
		}
	}

	md := parseFile(t, first, "modeldeployment.yaml")
	requireRenderedMD(t, md, "vllm")
	require.Equal(t, "Qwen/Qwen3-1.7B", yaml.GetValue(md.Field("spec").Value.Field("model").Value.Field("id").Value))
	requireKptObjects(t, parseFile(t, first, kptDeploymentFile), parseFile(t, first, kptServiceFile))
	for name, content := range first {
		require.NotContains(t, content, "internal.config.kubernetes.io", name)
		require.NotContains(t, content, "config.kubernetes.io/path", name)
	}

	// Rendering a rendered package changes no byte.
	res = kptRender(t, kpt, pkg, env)
	require.Zero(t, res.exit, "second kpt fn render failed\nstderr:\n%s", res.stderr)
	requireSameTree(t, first, readTree(t, pkg))

	// Objects of a deleted ModelDeployment are pruned.
	require.NoError(t, os.Remove(filepath.Join(pkg, "modeldeployment.yaml")))
	res = kptRender(t, kpt, pkg, env)
	require.Zero(t, res.exit, "kpt fn render after delete failed\nstderr:\n%s", res.stderr)
	delete(before, "modeldeployment.yaml")
	requireSameTree(t, before, readTree(t, pkg))
}

func TestKptFnRenderFailureLeavesFilesUntouched(t *testing.T) {
	kpt := kptBin(t)
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			pkg := kptPackage(t)
			editFile(t, filepath.Join(pkg, tc.file), tc.old, tc.new)
			before := readTree(t, pkg)

			res := kptRender(t, kpt, pkg, kptPathEnv(t))
			require.NotZero(t, res.exit, "kpt fn render succeeded on invalid input\nstderr:\n%s", res.stderr)
			for _, w := range tc.want {
				require.Contains(t, res.stderr, w)
			}
			requireSameTree(t, before, readTree(t, pkg))
		})
	}
}

// TestKptMigrate: `kpt fn eval --exec "airunway-render migrate"` migrates
// a package in place (kpt passes the arguments to the function), and
// `airunway-render migrate --check` then finds nothing to do; before, it
// exits 2, as a CI guard would.
func TestKptMigrate(t *testing.T) {
	kpt := kptBin(t)
	pkg := t.TempDir()
	legacy := "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata:\n  name: legacy\n  namespace: models\nspec:\n  model:\n    id: Qwen/Qwen3-0.6B\n  image: registry.example.com/vllm:v0.11.0 # mirrored\n  engine:\n    type: vllm\n  resources:\n    gpu:\n      count: 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "models.yaml"), []byte(legacy), 0o644))

	res := run(t, pkg, nil, renderBin(t), "migrate", "--check", pkg)
	require.Equal(t, 2, res.exit, "--check before: %s", res.stderr)

	res = mustRun(t, pkg, nil, kpt, "fn", "eval", pkg, "--exec", renderBin(t)+" migrate")
	require.Contains(t, res.stderr, "moved `spec.image` to `spec.engine.image`")
	got, err := os.ReadFile(filepath.Join(pkg, "models.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(got), "  engine:\n    type: vllm\n    image: registry.example.com/vllm:v0.11.0 # mirrored\n")
	require.NotContains(t, string(got), "\n  image:")

	mustRun(t, pkg, nil, renderBin(t), "migrate", "--check", pkg)
}
