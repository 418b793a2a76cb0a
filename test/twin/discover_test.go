package twin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// discoveryGroups are the API groups whose CRDs discovery reads: the
// providers' and the Gateway API's. A test that needs the cluster to have
// exactly an example's set stashes the others (isolateCRDs).
var discoveryGroups = []string{"kaito.sh", "nvidia.com", "ray.io", "gateway.networking.k8s.io", "gateway.networking.x-k8s.io",
	"inference.networking.k8s.io", "inference.networking.x-k8s.io"}

// isolateCRDs deletes every CRD of discoveryGroups other tests installed,
// so that the cluster has exactly the CRDs the test installs, and when the
// test ends deletes those and puts the others back: the tests after it
// find the CRDs as they were (their installers run once).
func isolateCRDs(t *testing.T) {
	t.Helper()
	stashed := removeDiscoveryCRDs(t)
	t.Cleanup(func() {
		removeDiscoveryCRDs(t)
		for _, crd := range stashed {
			fresh := &apiextensionsv1.CustomResourceDefinition{
				ObjectMeta: metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations},
				Spec:       crd.Spec,
			}
			ctx, cancel := context.WithTimeout(context.Background(), twin.HangBound)
			require.NoError(t, createCRD(ctx, fresh))
			cancel()
		}
	})
}

// removeDiscoveryCRDs deletes the CRDs of discoveryGroups and returns them.
func removeDiscoveryCRDs(t *testing.T) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	require.NoError(t, cluster.Client.List(context.Background(), list))
	var removed []apiextensionsv1.CustomResourceDefinition
	for _, crd := range list.Items {
		if slices.Contains(discoveryGroups, crd.Spec.Group) {
			removed = append(removed, crd)
			deleteCRD(t, crd.Name)
		}
	}
	return removed
}

// deleteCRD deletes a CRD and waits until it is gone.
func deleteCRD(t *testing.T, name string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cluster.Client.Delete(context.Background(), crd); apierrors.IsNotFound(err) {
		return
	} else {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(crd), crd))
	}, twin.HangBound, 100*time.Millisecond, "CRD %s was not deleted", name)
}

// ensureCRD creates a CRD unless it exists.
func ensureCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), twin.HangBound)
	defer cancel()
	if err := createCRD(ctx, crd); !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

// stageCluster makes the twin what a capability file describes beyond its
// Nodes (useCluster): each operator provider's CRD and the Deployment its
// Helm chart creates, at the declared release (with no replicas: the
// stand-ins play the operators; discovery reads the Deployment); the
// Gateway API and Inference Extension CRDs and the parent Gateway. It
// removes them all when the test ends.
func stageCluster(t *testing.T, caps *hub.ClusterCapabilities) {
	t.Helper()
	t.Cleanup(func() { removeDiscoveryCRDs(t) })
	for _, p := range caps.Spec.Providers {
		switch p.Name {
		case hub.ProviderKAITO:
			crd, err := schemacheck.CRD("kaito.sh", "Workspace", "")
			require.NoError(t, err)
			ensureCRD(t, crd)
			createOperator(t, "kaito-workspace", "kaito-workspace",
				map[string]string{"app.kubernetes.io/name": "workspace", "app.kubernetes.io/version": p.Version, "helm.sh/chart": "workspace-" + p.Version},
				"mcr.microsoft.com/aks/kaito/workspace:"+p.Version)
		case hub.ProviderDynamo:
			crd, err := schemacheck.CRD("nvidia.com", "DynamoGraphDeployment", "")
			require.NoError(t, err)
			require.NoError(t, schemacheck.SetStorageVersion(crd, "v1alpha1"))
			ensureCRD(t, crd)
			createOperator(t, "dynamo-system", "dynamo-platform-dynamo-operator-controller-manager",
				map[string]string{"control-plane": "controller-manager", "app.kubernetes.io/part-of": "dynamo-operator"},
				"nvcr.io/nvidia/ai-dynamo/kubernetes-operator:"+p.Version, "--operator-version="+p.Version)
		case hub.ProviderKubeRay:
			// The CRDs of the declared release, as the twin's KubeRay tests
			// install them (hack/install-twin.sh copies them), and the
			// kuberay-operator chart's Deployment.
			require.NoError(t, installCRDDir(filepath.Join(os.Getenv("TWIN_ASSETS"), "kuberay-"+p.Version, "crds")), "KubeRay %s's CRDs", p.Version)
			createOperator(t, "kuberay-system", "kuberay-operator",
				map[string]string{"app.kubernetes.io/name": "kuberay-operator", "helm.sh/chart": "kuberay-operator-" + p.Version},
				"quay.io/kuberay/operator:v"+p.Version)
		}
	}
	if g := caps.Spec.Gateway; g != nil {
		require.Equal(t, "v1.5.1", g.GatewayAPIVersion, "the twin has the v1.5.1 Gateway API CRDs")
		require.NoError(t, installCRDDir(filepath.Join(os.Getenv("TWIN_ASSETS"), "gateway-crds-1.5.1-1.5.0")))
		gw := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"name": g.ParentRef.Name, "namespace": g.ParentRef.Namespace},
			"spec": map[string]any{"gatewayClassName": "twin", "listeners": []any{
				map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP"}}},
		}}
		createNamespace(t, g.ParentRef.Namespace)
		require.NoError(t, cluster.Client.Create(context.Background(), gw))
		t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), gw) })
	}
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	require.NoError(t, createIgnoringExisting(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
}

// createOperator creates an operator's Deployment as its chart does.
func createOperator(t *testing.T, namespace, name string, labels map[string]string, image string, args ...string) {
	t.Helper()
	createNamespace(t, namespace)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: image, Args: args}}},
			},
		},
	}
	require.NoError(t, cluster.Client.Create(context.Background(), d))
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), d) })
}

// discoverKubeconfig is a kubeconfig that acts as a ServiceAccount bound
// to deploy/discover's ClusterRole and nothing else: discover proves the
// role is enough.
func discoverKubeconfig(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "discover", "clusterrole.yaml"))
	require.NoError(t, err)
	role := &rbacv1.ClusterRole{}
	require.NoError(t, sigsyaml.UnmarshalStrict(data, role))
	require.NoError(t, createIgnoringExisting(ctx, role))
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "twin-discover"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "discover"}},
	}
	require.NoError(t, createIgnoringExisting(ctx, binding))
	return impersonating(t, "system:serviceaccount:ci:discover")
}

// impersonating is the twin's kubeconfig acting as another user (a
// ServiceAccount), who has only the RBAC bound to it.
func impersonating(t *testing.T, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	require.NoError(t, err)
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

// runDiscover runs `airunway-render capabilities discover` and returns its
// stdout and stderr; it fails the test on a non-zero exit.
func runDiscover(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(renderBin(t), append([]string{"capabilities", "discover"}, args...)...)
	cmd.Dir = repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "discover: %s", stderr.String())
	return stdout.String(), stderr.String()
}

// renderOutcome is what rendering prints and its exit status.
func renderOutcome(t *testing.T, caps, input string) string {
	t.Helper()
	cmd := exec.Command(renderBin(t), "render", "--capabilities", caps, input)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Sprintf("exit %d", exit.ExitCode())
	}
	require.NoError(t, err)
	return string(out)
}

// TestDiscoverRoundTrip builds the twin of each example capability file —
// its Nodes, its providers' CRDs and operator Deployments, its Gateway API
// and Gateway — and runs the binary's `capabilities discover` on it as a
// ServiceAccount with only deploy/discover's ClusterRole. Merged into the
// example (--merge), the discovered facts change nothing but what the
// example leaves out (capacity, a node count), and every shipped model
// renders byte for byte as it does with the example. Discovered from
// scratch, the file matches the cluster (discover.Compare finds nothing),
// and a second run prints the same bytes.
func TestDiscoverRoundTrip(t *testing.T) {
	isolateCRDs(t)
	kubeconfig := discoverKubeconfig(t)
	for _, file := range exampleCaps {
		if file == "" {
			continue // the embedded default describes no cluster
		}
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			decoded, problems := capabilities.Decode(mustRead(t, filepath.Join(repoRoot, file)))
			require.False(t, problems.HasErrors(), "%v", problems)
			waitNodesReady(t, useCluster(t, file))
			stageCluster(t, decoded)

			merged, stderr := runDiscover(t, "--kubeconfig", kubeconfig, "--merge", file)
			changes := 0
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				field, _, _ := strings.Cut(line, ":")
				switch {
				case strings.HasSuffix(line, "matches the cluster"):
				case strings.HasSuffix(field, ".capacity") || strings.HasSuffix(field, ".nodes.count"):
					changes++
				default:
					t.Errorf("discover changed a fact the example declares: %s", line)
				}
			}
			mergedFile := filepath.Join(t.TempDir(), "capabilities.yaml")
			require.NoError(t, os.WriteFile(mergedFile, []byte(merged), 0o644))
			same := 0
			for _, model := range exampleModels {
				want := renderOutcome(t, file, model)
				require.Equal(t, want, renderOutcome(t, mergedFile, model), "%s rendered with the merged file", model)
				if !strings.HasPrefix(want, "exit ") {
					same++
				}
			}

			plain, _ := runDiscover(t, "--kubeconfig", kubeconfig, "--name", "twin")
			again, _ := runDiscover(t, "--kubeconfig", kubeconfig, "--name", "twin")
			require.Equal(t, plain, again, "the same cluster, the same bytes")
			found, problems := capabilities.Decode([]byte(plain))
			require.False(t, problems.HasErrors(), "%v", problems)
			_, problems = capabilities.Resolve(found)
			require.False(t, problems.HasErrors(), "%v", problems)
			live, err := discover.Read(context.Background(), cluster.Config)
			require.NoError(t, err)
			require.Empty(t, discover.Compare(found, live), "the discovered file against the cluster it came from")
			require.Empty(t, discover.Compare(decoded, live), "the example against its twin")
			requireSameFacts(t, decoded, found)
			addRow("- | discover round trip | %s | %d pools | %d of %d shipped models render identically (the rest fail alike) | %d change(s) merged | -",
				file, len(decoded.Spec.NodePools), same, len(exampleModels), changes)
		})
	}
}

// requireSameFacts holds what discover found from scratch to the facts
// the example declares: each operator's release, the gateway, and each
// pool's GPUs and taints (names, selectors and prices are people's).
func requireSameFacts(t *testing.T, declared, found *hub.ClusterCapabilities) {
	t.Helper()
	for _, p := range declared.Spec.Providers {
		i := slices.IndexFunc(found.Spec.Providers, func(f hub.ProviderCapability) bool { return f.Name == p.Name })
		if discover.ProviderCRD(p.Name) == "" {
			continue // vLLM and llm-d install nothing to find
		}
		require.GreaterOrEqual(t, i, 0, "provider %s found", p.Name)
		require.Equal(t, p.Version, found.Spec.Providers[i].Version, "provider %s's release", p.Name)
	}
	if g := declared.Spec.Gateway; g != nil {
		require.NotNil(t, found.Spec.Gateway)
		require.Equal(t, *g, *found.Spec.Gateway)
	} else {
		require.Nil(t, found.Spec.Gateway)
	}
	for _, p := range declared.Spec.NodePools {
		i := slices.IndexFunc(found.Spec.NodePools, func(f hub.NodePool) bool {
			return (f.GPU == nil) == (p.GPU == nil) && (p.GPU == nil || reflect.DeepEqual(gpuFacts(f), gpuFacts(p))) &&
				discover.FormatTaints(f.Taints) == discover.FormatTaints(p.Taints)
		})
		require.GreaterOrEqual(t, i, 0, "pool %s's GPUs and taints found", p.Name)
	}
}

// gpuFacts are the facts of a pool's GPUs discovery is held to: the
// resource name, product, memory and count; for a DRA pool (whose devices
// the twin publishes in ResourceSlices) the DeviceClass and the devices'
// attributes instead of a resource name. Selectors are people's, like
// names and prices.
func gpuFacts(p hub.NodePool) hub.PoolGPU {
	g := hub.PoolGPU{ResourceName: p.GPUResource(), Product: p.GPU.Product, MemoryMiB: p.GPU.MemoryMiB, PerNode: p.GPU.PerNode}
	if p.ClaimsDevices() {
		g.ResourceName, g.DeviceClassName, g.Attributes = "", p.GPU.DeviceClassName, p.GPU.Attributes
	}
	return g
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}
