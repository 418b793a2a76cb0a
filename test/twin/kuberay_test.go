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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// The KubeRay release the placement golden's capability file declares.
const kuberayVersion = "1.3.0"

var (
	kuberayMu sync.Mutex
	// kuberayRunning is the release whose operator runs ("" for none).
	kuberayRunning string
)

// startKubeRay installs the CRDs of the KubeRay release the placement
// golden declares and runs its real operator (hack/install-twin.sh builds
// both), unless it already runs.
func startKubeRay(t *testing.T) {
	t.Helper()
	useKubeRay(t, kuberayVersion)
}

// useKubeRay runs the real KubeRay operator of release v with that
// release's CRDs, one release at a time: switching stops the other
// release's operator and replaces the CRDs with v's (an update, so the API
// server prunes RayServices by v's schema). Tests run one after another,
// and their RayServices go with their namespaces.
func useKubeRay(t *testing.T, v string) {
	t.Helper()
	kuberayMu.Lock()
	defer kuberayMu.Unlock()
	if kuberayRunning == v {
		return
	}
	if kuberayRunning != "" {
		cluster.StopProcess(kuberayProcess(kuberayRunning))
		kuberayRunning = ""
	}
	dir := filepath.Join(os.Getenv("TWIN_ASSETS"), "kuberay-"+v)
	require.NoError(t, installCRDDir(filepath.Join(dir, "crds")), "the CRDs of KubeRay v%s (hack/install-twin.sh copies them)", v)
	require.NoError(t, cluster.StartOperator(kuberayProcess(v), filepath.Join(dir, "kuberay-operator"),
		"--metrics-addr", "0", "--health-probe-bind-address", "0", // nothing reads them
		"--enable-leader-election=false",
		// Dashboard and Serve-proxy calls go through the API server's
		// proxy (which refuses loopback pod IPs), not a service DNS
		// name looked up on the machine's resolver.
		"--use-kubernetes-proxy"), "the KubeRay operator v%s (hack/install-twin.sh builds it)", v)
	kuberayRunning = v
}

// kuberayProcess names the operator of a release among the twin's
// processes (and its log).
func kuberayProcess(v string) string { return "kuberay-operator-" + v }

// rayPods is how many pods each model's RayService asks for: the head and
// every worker group's replicas.
func rayPods(objs []*unstructured.Unstructured) map[string]int {
	want := map[string]int{}
	for _, o := range objs {
		if o.GetKind() != "RayService" {
			continue
		}
		n := 1 // the head
		groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "rayClusterConfig", "workerGroupSpecs")
		for _, g := range groups {
			r, _, _ := unstructured.NestedInt64(g.(map[string]any), "replicas")
			n += int(r)
		}
		want[o.GetLabels()["airunway.ai/model-deployment"]] += n
	}
	return want
}

// kuberayReporter: the real KubeRay operator turned each rendered
// RayService into a RayCluster and its pods (placed by place), and the
// RayCluster becomes ready. The RayService itself never does here: it waits
// for the Serve applications, which the operator asks the Ray dashboard
// for, and a KWOK pod serves no dashboard. So the status reporter's check
// on KubeRay is that the model's status follows the real RayService
// (Deploying, the operator's own message), not that it reaches Ready.
func kuberayReporter(t *testing.T, caps string, p placement, objs []*unstructured.Unstructured) {
	t.Helper()
	requireRayClustersReady(t, p.ns, objs)
	startReporter(t, p.ns)
	for _, m := range p.models {
		msg := reportsRayService(t, p.ns, m.GetName())
		addRow("kuberay (real operator %s) + status reporter | %s | %s | %s | RayCluster ready; reporter: Deploying, %q (the RayService waits on the Ray dashboard) | - | -",
			kuberayVersion, m.GetName(), caps, p.got[m.GetName()].pool, msg)
	}
}

// requireRayClustersReady: the real operator made one RayCluster per
// RayService and calls it ready (`status.state`, condition HeadPodReady).
func requireRayClustersReady(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "RayService" {
			continue
		}
		require.Eventually(t, func() bool {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion("ray.io/v1")
			list.SetKind("RayClusterList")
			if err := cluster.Client.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels{"ray.io/originated-from-cr-name": o.GetName()}); err != nil || len(list.Items) != 1 {
				return false
			}
			state, _, _ := unstructured.NestedString(list.Items[0].Object, "status", "state")
			return state == "ready" && conditionStatus(&list.Items[0], "HeadPodReady") == "True"
		}, twin.HangBound, 250*time.Millisecond, "the RayCluster of RayService %s is not ready", o.GetName())
	}
}

// reportsRayService waits until the model's status says what the real
// RayService says: not Ready, Deploying, with the message of the
// RayService's own Ready condition. It returns that message.
func reportsRayService(t *testing.T, ns, name string) string {
	t.Helper()
	var message string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rs := &unstructured.Unstructured{}
		rs.SetAPIVersion("ray.io/v1")
		rs.SetKind("RayService")
		md := &unstructured.Unstructured{}
		md.SetAPIVersion("airunway.ai/v1alpha1")
		md.SetKind(hub.KindModelDeployment)
		key := client.ObjectKey{Namespace: ns, Name: name}
		require.NoError(c, cluster.Client.Get(context.Background(), key, rs))
		require.NoError(c, cluster.Client.Get(context.Background(), key, md))
		want := conditionMessage(rs, "Ready")
		phase, _, _ := unstructured.NestedString(md.Object, "status", "phase")
		got, _, _ := unstructured.NestedString(md.Object, "status", "message")
		if conditionStatus(rs, "Ready") == "False" && want != "" && phase == "Deploying" && conditionStatus(md, "Ready") == "False" && got == want {
			message = got
			return
		}
		c.Errorf("RayService Ready=%s %q; model phase %q, Ready=%s, message %q", conditionStatus(rs, "Ready"), want, phase, conditionStatus(md, "Ready"), got)
	}, twin.HangBound, 250*time.Millisecond, "the status of %s/%s does not follow its RayService", ns, name)
	return message
}

// conditionStatus and conditionMessage read a condition of an object's
// status ("" when it has none of that type).
func conditionStatus(o *unstructured.Unstructured, typ string) string {
	return conditionField(o, typ, "status")
}

func conditionMessage(o *unstructured.Unstructured, typ string) string {
	return conditionField(o, typ, "message")
}

func conditionField(o *unstructured.Unstructured, typ, field string) string {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			v, _ := m[field].(string)
			return v
		}
	}
	return ""
}
