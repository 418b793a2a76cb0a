package twin_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// TestDRAExtendedResource: a pool whose GPUs are DRA devices of a
// DeviceClass that serves nvidia.com/gpu as an extended resource
// (Kubernetes 1.37's DRAExtendedResource, GA; the twin publishes the
// DeviceClass with `extendedResourceName` and the nodes' ResourceSlices,
// and the nodes list no nvidia.com/gpu). The renderer requests
// nvidia.com/gpu as on a device plugin's nodes, and so does KAITO's preset
// (the stand-in, as KAITO does): the real kube-scheduler places every pod
// on the pool and allocates it that many devices of its node, in the
// ResourceClaim it makes for the pod (`<pod>-extended-resources-…`, named
// in the pod's status), never one device twice.
func TestDRAExtendedResource(t *testing.T) {
	dir := filepath.Join("test", "twin", "testdata", "dra-extended")
	caps := filepath.Join(dir, "capabilities.yaml")
	nodes := useCluster(t, caps)
	for i := range nodes {
		if poolOf(&nodes[i]) == "h100" {
			_, listed := nodes[i].Status.Allocatable["nvidia.com/gpu"]
			require.False(t, listed, "node %s lists nvidia.com/gpu: the DeviceClass serves it", nodes[i].Name)
		}
	}
	objs := render(t, caps, filepath.Join(dir, "models.yaml"))
	want := expectedPods(objs)
	ns, models, start := deployConsumed(t, objs)
	got := waitPlaced(t, ns, models, want, start, twin.HangBound)

	published := resolveCaps(t, caps)
	slices := map[string]resourcev1.ResourceSlice{}
	for _, s := range published.ResourceSlices() {
		slices[*s.Spec.NodeName] = s
	}
	seen := map[device]string{}
	ctx := context.Background()
	for _, m := range models {
		p := got[m.GetName()]
		require.Equal(t, want[m.GetName()], len(p.pods), "pods of %s", m.GetName())
		for _, pod := range p.pods {
			require.Equal(t, "h100", poolOf(nodeNamed(t, nodes, pod.Spec.NodeName)), "pod %s of %s on %s", pod.Name, m.GetName(), pod.Spec.NodeName)
			wantDevices := gpuRequest(&pod)
			require.Positive(t, wantDevices, "pod %s requests no nvidia.com/gpu", pod.Name)
			var claim resourcev1.ResourceClaim
			waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
				live := &corev1.Pod{}
				require.NoError(c, cluster.Client.Get(ctx, client.ObjectKeyFromObject(&pod), live))
				s := live.Status.ExtendedResourceClaimStatus
				require.NotNil(c, s, "pod %s has no extended-resource claim in its status", pod.Name)
				require.NoError(c, cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.ResourceClaimName}, &claim))
				require.NotNil(c, claim.Status.Allocation, "claim %s is not allocated", claim.Name)
			}, func() string { return "" }, "the scheduler's claim for pod %s", pod.Name)
			results := claim.Status.Allocation.Devices.Results
			require.Len(t, results, int(wantDevices), "claim %s of pod %s: one device per nvidia.com/gpu requested", claim.Name, pod.Name)
			slice := slices[pod.Spec.NodeName]
			for _, r := range results {
				require.Equal(t, slice.Spec.Pool.Name, r.Pool, "claim %s of pod %s on %s: a device of another node", claim.Name, pod.Name, pod.Spec.NodeName)
				require.True(t, hasDevice(slice, r.Device), "claim %s: device %s is not in %s", claim.Name, r.Device, slice.Name)
				d := device{r.Driver, r.Pool, r.Device}
				require.NotContains(t, seen, d, "device %s allocated to claim %s and to claim %s", d, claim.Name, seen[d])
				seen[d] = claim.Name
			}
		}
		addRow("%s | %s | %s | %s | %d/%d, devices served for nvidia.com/gpu | - | %s", m.GetAnnotations()[hub.AnnotationProvider], m.GetName(), caps, p.pool, len(p.pods), want[m.GetName()], p.readyAfter.Round(100*time.Millisecond))
	}
	require.Len(t, seen, 2*2+4, "devices allocated: two 2-GPU vLLM pods and a 4-GPU KAITO node")
}

func nodeNamed(t *testing.T, nodes []corev1.Node, name string) *corev1.Node {
	t.Helper()
	for i := range nodes {
		if nodes[i].Name == name {
			return &nodes[i]
		}
	}
	require.Failf(t, "no such node", "%s", name)
	return nil
}
