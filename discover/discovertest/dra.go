package discovertest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/discover"
)

// NVIDIAClasses are the DeviceClasses NVIDIA's DRA driver installs for
// GPUs (k8s-dra-driver-gpu's chart, templates/deviceclass-gpu.yaml,
// deviceclass-mig.yaml, deviceclass-vfio-gpu.yaml): whole GPUs, MIG
// devices and GPUs for virtual machines, told apart by the attribute type.
func NVIDIAClasses() []resourcev1.DeviceClass {
	class := func(name, typ string) resourcev1.DeviceClass {
		return resourcev1.DeviceClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: fmt.Sprintf("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '%s'", typ)}}}},
		}
	}
	return []resourcev1.DeviceClass{class("gpu.nvidia.com", "gpu"), class("mig.nvidia.com", "mig"), class("vfio.gpu.nvidia.com", "vfio")}
}

// GPU is the kind of GPU a GPUSlice publishes.
type GPU struct {
	Product, Architecture, CUDAComputeCapability, DriverVersion string
	MemoryMiB                                                   int64
}

// H100 and L4 are GPUs as NVIDIA's driver describes them.
var (
	H100 = GPU{"NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "580.82.7", 81559}
	L4   = GPU{"NVIDIA L4", "Ada Lovelace", "8.9.0", "580.82.7", 23034}
)

// GPUSlice is the ResourceSlice NVIDIA's DRA driver publishes for a node
// with count GPUs (cmd/gpu-kubelet-plugin/deviceinfo.go, GpuInfo's
// Attributes and GetDevice): devices gpu-<minor> of driver gpu.nvidia.com
// with type "gpu", uuid, productName, brand, architecture,
// cudaComputeCapability, driverVersion and cudaDriverVersion (versions),
// the standard resource.kubernetes.io/pciBusID, and capacity memory.
func GPUSlice(node string, count int, g GPU) resourcev1.ResourceSlice {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
	ver := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{VersionValue: &s} }
	nodeName := node
	rs := resourcev1.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu.nvidia.com-x7k2p"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "gpu.nvidia.com",
			NodeName: &nodeName,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		},
	}
	for i := range count {
		rs.Spec.Devices = append(rs.Spec.Devices, resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type": str("gpu"), "uuid": str(fmt.Sprintf("GPU-%s-%d", node, i)),
				"productName": str(g.Product), "brand": str("Nvidia"), "architecture": str(g.Architecture),
				"cudaComputeCapability": ver(g.CUDAComputeCapability), "driverVersion": ver(g.DriverVersion), "cudaDriverVersion": ver("13.0.0"),
				"resource.kubernetes.io/pciBusID": str(fmt.Sprintf("0000:%02x:00.0", 0x10+i)),
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: *resource.NewQuantity(g.MemoryMiB<<20, resource.BinarySI)}},
		})
	}
	return rs
}

// WithDRA gives a cluster DeviceClasses and ResourceSlices, as Read keeps
// them.
func WithDRA(t testing.TB, c *discover.Cluster, classes []resourcev1.DeviceClass, slices ...resourcev1.ResourceSlice) {
	t.Helper()
	c.DRA = true
	for i := range classes {
		c.DeviceClasses = append(c.DeviceClasses, discover.ClassOf(&classes[i]))
	}
	for i := range slices {
		s, err := discover.SliceOf(&slices[i])
		require.NoError(t, err)
		c.ResourceSlices = append(c.ResourceSlices, s)
	}
}
