package twin_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
	"github.com/airunway-render/airunway-render/reporter"
)

// driftCapabilities is the cluster the drift test holds the reporter to:
// KAITO, the Gateway API with the Inference Extension and a Gateway, an L4
// pool and a CPU pool.
const driftCapabilities = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: drift
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  providers:
  - name: kaito
    version: "0.10.0"
  - name: vllm
  gateway:
    inferencePoolVersion: inference.networking.k8s.io/v1
    gatewayAPIVersion: v1.5.1
    channel: standard
    parentRef: {name: inference-gateway, namespace: gateway-system}
  nodePools:
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {resourceName: nvidia.com/gpu, product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
    nodes: {count: 2}
  - name: cpu
    selector: {kubernetes.io/os: linux}
    nodes: {count: 2}
`

// reporterServiceAccount applies deploy/base's namespace, ServiceAccount
// and RBAC, and returns a kubeconfig acting as that ServiceAccount: the
// drift test holds the reporter to the least privilege it ships with.
func reporterServiceAccount(t *testing.T) string {
	t.Helper()
	const system = "airunway-system"
	for _, file := range []string{"namespace.yaml", "rbac.yaml"} {
		for _, obj := range decodeObjects(t, mustRead(t, filepath.Join(repoRoot, "deploy", "base", file))) {
			switch obj.GetKind() {
			case "ServiceAccount", "Role", "RoleBinding":
				obj.SetNamespace(system) // as the kustomization does
			}
			require.NoError(t, createIgnoringExisting(context.Background(), obj))
		}
	}
	return impersonating(t, "system:serviceaccount:"+system+":airunway-status-reporter")
}

// TestCapabilitiesDrift applies a capability file to the twin as a
// ClusterCapabilities, beside a model rendered with it, runs the status
// reporter as its own ServiceAccount with deploy/base's RBAC, and changes the cluster one fact at a time: a pool's node
// relabelled, a pool's nodes removed, a provider CRD removed, an operator
// upgraded, the Gateway API bundle bumped. Each change turns
// CapabilitiesCurrent False within seconds, with a difference naming the
// field (and, for the model's pool and provider, a warning on the model and
// the metrics saying so); undoing it turns it True again.
func TestCapabilitiesDrift(t *testing.T) {
	isolateCRDs(t)
	ctx := context.Background()
	caps := filepath.Join(t.TempDir(), "capabilities.yaml")
	require.NoError(t, os.WriteFile(caps, []byte(driftCapabilities), 0o644))
	decoded, problems := capabilities.Decode([]byte(driftCapabilities))
	require.False(t, problems.HasErrors(), "%v", problems)
	nodes := useCluster(t, caps)
	waitNodesReady(t, nodes)
	stageCluster(t, decoded)

	applied := &unstructured.Unstructured{}
	require.NoError(t, sigsyaml.Unmarshal([]byte(driftCapabilities), &applied.Object))
	require.NoError(t, cluster.Client.Create(ctx, applied))
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), applied) })

	model := oneModel(t, "qwen3", "  model: {id: Qwen/Qwen3-0.6B}\n  provider: {name: vllm}\n  engine: {type: vllm}\n  resources: {gpu: {count: 1}}\n")
	ns, _ := deploy(t, render(t, caps, model))
	// Its metrics on a port of its own choosing, its one port (the
	// probes are off), which the kernel tells.
	rep := startReporter(t, ns, "--metrics-bind-address", "127.0.0.1:0", "--kubeconfig", reporterServiceAccount(t))
	listening, cancel := context.WithTimeout(ctx, twin.HangBound)
	defer cancel()
	port, err := twin.ListeningPort(listening, rep.Pid)
	require.NoError(t, err, "the reporter's metrics endpoint")
	metrics := "127.0.0.1:" + strconv.Itoa(port)

	const differences = `airunway_status_reporter_capabilities_differences{clustercapabilities="drift"}`
	current := func(want string, start time.Time) (time.Duration, *unstructured.Unstructured) {
		t.Helper()
		got := waitCondition(t, reporter.ClusterCapabilitiesGVK, client.ObjectKey{Name: "drift"}, want, "")
		return time.Since(start), got
	}
	modelCondition := func(want, reason string) {
		t.Helper()
		waitCondition(t, reporter.ModelDeploymentGVK, client.ObjectKey{Namespace: ns, Name: "qwen3"}, want, reason)
	}
	current("True", time.Now())
	modelCondition("True", reporter.ReasonCapabilitiesCurrent)
	waitMetric(t, metrics, differences, func(v float64) bool { return v == 0 })

	gatewayCRDs := func() []apiextensionsv1.CustomResourceDefinition {
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		require.NoError(t, cluster.Client.List(ctx, list))
		var out []apiextensionsv1.CustomResourceDefinition
		for _, crd := range list.Items {
			if crd.Spec.Group == "gateway.networking.k8s.io" {
				out = append(out, crd)
			}
		}
		return out
	}
	setBundle := func(version string) {
		for _, crd := range gatewayCRDs() {
			patch := client.MergeFrom(crd.DeepCopy())
			crd.Annotations["gateway.networking.k8s.io/bundle-version"] = version
			require.NoError(t, cluster.Client.Patch(ctx, &crd, patch))
		}
	}
	setLabel := func(node, key, value string) {
		n := &corev1.Node{}
		require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Name: node}, n))
		patch := client.MergeFrom(n.DeepCopy())
		n.Labels[key] = value
		require.NoError(t, cluster.Client.Patch(ctx, n, patch))
	}
	setImage := func(tag string) {
		d := &appsv1.Deployment{}
		require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: "kaito-workspace", Name: "kaito-workspace"}, d))
		patch := client.MergeFrom(d.DeepCopy())
		d.Spec.Template.Spec.Containers[0].Image = "mcr.microsoft.com/aks/kaito/workspace:" + tag
		require.NoError(t, cluster.Client.Patch(ctx, d, patch))
	}
	kaitoCRD := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Name: "workspaces.kaito.sh"}, kaitoCRD))
	l4 := poolNodes(nodes, "l4")[0].Name
	steps := []struct {
		name, field, modelReason string
		change, undo             func()
	}{
		{"a pool's node relabelled", "spec.nodePools[l4].nodes.count", reporter.ReasonNodePoolChanged,
			func() { setLabel(l4, "nvidia.com/gpu.product", "NVIDIA-L4-SHARED") },
			func() { setLabel(l4, "nvidia.com/gpu.product", "NVIDIA-L4") }},
		{"a pool's nodes removed", "spec.nodePools[cpu].selector", "",
			func() {
				for _, n := range poolNodes(nodes, "cpu") {
					require.NoError(t, cluster.Client.Delete(ctx, &n))
				}
			},
			func() {
				for _, n := range poolNodes(nodes, "cpu") {
					require.NoError(t, cluster.Client.Create(ctx, n.DeepCopy()))
				}
			}},
		{"a provider CRD removed", "spec.providers[kaito]", "",
			func() { deleteCRD(t, "workspaces.kaito.sh") },
			func() {
				ensureCRD(t, &apiextensionsv1.CustomResourceDefinition{
					ObjectMeta: metav1.ObjectMeta{Name: kaitoCRD.Name, Annotations: kaitoCRD.Annotations}, Spec: kaitoCRD.Spec})
			}},
		{"an operator upgraded", "spec.providers[kaito].version", "",
			func() { setImage("0.11.0") }, func() { setImage("0.10.0") }},
		{"the Gateway API bundle bumped", "spec.gateway.gatewayAPIVersion", "",
			func() { setBundle("v1.6.0") }, func() { setBundle("v1.5.1") }},
	}
	for _, s := range steps {
		start := time.Now()
		s.change()
		took, got := current("False", start)
		diffs, _, _ := unstructured.NestedSlice(got.Object, "status", "differences")
		var fields []string
		for _, d := range diffs {
			fields = append(fields, d.(map[string]any)["field"].(string))
		}
		require.Contains(t, fields, s.field, "%s: the difference names the field", s.name)
		waitMetric(t, metrics, differences, func(v float64) bool { return v > 0 })
		if s.modelReason != "" {
			modelCondition("False", s.modelReason)
			waitMetric(t, metrics, "airunway_status_reporter_modeldeployments_capabilities_drifted", func(v float64) bool { return v == 1 })
		}
		start = time.Now()
		s.undo()
		back, _ := current("True", start)
		waitMetric(t, metrics, differences, func(v float64) bool { return v == 0 })
		if s.modelReason != "" {
			modelCondition("True", reporter.ReasonCapabilitiesCurrent)
		}
		addRow("status reporter | drift: %s | %s | - | CapabilitiesCurrent False in %s naming %s; True again %s after the undo | - | -",
			s.name, "ClusterCapabilities drift", took.Round(100*time.Millisecond), s.field, back.Round(100*time.Millisecond))
	}
}

// waitCondition waits until the object's CapabilitiesCurrent condition has
// the status (and, unless "", the reason), and returns the object; it
// fails with the object's last status.
func waitCondition(t *testing.T, gvk schema.GroupVersionKind, key client.ObjectKey, status, reason string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvk)
		require.NoError(c, cluster.Client.Get(context.Background(), key, o))
		got = o
		if s, r := conditionStatus(o, reporter.ConditionCapabilitiesCurrent), conditionField(o, reporter.ConditionCapabilitiesCurrent, "reason"); s != status || (reason != "" && r != reason) {
			c.Errorf("CapabilitiesCurrent is %s %s; status: %v", s, r, o.Object["status"])
		}
	}, twin.HangBound, 100*time.Millisecond, "%s %s: CapabilitiesCurrent is not %s %s", gvk.Kind, key, status, reason)
	return got
}

// waitMetric waits until a sample of the reporter's /metrics satisfies ok
// (a sample that is not there reads -1): the gauges are set a moment after
// the status is written.
func waitMetric(t *testing.T, addr, sample string, ok func(float64) bool) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		v := scrape(c, addr, sample)
		assert.True(c, ok(v), "%s is %v", sample, v)
	}, twin.HangBound, 100*time.Millisecond, "%s is not as wanted", sample)
}

// scrape reads one sample from the reporter's /metrics, waiting for the
// endpoint to answer; a sample not (yet) there is -1.
func scrape(t tb, addr, sample string) float64 {
	t.Helper()
	re := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(sample) + ` ([0-9.e+-]+)$`)
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		body = string(data)
		return err == nil && resp.StatusCode == http.StatusOK
	}, twin.HangBound, 200*time.Millisecond)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	var v float64
	_, err := fmt.Sscan(m[1], &v)
	require.NoError(t, err)
	return v
}
