package reporter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/reporter"
)

// TestNoWritesWithCapabilitiesApplied: with a ClusterCapabilities applied,
// the reporter writes each model's status with CapabilitiesCurrent. Idle resyncs, a model's
// own Deployment rolling and an unrelated Deployment's status then write
// nothing and compare nothing; a leader change neither writes nor moves
// CapabilitiesCurrent's transition time. Nothing marks the moment the
// reporter has seen an event it ignores: the resyncs that follow are the
// window in which a comparison it should not make would show.
func TestNoWritesWithCapabilitiesApplied(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	installCRD(t, c, clusterCapabilitiesCRD(t))
	ns, objs, md := c.model(t, "capswrites", "vllm-minimal")
	deployment := pick(objs, "Deployment")[0]
	applyCapabilities(t, c, ns, `  - name: nvidia-gpu
    selector: {nvidia.com/gpu.present: "true"}
    gpu: {resourceName: nvidia.com/gpu}
`)

	var counter requestCounter
	o := testOptions(ns)
	o.SyncPeriod = time.Second
	first, stopFirst := run(t, counter.wrap(c.cfg), o)
	c.apply(t, objs...)
	c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
	before := capabilitiesCurrent(t, c, md)
	// A model's reconciles run one at a time: two more, and the one that
	// wrote Running has ended, its write counted.
	reconcilesAtLeast(t, first, first.Reconciles()+2)

	writes, requests := first.Writes(), counter.snapshot()
	// An unrelated Deployment (another namespace, not rendered) rolls.
	other := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: ns + "-unrelated"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "registry.example.com/x:1"}}}}}}
	settled := settledComparisons(t)
	require.NoError(t, c.admin.Create(ctx, other))
	t.Cleanup(func() { _ = c.admin.Delete(ctx, other) })
	comparisons := settled + 1 // its creation is a new Deployment: one comparison
	require.Eventually(t, func() bool { n, err := readComparisons(); return err == nil && n == comparisons }, hangBound, 20*time.Millisecond,
		"the new Deployment did not start one comparison")
	for i := range 5 {
		other.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: int32(i), UpdatedReplicas: int32(i)}
		require.NoError(t, c.admin.Status().Update(ctx, other))
		c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	}
	reconcilesAtLeast(t, first, first.Reconciles()+3)
	require.Equal(t, writes, first.Writes(), "an idle resync or a Deployment's status wrote a status")
	require.Equal(t, comparisons, capabilityComparisons(t), "a Deployment's status started a comparison")
	after := counter.snapshot()
	require.Zero(t, after["PATCH status"]-requests["PATCH status"], "status writes while idle")
	require.Equal(t, before, capabilitiesCurrent(t, c, md))

	// A second replica takes over: it compares once, then finds every
	// status as it would write it.
	second, _ := run(t, c.cfg, o)
	stopFirst()
	select {
	case <-second.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the second reporter was not elected")
	}
	// It reconciles only once it has compared; a write would come in its
	// first reconcile, and a resync follows.
	reconcilesAtLeast(t, second, 2)
	require.Zero(t, second.Writes(), "the new leader rewrote a status that had not changed")
	require.Equal(t, before, capabilitiesCurrent(t, c, md), "CapabilitiesCurrent flapped on the leader change")
}

// capabilitiesCurrent is the model's CapabilitiesCurrent condition.
func capabilitiesCurrent(t *testing.T, c *controlPlane, md *unstructured.Unstructured) metav1.Condition {
	t.Helper()
	s, _ := c.modelStatus(t, key(md))
	cond := meta.FindStatusCondition(s.Conditions, reporter.ConditionCapabilitiesCurrent)
	require.NotNil(t, cond, "no CapabilitiesCurrent with a ClusterCapabilities applied: %+v", s.Conditions)
	return *cond
}

// capabilityComparisons reads the reporter's comparisons counter from
// controller-runtime's registry (every reporter of the test process).
func capabilityComparisons(t *testing.T) float64 {
	t.Helper()
	n, err := readComparisons()
	require.NoError(t, err)
	return n
}

// readComparisons is capabilityComparisons for a condition polled off the
// test's goroutine.
func readComparisons() (float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() == "airunway_status_reporter_capability_comparisons_total" {
			return f.GetMetric()[0].GetCounter().GetValue(), nil
		}
	}
	return 0, errors.New("the comparisons counter is not registered")
}

// settledComparisons waits until no comparison is under way or asked for,
// the counter holding still across polls a second (five debounces) apart,
// and returns it. The hangBound only catches comparisons that never stop.
func settledComparisons(t *testing.T) float64 {
	t.Helper()
	last := -1.0
	require.Eventually(t, func() bool {
		n, err := readComparisons()
		settled := err == nil && n == last
		last = n
		return settled
	}, hangBound, time.Second, "the capability comparisons never settled")
	return last
}

// applyCapabilities applies a ClusterCapabilities named name, of the vllm
// provider and the node pools in nodePools (YAML list items under
// spec.nodePools), and deletes it when t ends: it is cluster-scoped, and
// the next test must not see it.
func applyCapabilities(t *testing.T, c *controlPlane, name, nodePools string) {
	t.Helper()
	caps := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: `+name+`}
spec:
  providers: [{name: vllm}]
  nodePools:
`+nodePools), &caps.Object))
	c.apply(t, caps)
	t.Cleanup(func() { _ = c.admin.Delete(context.Background(), caps) })
}

// clusterCapabilitiesCRD is the ClusterCapabilities CRD of deploy/base.
func clusterCapabilitiesCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "deploy", "base", "airunway.ai_clustercapabilities.yaml"))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, crd))
	return crd
}
