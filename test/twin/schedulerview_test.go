package twin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// probeNamespace holds the probes of waitSchedulerSees. Its label lets a
// claim ask for admin access to a device, which takes the device from no
// other claim.
const probeNamespace = "scheduler-probe"

// waitSchedulerSees waits until the scheduler's own view of the cluster
// (its informers' cache, which follows the API server) holds each of the
// nodes Ready and untainted but for its pool's taints, and the devices
// published for it: a probe pod pinned to the node, tolerating only its
// pool's taints, on a DRA node also claiming one of its devices with admin
// access, is bound by the scheduler only then. A pod tried before then is
// marked unschedulable, and tried again only once the node or its slice
// arrives; after this barrier the scheduler's first verdict on a pod is
// its last (settle relies on it). The probes are gone when it returns.
func waitSchedulerSees(t *testing.T, resolved *capabilities.Resolved, nodes []corev1.Node) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, createIgnoringExisting(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: probeNamespace, Labels: map[string]string{"resource.kubernetes.io/admin-access": "true"},
	}}))
	drivers := map[string]string{} // node → its devices' driver
	for _, s := range resolved.ResourceSlices() {
		if s.Spec.NodeName != nil {
			drivers[*s.Spec.NodeName] = s.Spec.Driver
		}
	}
	probes := &probes{}
	t.Cleanup(func() { probes.remove(t) })
	for i := range nodes {
		pod := probePod(&nodes[i])
		if driver, ok := drivers[nodes[i].Name]; ok {
			claim := probeClaim(nodes[i].Name, driver)
			require.NoError(t, cluster.Client.Create(ctx, claim))
			probes.claims = append(probes.claims, claim)
			pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "device", ResourceClaimName: &claim.Name}}
		}
		require.NoError(t, cluster.Client.Create(ctx, pod))
		probes.pods = append(probes.pods, pod)
	}
	waitUntil(t, twin.HangBound, 100*time.Millisecond, func(c *assert.CollectT) {
		for _, pod := range probes.pods {
			live := &corev1.Pod{}
			require.NoError(c, cluster.Client.Get(ctx, client.ObjectKeyFromObject(pod), live))
			assert.NotEmpty(c, live.Spec.NodeName, "probe %s is not bound: %v", pod.Name, live.Status.Conditions)
		}
	}, func() string { return schedulerEvents(t, probeNamespace) + "\n" + nodeSummary(t) }, "the scheduler does not see every node (and its devices) yet")
	probes.remove(t)
}

// probePod is a pod that only the node takes: pinned to it by name,
// tolerating the node's own taints (its pool's), not the not-ready taint
// of a node the scheduler has not seen Ready.
func probePod(node *corev1.Node) *corev1.Pod {
	var tolerations []corev1.Toleration
	for _, taint := range node.Spec.Taints {
		tolerations = append(tolerations, corev1.Toleration{Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: taint.Value, Effect: taint.Effect})
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: probeNamespace, Name: "probe-" + node.Name},
		Spec: corev1.PodSpec{
			Containers:  []corev1.Container{{Name: "probe", Image: "probe"}},
			Tolerations: tolerations,
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node.Name},
				}}}},
			}}},
		},
	}
}

// probeClaim asks for one device of the driver with admin access: the
// scheduler allocates it from the slice of the node its pod is pinned to,
// and it stays free for every other claim.
func probeClaim(node, driver string) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: probeNamespace, Name: "probe-" + node},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name:    "device",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: driver, AdminAccess: ptr.To(true)},
		}}}},
	}
}

// probes are the pods and claims of one waitSchedulerSees.
type probes struct {
	pods   []*corev1.Pod
	claims []*resourcev1.ResourceClaim
}

// remove deletes the probes, pods first (at once: no kubelet waits for
// their containers), and waits until they are gone: a pod would otherwise
// outlive its node (no pod garbage collector runs), and a claim hold its
// device past the test (publishDevices waits for that).
func (p *probes) remove(t *testing.T) {
	var pods, claims []client.Object
	for _, pod := range p.pods {
		pods = append(pods, pod)
	}
	for _, claim := range p.claims {
		claims = append(claims, claim)
	}
	deleteAndWait(t, pods)
	deleteAndWait(t, claims)
	p.pods, p.claims = nil, nil
}

func deleteAndWait(t *testing.T, objs []client.Object) {
	ctx := context.Background()
	for _, o := range objs {
		if err := cluster.Client.Delete(ctx, o, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting probe %s: %v", o.GetName(), err)
		}
	}
	// Not fatal: it runs in cleanups.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, o := range objs {
			err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
			assert.True(c, apierrors.IsNotFound(err), "probe %s is still there (%v)", o.GetName(), err)
		}
	}, twin.HangBound, 100*time.Millisecond, "the scheduler's probes were not deleted")
}
