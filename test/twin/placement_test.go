package twin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
	"github.com/airunway-render/airunway-render/providers/kaito"
)

// placed is what a test learns about one model's pods on the twin.
type placed struct {
	model, pool string
	pods        []corev1.Pod
	readyAfter  time.Duration
}

// deploy applies rendered objects in a fresh namespace (the examples all
// say `inference`; each test gets its own) and returns the namespace and
// the ModelDeployments.
func deploy(t *testing.T, objs []*unstructured.Unstructured) (string, []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{}
	ns.GenerateName = "twin-"
	require.NoError(t, cluster.Client.Create(ctx, ns))
	t.Cleanup(func() { deleteNamespace(t, ns) })
	var models []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue // each test has its own
		}
		o.SetNamespace(ns.Name)
		require.NoError(t, cluster.Client.Create(ctx, o), "%s/%s", o.GetKind(), o.GetName())
		if o.GetKind() == hub.KindModelDeployment {
			models = append(models, o)
		}
	}
	return ns.Name, models
}

// deleteNamespace deletes a test's namespace and waits until its pods are
// gone, so that they hold no GPUs of the next test's nodes (which have the
// same names). A terminating namespace takes no new pods, so once its pods
// are force-deleted nothing comes back; the rest of it goes in the
// background (waiting for the namespace controller took about ten seconds
// a test).
func deleteNamespace(t *testing.T, ns *corev1.Namespace) {
	ctx := context.Background()
	if err := cluster.Client.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting namespace %s: %v", ns.Name, err)
		return
	}
	// Not fatal: it runs in cleanups.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		pods := &corev1.PodList{}
		err := cluster.Client.List(ctx, pods, client.InNamespace(ns.Name))
		// A shared name (the examples' namespace) is used again by the
		// next test: wait until the namespace itself is gone.
		shared := !strings.HasPrefix(ns.Name, "twin-")
		if err == nil && len(pods.Items) == 0 && (!shared || apierrors.IsNotFound(cluster.Client.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{}))) {
			return
		}
		_ = cluster.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns.Name), client.GracePeriodSeconds(0))
		c.Errorf("namespace %s (shared: %t): listing its pods: %v; pods left:\n%s", ns.Name, shared, err, podSummary(pods.Items))
	}, twin.HangBound, 100*time.Millisecond, "the pods of namespace %s were not deleted", ns.Name)
}

// waitPlaced waits until every pod of each model is bound and Ready, and
// returns them per model, each with the time since start (for the table)
// at which the wait saw them so. A pod names its model under the model
// label, or under `kaito.sh/workspace` (KAITO's presets). After within,
// counted from the call (what ran since start is not taken from it), it
// fails with the pods still Pending and the scheduler's events.
func waitPlaced(t *testing.T, ns string, models []*unstructured.Unstructured, want map[string]int, start time.Time, within time.Duration) map[string]*placed {
	t.Helper()
	ctx := context.Background()
	out := map[string]*placed{}
	for _, m := range models {
		out[m.GetName()] = &placed{model: m.GetName(), pool: m.GetAnnotations()[hub.AnnotationNodePool]}
	}
	waitUntil(t, within, 250*time.Millisecond, func(c *assert.CollectT) {
		pods := &corev1.PodList{}
		require.NoError(c, cluster.Client.List(ctx, pods, client.InNamespace(ns)))
		done := true
		for _, p := range out {
			p.pods = nil
		}
		for _, pod := range pods.Items {
			p := out[pod.Labels[hub.LabelModelDeployment]]
			if p == nil {
				p = out[pod.Labels["kaito.sh/workspace"]]
			}
			if p == nil {
				p = out[pod.Labels[kaito.LabelCreatedBy]]
			}
			if p == nil {
				continue
			}
			p.pods = append(p.pods, pod)
			if pod.Spec.NodeName == "" || !podReady(&pod) {
				done = false
			}
		}
		for name, n := range want {
			if p := out[name]; p == nil || len(p.pods) != n {
				done = false
			}
		}
		if !done {
			c.Errorf("want pods per model %v, each bound and Ready; have:\n%s", want, podSummary(pods.Items))
			return
		}
		for _, p := range out {
			if p.readyAfter == 0 {
				p.readyAfter = time.Since(start)
			}
		}
	}, func() string { return schedulerEvents(t, ns) + "\n" + nodeSummary(t) + "\n" + cluster.Logs(15) }, "pods not bound and Ready within %s", within)
	return out
}

// nodeSummary says, per node, whether it is Ready and its taints.
func nodeSummary(t *testing.T) string {
	t.Helper()
	nodes := &corev1.NodeList{}
	require.NoError(t, cluster.Client.List(context.Background(), nodes))
	var b strings.Builder
	b.WriteString("nodes:\n")
	for _, n := range nodes.Items {
		ready := "unknown"
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = string(c.Status)
			}
		}
		fmt.Fprintf(&b, "  %s: Ready=%s taints=%v allocatable=%v\n", n.Name, ready, n.Spec.Taints, n.Status.Allocatable)
	}
	return b.String()
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podSummary(pods []corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "  %s: phase %s, node %q\n", p.Name, p.Status.Phase, p.Spec.NodeName)
	}
	return b.String()
}

// schedulerEvents are the FailedScheduling events of the namespace: why a
// pod stays Pending, in the scheduler's words.
func schedulerEvents(t tb, ns string) string {
	t.Helper()
	events := &corev1.EventList{}
	require.NoError(t, cluster.Client.List(context.Background(), events, client.InNamespace(ns)))
	var lines []string
	for _, e := range events.Items {
		if e.Reason == "FailedScheduling" {
			lines = append(lines, fmt.Sprintf("  %s: %s", e.InvolvedObject.Name, e.Message))
		}
	}
	sort.Strings(lines)
	return "scheduler events:\n" + strings.Join(lines, "\n")
}

// requireOnPool checks that every pod of the model that requests GPUs is on
// a node of the model's pool (a disaggregated model's: its role's, from the
// annotation's `prefill=<pool>,decode=<pool>`), with the pool's GPU
// resource requested.
func requireOnPool(t *testing.T, p *placed, nodes []corev1.Node) []string {
	t.Helper()
	pools := map[string]string{}
	for i := range nodes {
		pools[nodes[i].Name] = poolOf(&nodes[i])
	}
	var names []string
	for _, pod := range p.pods {
		if !gpuPod(&pod) {
			continue
		}
		require.Equal(t, poolForRole(t, p, &pod), pools[pod.Spec.NodeName], "pod %s of %s requests %d GPUs (or claims DRA devices: %t) and runs on %s", pod.Name, p.model, gpuRequest(&pod), claimsDevices(&pod), pod.Spec.NodeName)
		names = append(names, pod.Spec.NodeName)
	}
	sort.Strings(names)
	return names
}

// poolForRole is the pool the renderer chose for the pod: the model's, or
// for a disaggregated model the one its role (the Dynamo operator's
// sub-component label) was given.
func poolForRole(t *testing.T, p *placed, pod *corev1.Pod) string {
	t.Helper()
	if !strings.Contains(p.pool, "=") {
		return p.pool
	}
	role := pod.Labels[subComponentTypeLabel]
	for _, pair := range strings.Split(p.pool, ",") {
		if r, pool, _ := strings.Cut(pair, "="); r == role {
			return pool
		}
	}
	require.Failf(t, "no pool for the pod's role", "pod %s of %s has role %q; the model's pools are %s", pod.Name, p.model, role, p.pool)
	return ""
}

// gpuPod reports whether a pod asks for GPUs: as an extended resource, or
// as DRA devices through a resource claim.
func gpuPod(p *corev1.Pod) bool { return gpuRequest(p) > 0 || claimsDevices(p) }

// claimsDevices reports whether a pod has resource claims (the renderer's
// claim on a DRA pool's GPUs).
func claimsDevices(p *corev1.Pod) bool { return len(p.Spec.ResourceClaims) > 0 }

// gpuRequest sums a pod's requests of extended resources named *gpu*.
func gpuRequest(p *corev1.Pod) int64 {
	var n int64
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			if strings.HasSuffix(string(name), "/gpu") {
				n += q.Value()
			}
		}
	}
	return n
}

// oneModel writes a ModelDeployment with the spec lines given and returns
// its path, for render.
func oneModel(t *testing.T, name, spec string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	require.NoError(t, os.WriteFile(path, []byte("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: "+name+", namespace: inference}\nspec:\n"+spec), 0o644))
	return path
}

// pending waits until n pods of the namespace are bound and the rest are
// Pending, and returns the Pending ones' scheduler events.
func pending(t *testing.T, ns string, bound, pendingPods int) string {
	t.Helper()
	ctx := context.Background()
	var events string
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pods := &corev1.PodList{}
		require.NoError(c, cluster.Client.List(ctx, pods, client.InNamespace(ns)))
		var b, p int
		for _, pod := range pods.Items {
			if pod.Spec.NodeName != "" {
				b++
			} else {
				p++
			}
		}
		events = schedulerEvents(c, ns)
		// Stable once the scheduler has said why for every Pending pod.
		// (Each event is a line of its own after the heading: "\n  ".)
		if b != bound || p != pendingPods || strings.Count(events, "\n  ") < pendingPods {
			c.Errorf("want %d bound and %d Pending, have %d and %d:\n%s\n%s", bound, pendingPods, b, p, podSummary(pods.Items), events)
		}
	}, twin.HangBound, 250*time.Millisecond, "want %d bound and %d Pending pods in %s", bound, pendingPods, ns)
	return events
}

// TestOverCapacity: more replicas than the pool's nodes hold leave exactly
// the excess Pending, for want of the pool's GPU resource. The dev pool has
// 2 nodes of 2 L4s: six 1-GPU replicas bind four.
func TestOverCapacity(t *testing.T) {
	const caps = "examples/kustomize/clusters/dev/capabilities.yaml"
	useCluster(t, caps)
	// Three nodes of two L4s: 8 replicas of one GPU leave 2 Pending.
	model := oneModel(t, "wide", "  model: {id: Qwen/Qwen3-0.6B}\n  engine: {type: vllm}\n  resources: {gpu: {count: 1}}\n  scaling: {replicas: 8}\n")
	ns, _ := deploy(t, render(t, caps, model))
	events := pending(t, ns, 6, 2)
	require.Contains(t, events, "Insufficient nvidia.com/gpu")
	addRow("vllm | 8 replicas of 1 GPU | %s | l4 | 6/8 (2 Pending: Insufficient nvidia.com/gpu, as the pool holds 6) | l4-0,l4-1,l4-2 | -", caps)
}

// TestNegativeControl proves the harness can fail: the same rendered
// objects without the pool's toleration stay Pending on the tainted pool.
func TestNegativeControl(t *testing.T) {
	const caps = "examples/kustomize/clusters/dev/capabilities.yaml"
	useCluster(t, caps)
	objs := render(t, caps, "examples/kustomize/base")
	removed := 0
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			unstructured.RemoveNestedField(o.Object, "spec", "template", "spec", "tolerations")
			removed++
		}
	}
	require.Equal(t, 2, removed)
	ns, _ := deploy(t, objs)
	events := pending(t, ns, 0, 2)
	require.Contains(t, events, "untolerated taint")
	addRow("vllm | negative control: tolerations removed | %s | l4 | 0/2 (untolerated taint, as it must) | - | -", caps)
}

// deploymentPods is how many pods the rendered Deployments of each model
// ask for (those labelled with the model; helpers are checked apart).
func deploymentPods(objs []*unstructured.Unstructured) map[string]int {
	want := map[string]int{}
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		model := o.GetLabels()[hub.LabelModelDeployment]
		if model == "" {
			continue // a helper, such as the endpoint picker
		}
		replicas, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		want[model] += int(replicas)
	}
	return want
}

// TestPlacementGoldens runs every provider's placement golden case on the
// three-pool cluster of its capability file, through the consumer of the
// provider's output (place): the real controllers for llm-d and vLLM, the
// real KubeRay operator, the Dynamo and KAITO stand-ins. The status
// reporter then reads the Dynamo and KAITO stand-ins' statuses, and
// follows the real RayService (kuberayReporter).
func TestPlacementGoldens(t *testing.T) {
	for _, provider := range []string{"dynamo", "kaito", "kuberay", "llmd", "vllm"} {
		t.Run(provider, func(t *testing.T) {
			dir := "golden/testdata/placement-" + provider
			caps := dir + "/functionConfig/capabilities.yaml"
			nodes := useCluster(t, caps)
			objs := render(t, caps, dir+"/models.yaml")
			p := place(t, "placement golden", caps, caps, objs, nodes)
			switch provider {
			case "dynamo", "kaito":
				reporterRows(t, provider+" ("+consumerOf(provider)+")", caps, p.ns, nodes, p.got)
			case "kuberay":
				kuberayReporter(t, caps, p, objs)
			}
		})
	}
}
