package capabilities

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	"github.com/airunway-render/airunway-render/api/dra"
)

const draPools = `{providers: [{name: vllm}], nodePools: [
  {name: h100, selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}],
   gpu: {deviceClassName: gpu.nvidia.com, selectors: ['device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"', 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80G")) >= 0'],
         attributes: {productName: NVIDIA H100 80GB HBM3, architecture: Hopper, cudaComputeCapability: 9.0.0}, product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, perNode: 8},
   capacity: {cpu: "94", memory: 1800Gi}, nodes: {count: 2}},
  {name: a100, selector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}, gpu: {product: NVIDIA-A100-SXM4-80GB, perNode: 4}, nodes: {count: 1}},
  {name: l4, selector: {nvidia.com/gpu.product: NVIDIA-L4}, gpu: {deviceClassName: gpu.nvidia.com, perNode: 1}, nodes: {count: 3}},
  {name: cpu, selector: {kubernetes.io/os: linux}, nodes: {count: 1}}]}`

// A DRA pool's Nodes have no GPU extended resource and keep the rest; a
// device-plugin pool beside it keeps its nvidia.com/gpu.
func TestNodesOfDRAPools(t *testing.T) {
	r := resolveDoc(t, draPools)
	nodes := r.Nodes()
	require.Len(t, nodes, 7)
	h := nodes[0]
	require.Equal(t, "h100-0", h.Name)
	for _, list := range []corev1.ResourceList{h.Status.Capacity, h.Status.Allocatable} {
		require.NotContains(t, list, corev1.ResourceName("nvidia.com/gpu"), "a DRA cluster has no GPU extended resource")
		require.True(t, resource.MustParse("94").Equal(list[corev1.ResourceCPU]))
		require.True(t, resource.MustParse("1800Gi").Equal(list[corev1.ResourceMemory]))
	}
	require.Equal(t, "NVIDIA-H100-80GB-HBM3", h.Labels["nvidia.com/gpu.product"])
	require.Equal(t, "h100", h.Labels["render.airunway.ai/node-pool"])
	require.Equal(t, []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}, h.Spec.Taints)
	a := nodes[2]
	require.Equal(t, "a100-0", a.Name)
	require.True(t, resource.MustParse("4").Equal(a.Status.Allocatable["nvidia.com/gpu"]), "a device-plugin pool keeps its extended resource")
}

func TestResourceSlices(t *testing.T) {
	r := resolveDoc(t, draPools)
	got := r.ResourceSlices()
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"h100-0-gpu.nvidia.com", "h100-1-gpu.nvidia.com", "l4-0-gpu.nvidia.com", "l4-1-gpu.nvidia.com", "l4-2-gpu.nvidia.com"}, names,
		"one slice per node of a DRA pool; none for the device-plugin and CPU pools")

	s := got[1]
	require.Equal(t, "resource.k8s.io/v1", s.APIVersion)
	require.Equal(t, "ResourceSlice", s.Kind)
	require.Equal(t, "gpu.nvidia.com", s.Spec.Driver, "the driver is named like the DeviceClass")
	require.Equal(t, "h100-1", *s.Spec.NodeName)
	require.Equal(t, resourcev1.ResourcePool{Name: "h100-1", Generation: 1, ResourceSliceCount: 1}, s.Spec.Pool)
	require.Nil(t, s.Spec.AllNodes)
	require.Nil(t, s.Spec.NodeSelector)
	require.Len(t, s.Spec.Devices, 8)
	uuids := map[string]bool{}
	for i, d := range s.Spec.Devices {
		require.Equal(t, fmt.Sprintf("gpu-%d", i), d.Name)
		require.Equal(t, int64(i), *d.Attributes["index"].IntValue)
		uuid := *d.Attributes["uuid"].StringValue
		require.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, uuid)
		uuids[uuid] = true
		require.Equal(t, "NVIDIA H100 80GB HBM3", *d.Attributes["productName"].StringValue)
		require.Equal(t, "Hopper", *d.Attributes["architecture"].StringValue)
		require.Equal(t, "9.0.0", *d.Attributes["cudaComputeCapability"].VersionValue, "typed as DeviceAttribute reads it")
		require.Equal(t, "81559Mi", ptrString(d.Capacity["memory"].Value))
	}
	require.Len(t, uuids, 8, "every device its own UUID")
	require.NotEqual(t, *got[0].Spec.Devices[0].Attributes["uuid"].StringValue, *got[1].Spec.Devices[0].Attributes["uuid"].StringValue)

	l4 := got[2].Spec.Devices
	require.Len(t, l4, 1)
	require.Equal(t, []resourcev1.QualifiedName{"index", "uuid"}, keys(l4[0].Attributes), "only the generated attributes when none are declared")
	require.Nil(t, l4[0].Capacity, "no memory capacity without memoryMiB")

	require.Equal(t, got, r.ResourceSlices(), "deterministic")
	require.Empty(t, resolveDoc(t, `{providers: [{name: vllm}], nodePools: [{name: l4, selector: {a: b}, gpu: {perNode: 1}}]}`).ResourceSlices())
}

// What the twin publishes is what the renderer's selectors were held to:
// every selector of a pool and its DeviceClass's selector are true for
// every device of the pool's slices, in the scheduler's CEL environment.
func TestResourceSlicesSatisfySelectors(t *testing.T) {
	for _, file := range []string{filepath.Join("..", "examples", "capabilities", "dra-h100.yaml")} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		c, problems := Decode(data)
		require.False(t, problems.HasErrors(), "%v", problems)
		r, problems := Resolve(c)
		require.False(t, problems.HasErrors(), "%v", problems)
		classes := r.DeviceClasses()
		require.Len(t, classes, 1)
		require.Equal(t, "gpu.nvidia.com", classes[0].Name)
		require.Equal(t, []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.nvidia.com"`}}}, classes[0].Spec.Selectors)
		pools := map[string][]string{}
		for _, p := range r.NodePools {
			if p.ClaimsDevices() {
				pools[p.Name] = slices.Concat(p.GPU.Selectors, []string{classes[0].Spec.Selectors[0].CEL.Expression})
			}
		}
		published := r.ResourceSlices()
		require.Len(t, published, 6, "2 h100 and 4 l4 nodes")
		for _, s := range published {
			pool, _, _ := strings.Cut(s.Spec.Pool.Name, "-")
			for _, d := range s.Spec.Devices {
				dev := dracel.Device{Driver: s.Spec.Driver, Attributes: d.Attributes, Capacity: d.Capacity}
				for _, expr := range pools[pool] {
					res := dra.CompileSelector(expr)
					require.Nil(t, res.Error)
					match, _, err := res.DeviceMatches(context.Background(), dev)
					require.NoError(t, err)
					require.True(t, match, "%s of %s: %s", d.Name, s.Name, expr)
				}
			}
		}
		// The H100 selector is false for an L4: a claim of one pool
		// cannot take the other's devices.
		h100 := dra.CompileSelector(r.NodePools[0].GPU.Selectors[0])
		l4 := published[len(published)-1].Spec.Devices[0]
		match, _, err := h100.DeviceMatches(context.Background(), dracel.Device{Driver: "gpu.nvidia.com", Attributes: l4.Attributes, Capacity: l4.Capacity})
		require.NoError(t, err)
		require.False(t, match)
	}
}

func TestDeviceClasses(t *testing.T) {
	r := resolveDoc(t, `{providers: [{name: vllm}], nodePools: [
  {name: b, selector: {a: b}, gpu: {deviceClassName: gpu.example.com, perNode: 1}},
  {name: a, selector: {a: c}, gpu: {deviceClassName: gpu.nvidia.com, perNode: 1}},
  {name: c, selector: {a: d}, gpu: {deviceClassName: gpu.nvidia.com, perNode: 2}},
  {name: d, selector: {a: e}, gpu: {perNode: 2}}]}`)
	classes := r.DeviceClasses()
	require.Len(t, classes, 2, "one per DeviceClass name")
	require.Equal(t, "gpu.example.com", classes[0].Name)
	require.Equal(t, `device.driver == "gpu.example.com"`, classes[0].Spec.Selectors[0].CEL.Expression)
	require.Equal(t, "gpu.nvidia.com", classes[1].Name)
	require.Equal(t, "DeviceClass", classes[1].Kind)
	require.Empty(t, resolveDoc(t, `{providers: [{name: vllm}], nodePools: [{name: d, selector: {a: e}, gpu: {perNode: 2}}]}`).DeviceClasses())
	require.Nil(t, classes[1].Spec.ExtendedResourceName)
}

// TestExtendedResourcePool: a pool whose DeviceClass serves its GPU
// resource as an extended resource publishes devices and a class naming
// the resource; its nodes list no such resource, and its pods request it
// rather than claim devices.
func TestExtendedResourcePool(t *testing.T) {
	r := resolveDoc(t, `{providers: [{name: vllm}], nodePools: [
  {name: a, selector: {a: c}, gpu: {deviceClassName: gpu.nvidia.com, extendedResource: true, perNode: 2}}]}`)
	classes := r.DeviceClasses()
	require.Len(t, classes, 1)
	require.Equal(t, "nvidia.com/gpu", *classes[0].Spec.ExtendedResourceName)
	require.Len(t, r.ResourceSlices(), len(r.Nodes()), "one slice per node")
	require.Len(t, r.ResourceSlices()[0].Spec.Devices, 2)
	for _, n := range r.Nodes() {
		require.NotContains(t, n.Status.Allocatable, corev1.ResourceName("nvidia.com/gpu"))
	}
	require.False(t, r.NodePools[0].ClaimsDevices())
	require.True(t, r.NodePools[0].HasDevices())
}

func ptrString(q resource.Quantity) string { return q.String() }

func keys(m map[resourcev1.QualifiedName]resourcev1.DeviceAttribute) []resourcev1.QualifiedName {
	return slices.Sorted(maps.Keys(m))
}
