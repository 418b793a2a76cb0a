package reporter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/discover/discovertest"
	"github.com/airunway-render/airunway-render/reporter"
)

// TestCapabilitiesDriftDRA: a declared DRA pool matches the DeviceClass
// and the ResourceSlices its nodes' driver publishes, as NVIDIA's does;
// the driver republishing the same devices starts no comparison; one
// node's GPUs turning into another product makes CapabilitiesCurrent
// False, naming the attribute and the selector no device there satisfies,
// and True again once undone.
func TestCapabilitiesDriftDRA(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	installCRD(t, c, clusterCapabilitiesCRD(t))
	ns := c.namespace(t, "dra")

	pool := map[string]string{"render.airunway.ai/test-pool": ns}
	var slices []*resourcev1.ResourceSlice
	for i := range 2 {
		name := fmt.Sprintf("%s-h100-%d", ns, i)
		node := discovertest.Node(name, pool, nil, discovertest.Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule))
		require.NoError(t, c.admin.Create(ctx, &node))
		t.Cleanup(func() { _ = c.admin.Delete(ctx, &node) })
		s := discovertest.GPUSlice(name, 2, discovertest.H100)
		s.TypeMeta = metav1.TypeMeta{}
		require.NoError(t, c.admin.Create(ctx, &s))
		t.Cleanup(func() { _ = c.admin.Delete(ctx, &s) })
		slices = append(slices, &s)
	}
	class := discovertest.NVIDIAClasses()[0]
	class.TypeMeta = metav1.TypeMeta{}
	require.NoError(t, c.admin.Create(ctx, &class))
	t.Cleanup(func() { _ = c.admin.Delete(ctx, &class) })

	applyCapabilities(t, c, ns, `  - name: h100
    selector: {render.airunway.ai/test-pool: `+ns+`}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu:
      deviceClassName: gpu.nvidia.com
      selectors: ['device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"']
      attributes: {productName: NVIDIA H100 80GB HBM3, architecture: Hopper, cudaComputeCapability: 9.0.0}
      memoryMiB: 81559
      perNode: 2
    nodes: {count: 2}
`)

	run(t, c.cfg, testOptions(ns))
	current := waitCapabilities(t, c, ns, metav1.ConditionTrue)
	require.Empty(t, current.Differences)

	// The driver republishes a slice: a new pool generation, the same
	// devices. Nothing marks the moment the reporter has seen an update
	// it ignores, so a comparison it should not start is looked for over
	// two seconds, ten debounces.
	comparisons := settledComparisons(t)
	republished := &resourcev1.ResourceSlice{}
	require.NoError(t, c.admin.Get(ctx, types.NamespacedName{Name: slices[0].Name}, republished))
	republished.Spec.Pool.Generation++
	require.NoError(t, c.admin.Update(ctx, republished))
	require.Never(t, func() bool { n, err := readComparisons(); return err == nil && n != comparisons }, 2*time.Second, 50*time.Millisecond,
		"a republished slice with the same devices started a comparison")

	// One node's GPUs are now another product.
	changed := &resourcev1.ResourceSlice{}
	require.NoError(t, c.admin.Get(ctx, types.NamespacedName{Name: slices[1].Name}, changed))
	h200 := "NVIDIA H200"
	for i := range changed.Spec.Devices {
		changed.Spec.Devices[i].Attributes["productName"] = resourcev1.DeviceAttribute{StringValue: &h200}
	}
	require.NoError(t, c.admin.Update(ctx, changed))
	drifted := waitCapabilities(t, c, ns, metav1.ConditionFalse)
	var fields []string
	for _, d := range drifted.Differences {
		fields = append(fields, d.Field)
	}
	require.Equal(t, []string{"spec.nodePools[h100].gpu.attributes.productName", "spec.nodePools[h100].gpu.selectors[0]"}, fields)
	require.Equal(t, "NVIDIA H100 80GB HBM3 on "+ns+"-h100-0; NVIDIA H200 on "+ns+"-h100-1", drifted.Differences[0].Live)
	cond := meta.FindStatusCondition(drifted.Conditions, reporter.ConditionCapabilitiesCurrent)
	require.Contains(t, cond.Message, "productName")

	require.NoError(t, c.admin.Get(ctx, types.NamespacedName{Name: slices[1].Name}, changed))
	h100 := discovertest.H100.Product
	for i := range changed.Spec.Devices {
		changed.Spec.Devices[i].Attributes["productName"] = resourcev1.DeviceAttribute{StringValue: &h100}
	}
	require.NoError(t, c.admin.Update(ctx, changed))
	waitCapabilities(t, c, ns, metav1.ConditionTrue)
}

// waitCapabilities waits for a ClusterCapabilities' CapabilitiesCurrent
// to have a status, and returns its status. The hangBound only catches a
// reporter that never gets there.
func waitCapabilities(t *testing.T, c *controlPlane, name string, want metav1.ConditionStatus) v1.ClusterCapabilitiesStatus {
	t.Helper()
	var matched v1.ClusterCapabilitiesStatus
	require.EventuallyWithT(t, func(collect *assert.CollectT) {
		s, err := readCapabilitiesStatus(c, name)
		if !assert.NoError(collect, err) {
			return
		}
		if cond := meta.FindStatusCondition(s.Conditions, reporter.ConditionCapabilitiesCurrent); cond == nil || cond.Status != want {
			got, _ := yaml.Marshal(s)
			collect.Errorf("ClusterCapabilities %s does not have CapabilitiesCurrent=%s; its status is:\n%s", name, want, strings.TrimSpace(string(got)))
			return
		}
		matched = s
	}, hangBound, 100*time.Millisecond)
	return matched
}

// readCapabilitiesStatus reads the status of ClusterCapabilities name.
func readCapabilitiesStatus(c *controlPlane, name string) (v1.ClusterCapabilitiesStatus, error) {
	var s v1.ClusterCapabilitiesStatus
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(reporter.ClusterCapabilitiesGVK)
	if err := c.admin.Get(context.Background(), types.NamespacedName{Name: name}, u); err != nil {
		return s, err
	}
	raw, ok := u.Object["status"]
	if !ok {
		return s, nil
	}
	data, err := yaml.Marshal(raw)
	if err != nil {
		return s, err
	}
	return s, yaml.Unmarshal(data, &s)
}
