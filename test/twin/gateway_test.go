package twin_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

var (
	gatewayOnce sync.Once
	gatewayErr  error
)

// TestGatewayExample applies the gateway example's output — the llm-d
// model server, the endpoint picker's Deployment, Service and RBAC, the
// InferencePool and the HTTPRoute — to the twin with the real Gateway API
// v1.5.1 (standard channel) and Inference Extension v1.5.0 CRDs its
// capability file declares: the API server accepts every object, the model
// server lands on the l4 pool and the endpoint picker on the CPU pool. The
// picker does not run (KWOK pods run nothing), so nothing scrapes a pod.
func TestGatewayExample(t *testing.T) {
	installGatewayCRDs(t)
	const caps = "examples/gateway/capabilities.yaml"
	nodes := useCluster(t, caps)
	objs := render(t, caps, "examples/gateway/modeldeployment.yaml")
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
	}
	for _, k := range []string{"InferencePool", "HTTPRoute", "Deployment", "Service"} {
		require.True(t, kinds[k], "the example renders a %s", k)
	}
	pl := place(t, "examples/gateway", caps, caps, objs, nodes)
	require.Len(t, requireOnPool(t, pl.got["qwen3"], nodes), 1)

	// The endpoint picker: bound, Ready, on the CPU pool.
	epp := waitPods(t, pl.ns, client.MatchingLabels{"app.kubernetes.io/name": "qwen3-epp"}, 1, twin.HangBound)
	pools := map[string]string{}
	for i := range nodes {
		pools[nodes[i].Name] = poolOf(&nodes[i])
	}
	require.Equal(t, "cpu", pools[epp[0].Spec.NodeName], "the endpoint picker runs on %s", epp[0].Spec.NodeName)
	addRow("llmd + gateway (real Gateway API and Inference Extension CRDs) | examples/gateway qwen3 | %s | cpu | endpoint picker on %s | - | -", caps, epp[0].Spec.NodeName)
	reporterRows(t, "llmd", caps, pl.ns, nodes, pl.got)

	// The route the API server stored (the real Gateway API CRD) matches
	// the model on `/` and on each other API format's path, and the
	// reporter says which formats (status.gateway.apiFormats, main's CRD).
	ctx := context.Background()
	route := &unstructured.Unstructured{}
	route.SetAPIVersion("gateway.networking.k8s.io/v1")
	route.SetKind("HTTPRoute")
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: pl.ns, Name: "qwen3"}, route))
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	require.NotEmpty(t, rules)
	matches, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "matches")
	var paths []string
	for _, m := range matches {
		path, _, _ := unstructured.NestedString(m.(map[string]any), "path", "value")
		paths = append(paths, path)
	}
	require.Equal(t, []string{"/", "/v1/responses", "/v1/messages"}, paths)
	waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
		md := readModel(c, client.ObjectKey{Namespace: pl.ns, Name: "qwen3"})
		formats, _, _ := unstructured.NestedStringSlice(md.Object, "status", "gateway", "apiFormats")
		require.Equal(c, []string{"openai-chat", "openai-responses", "anthropic-messages"}, formats)
	}, func() string { return "" }, "status.gateway.apiFormats of qwen3")
}

// installGatewayCRDs installs the Gateway API and Inference Extension
// CRDs hack/install-twin.sh copied, once.
func installGatewayCRDs(t *testing.T) {
	t.Helper()
	gatewayOnce.Do(func() {
		gatewayErr = installCRDDir(filepath.Join(os.Getenv("TWIN_ASSETS"), "gateway-crds-1.5.1-1.5.0"))
	})
	require.NoError(t, gatewayErr)
}

// waitPods waits until n pods match, each bound and Ready.
func waitPods(t *testing.T, ns string, selector client.MatchingLabels, n int, within time.Duration) []corev1.Pod {
	t.Helper()
	var got []corev1.Pod
	waitUntil(t, within, 250*time.Millisecond, func(c *assert.CollectT) {
		pods := &corev1.PodList{}
		require.NoError(c, cluster.Client.List(context.Background(), pods, client.InNamespace(ns), selector))
		ready := 0
		for i := range pods.Items {
			if pods.Items[i].Spec.NodeName != "" && podReady(&pods.Items[i]) {
				ready++
			}
		}
		got = pods.Items
		if len(pods.Items) != n || ready != n {
			c.Errorf("want %d Ready pods matching %v, have:\n%s", n, selector, podSummary(pods.Items))
		}
	}, func() string { return schedulerEvents(t, ns) }, "the pods matching %v are not Ready after %s", selector, within)
	return got
}
