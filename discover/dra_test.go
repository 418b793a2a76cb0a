package discover_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	. "github.com/airunway-render/airunway-render/discover"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
)

// The class of a DRA pool is found by evaluating every DeviceClass's
// selectors on the devices: a class an administrator added for H100s
// picks them too, and the class named like the driver wins; a string
// attribute a capability file would read back as a number is left out
// with a note; a MIG device (type "mig", though the class h100 picks it)
// and any device of a driver that is not a GPU's make no pool.
func TestDRAClassesAndAttributes(t *testing.T) {
	h100 := resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "h100"}, Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
		CEL: &resourcev1.CELDeviceSelector{Expression: `device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")`}}}}}
	nic := resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "nic.example.com"}, Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
		CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "nic.example.com"`}}}}}
	s := GPUSlice("gpu-0", 2, H100)
	numa := "0"
	for i := range s.Spec.Devices {
		s.Spec.Devices[i].Attributes["numaNode"] = resourcev1.DeviceAttribute{StringValue: &numa}
	}
	nics := GPUSlice("cpu-0", 2, L4)
	nics.Name, nics.Spec.Driver = "cpu-0-nics", "nic.example.com"
	mig := GPUSlice("cpu-0", 1, H100)
	mig.Name = "cpu-0-mig"
	migType := "mig"
	mig.Spec.Devices[0].Attributes["type"] = resourcev1.DeviceAttribute{StringValue: &migType}
	c := &Cluster{Nodes: []corev1.Node{Node("gpu-0", KV{"render.airunway.ai/node-pool": "gpu"}, nil), Node("cpu-0", KV{"render.airunway.ai/node-pool": "cpu"}, nil)}}
	WithDRA(t, c, append(NVIDIAClasses(), h100, nic), s, nics, mig)

	caps, notes := Discover(c, "x")
	require.Len(t, caps.Spec.NodePools, 2)
	gpu := caps.Spec.NodePools[0].GPU
	require.NotNil(t, gpu)
	require.Equal(t, "gpu.nvidia.com", gpu.DeviceClassName)
	require.Equal(t, int32(2), gpu.PerNode)
	require.Equal(t, int64(81559), gpu.MemoryMiB)
	require.Equal(t, []string{`device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`}, gpu.Selectors)
	require.NotContains(t, gpu.Attributes, "numaNode")
	require.NotContains(t, gpu.Attributes, "uuid")
	require.Equal(t, "9.0.0", gpu.Attributes["cudaComputeCapability"])
	require.Contains(t, notes, Note{Field: "spec.nodePools[gpu].gpu.attributes", Text: `left out, as a capability file would read them back as another type: numaNode ("0")`})
	require.Nil(t, caps.Spec.NodePools[1].GPU, "a NIC and a MIG device (which the class h100 picks too) are no GPUs of a pool")
	require.Empty(t, Compare(caps, c))
}
