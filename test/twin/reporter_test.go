package twin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// startReporter runs the status reporter binary against the twin, as a
// user would out of cluster: a kubeconfig (leader election then switches
// itself off) and the test's namespace; endpoints off. It returns the
// process.
func startReporter(t *testing.T, ns string, flags ...string) *os.Process {
	t.Helper()
	bin := os.Getenv("AIRUNWAY_STATUS_REPORTER_BIN")
	require.NotEmpty(t, bin, "AIRUNWAY_STATUS_REPORTER_BIN must name the status reporter binary (make twin sets it)")
	bin, err := filepath.Abs(bin)
	require.NoError(t, err)
	log, err := os.Create(filepath.Join(t.TempDir(), "reporter.log"))
	require.NoError(t, err)
	// Discovery every 2s, not 30s: a provider CRD removed by a test is
	// noticed in seconds.
	// Flags given later win: pflag keeps the last value.
	args := append([]string{"--kubeconfig", cluster.Kubeconfig, "--namespace", ns,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--discovery-interval", "2s"}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("status reporter log:\n%s", data)
		}
	})
	return cmd.Process
}

// readyStatus is the model's Ready condition status, "" without one.
func readyStatus(t tb, ns, name string) string {
	t.Helper()
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("airunway.ai/v1alpha1")
	md.SetKind(hub.KindModelDeployment)
	require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, md))
	conds, _, _ := unstructured.NestedSlice(md.Object, "status", "conditions")
	for _, c := range conds {
		if m := c.(map[string]any); m["type"] == "Ready" {
			return fmt.Sprint(m["status"])
		}
	}
	return ""
}

// waitReady waits until the model's Ready condition has the status want.
func waitReady(t *testing.T, ns, name, want string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var took time.Duration
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		got := readyStatus(c, ns, name)
		took = time.Since(start)
		assert.Equal(c, want, got, "ModelDeployment %s/%s has Ready=%q, want %q", ns, name, got, want)
	}, within, 200*time.Millisecond, "ModelDeployment %s/%s does not have Ready=%q after %s", ns, name, want, within)
	return took
}

// setUnschedulable cordons or uncordons nodes.
func setUnschedulable(t *testing.T, nodes []corev1.Node, unschedulable bool) {
	t.Helper()
	for i := range nodes {
		n := &corev1.Node{}
		require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(&nodes[i]), n))
		patch := client.MergeFrom(n.DeepCopy())
		n.Spec.Unschedulable = unschedulable
		require.NoError(t, cluster.Client.Patch(context.Background(), n, patch))
	}
}

// cordonAndEvict cordons nodes and deletes the pods of namespace ns that
// match, until every replacement the controllers make stays Pending. The
// scheduler learns of a cordon through its watch: a replacement made in
// the moment before it has seen the cordon can still be bound to the pool
// (KWOK runs it at once, so the model never leaves Ready), and such a pod
// is deleted again. The nodes are uncordoned when t ends.
func cordonAndEvict(t *testing.T, nodes []corev1.Node, ns string, match func(*corev1.Pod) bool) {
	t.Helper()
	setUnschedulable(t, nodes, true)
	t.Cleanup(func() { setUnschedulable(t, nodes, false) })
	onPool := map[string]bool{}
	for i := range nodes {
		onPool[nodes[i].Name] = true
	}
	ctx := context.Background()
	deleted := 0
	require.Eventually(t, func() bool {
		pods := &corev1.PodList{}
		if err := cluster.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return false
		}
		live, bound := 0, 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if !match(p) || p.DeletionTimestamp != nil {
				continue
			}
			live++
			if onPool[p.Spec.NodeName] {
				bound++
				if client.IgnoreNotFound(cluster.Client.Delete(ctx, p)) == nil {
					deleted++
				}
			}
		}
		return deleted > 0 && live > 0 && bound == 0
	}, twin.HangBound, 250*time.Millisecond, "the pods of %s were not replaced by Pending ones on the cordoned pool", ns)
}

// reporterCycle checks the status reporter (already running on ns)
// against one placed model: Ready=True through the provider objects;
// cordoning the model's pool and deleting its pods takes it out of Ready
// within seconds (the new pods cannot be scheduled); uncordoning brings it
// back. It returns the times for the table.
func reporterCycle(t *testing.T, ns string, p *placed, nodes []corev1.Node) string {
	t.Helper()
	toReady := waitReady(t, ns, p.model, "True", twin.HangBound)
	var pool []corev1.Node
	for i := range nodes {
		if poolOf(&nodes[i]) == p.pool {
			pool = append(pool, nodes[i])
		}
	}
	require.NotEmpty(t, pool, "no node of pool %q", p.pool)
	cordonAndEvict(t, pool, ns, func(pod *corev1.Pod) bool { return pod.Labels["airunway.ai/model-deployment"] == p.model })
	toNotReady := waitReady(t, ns, p.model, "False", twin.HangBound)
	setUnschedulable(t, pool, false)
	back := waitReady(t, ns, p.model, "True", twin.HangBound)
	return fmt.Sprintf("reporter: Ready %s; cordon %s + delete pods: not Ready %s; uncordon: Ready %s",
		toReady.Round(100*time.Millisecond), p.pool, toNotReady.Round(100*time.Millisecond), back.Round(100*time.Millisecond))
}

// TestReporterOnTheTwin: the status reporter reads the real Deployment
// status the controller-manager writes for pods KWOK runs.
func TestReporterOnTheTwin(t *testing.T) {
	const caps = "examples/kustomize/clusters/dev/capabilities.yaml"
	nodes := useCluster(t, caps)
	start := time.Now()
	ns, models := deploy(t, render(t, caps, "examples/kustomize/base"))
	got := waitPlaced(t, ns, models, map[string]int{"qwen3-0-6b": 1, "llama-3-1-8b": 1}, start, twin.HangBound)
	startReporter(t, ns)
	p := got["qwen3-0-6b"]
	addRow("vllm + status reporter | kustomize/base %s | %s | %s | %s | - | -", p.model, caps, p.pool, reporterCycle(t, ns, p, nodes))
}

// reporterRows starts the status reporter on ns, waits for every model to
// become Ready and runs reporterCycle on the first (by name), each with a
// row in the table.
func reporterRows(t *testing.T, provider, caps, ns string, nodes []corev1.Node, got map[string]*placed) {
	t.Helper()
	startReporter(t, ns)
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names[1:] {
		p := got[name]
		addRow("%s + status reporter | %s | %s | %s | reporter: Ready %s | - | -", provider, p.model, caps, p.pool, waitReady(t, ns, p.model, "True", twin.HangBound).Round(100*time.Millisecond))
	}
	p := got[names[0]]
	addRow("%s + status reporter | %s | %s | %s | %s | - | -", provider, p.model, caps, p.pool, reporterCycle(t, ns, p, nodes))
}
