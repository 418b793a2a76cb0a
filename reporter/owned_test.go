package reporter

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
)

// TestOwnedConditions: every condition Compute writes is one the
// comparison keeps, with and without an applied capability file, so a
// status the reporter wrote compares equal to itself on the next resync;
// another writer's condition never makes it look changed.
func TestOwnedConditions(t *testing.T) {
	t.Parallel()
	states := []string{
		"status: {conditions: [{type: Progressing, status: \"True\"}]}",
		"status: {readyReplicas: 1, availableReplicas: 1, conditions: [{type: Available, status: \"True\"}]}",
		"status: {conditions: [{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded}]}",
	}
	checks := []*CapabilitiesCheck{nil, {Files: []string{"prod"}}, {Files: []string{"prod"}, Pool: []string{`pool "l4": taints differ`}}}
	for _, status := range states {
		for _, check := range checks {
			o := observe(deployment(t, created, status), created.Add(time.Minute), nil)
			o.Capabilities = check
			s := Compute(o)
			for _, c := range s.Conditions {
				require.Contains(t, OwnedConditions, c.Type, "Compute writes a condition the comparison would drop")
			}
			require.Equal(t, s, ours(s), "a written status must compare equal to itself")
			require.Equal(t, check != nil, slices.ContainsFunc(s.Conditions, func(c metav1.Condition) bool { return c.Type == ConditionCapabilitiesCurrent }))

			foreign := s
			foreign.Conditions = append(slices.Clone(s.Conditions), metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "ByAnotherController"})
			require.True(t, equality.Semantic.DeepEqual(ours(foreign), s), "another writer's condition is not compared")
		}
	}
	require.Nil(t, ours(v1.ModelDeploymentStatus{Conditions: []metav1.Condition{{Type: "Synced"}}}).Conditions)
}

// TestTrimsKeepOnlyDeclaredFacts: what the drift caches keep of a Node, a
// Deployment and a CRD changes only with a fact a capability file can
// declare, so a heartbeat, a rollout's status or a CRD's conditions poke
// no comparison, and a changed label, taint, allocatable, image or
// annotation does.
func TestTrimsKeepOnlyDeclaredFacts(t *testing.T) {
	t.Parallel()
	node := func(mutate func(*corev1.Node)) any {
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "gpu-0", ResourceVersion: "1", Labels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}},
		}
		mutate(n)
		out, err := trimNode(n)
		require.NoError(t, err)
		return out
	}
	dep := func(mutate func(*appsv1.Deployment)) any {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "kaito", Name: "kaito-workspace", ResourceVersion: "1", Generation: 1,
			Labels: map[string]string{"app.kubernetes.io/version": "0.10.0"}}}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "manager", Image: "kaito/workspace:0.10.0", Args: []string{"--x"},
			Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}}
		d.Status.ReadyReplicas = 1
		mutate(d)
		out, err := trimDeployment(d)
		require.NoError(t, err)
		return out
	}
	crd := func(mutate func(*metav1.PartialObjectMetadata)) any {
		c := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "workspaces.kaito.sh", ResourceVersion: "1", Generation: 1,
			Annotations: map[string]string{"controller-gen.kubebuilder.io/version": "v0.16.0"}}}
		mutate(c)
		out, err := trimCRD(c)
		require.NoError(t, err)
		return out
	}
	cases := []struct {
		name     string
		old, new any
		poke     bool
	}{
		{"node heartbeat", node(func(*corev1.Node) {}), node(func(n *corev1.Node) {
			n.ResourceVersion, n.Status.Conditions[0].LastHeartbeatTime = "2", metav1.NewTime(time.Now().Add(time.Minute))
		}), false},
		{"node label", node(func(*corev1.Node) {}), node(func(n *corev1.Node) { n.Labels["nvidia.com/gpu.product"] = "NVIDIA-H100" }), true},
		{"node taint", node(func(*corev1.Node) {}), node(func(n *corev1.Node) { n.Spec.Taints = nil }), true},
		{"node allocatable", node(func(*corev1.Node) {}), node(func(n *corev1.Node) { n.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("2") }), true},
		{"deployment status and generation", dep(func(*appsv1.Deployment) {}), dep(func(d *appsv1.Deployment) {
			d.ResourceVersion, d.Generation, d.Status.ReadyReplicas, d.Spec.Template.Spec.Containers[0].Env = "2", 2, 0, nil
		}), false},
		{"deployment image", dep(func(*appsv1.Deployment) {}), dep(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "kaito/workspace:0.11.0" }), true},
		{"deployment args", dep(func(*appsv1.Deployment) {}), dep(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Args = nil }), true},
		{"crd conditions", crd(func(*metav1.PartialObjectMetadata) {}), crd(func(c *metav1.PartialObjectMetadata) { c.ResourceVersion, c.Generation = "2", 2 }), false},
		{"crd bundle annotation", crd(func(*metav1.PartialObjectMetadata) {}), crd(func(c *metav1.PartialObjectMetadata) {
			c.Annotations = map[string]string{"gateway.networking.k8s.io/bundle-version": "v1.5.1"}
		}), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDrift(nil)
			pokeIfChanged(d, tc.old, tc.new)
			select {
			case <-d.poked:
				require.True(t, tc.poke, "a change to nothing a capability file declares poked a comparison")
			default:
				require.False(t, tc.poke, "a change to a declared fact poked no comparison")
			}
		})
	}
}

// TestComparedGate: reconciles wait for the first comparison, whatever
// its outcome.
func TestComparedGate(t *testing.T) {
	t.Parallel()
	d := newDrift(nil)
	require.False(t, d.compared())
	d.firstOnce.Do(func() { close(d.firstDone) })
	require.True(t, d.compared())
	d.firstOnce.Do(func() { close(d.firstDone) }) // a second comparison closes nothing twice
	require.True(t, d.compared())
}
