package gpus

import "strings"

// Vendor is how one vendor's GPUs show in a cluster. Only facts the
// vendor's own components publish belong here, each with where it comes
// from.
type Vendor struct {
	Name string
	// Resources are the device plugin's extended resources that count
	// GPUs, in the order a node offering several is read: whole GPUs
	// first, then shares of one the plugin renamed.
	Resources []string
	// SliceResourcePrefix starts the name of a resource that counts
	// slices of a GPU (NVIDIA's MIG slices of the mixed strategy); they
	// are read after every vendor's Resources.
	SliceResourcePrefix string
	// ProductLabel names the GPU product on a node.
	ProductLabel string
	// MemoryLabel gives a whole GPU's memory in MiB; empty when the
	// vendor's labeller publishes none.
	MemoryLabel string
	// ReplicasLabel says into how many shares each GPU is split
	// (time-slicing); empty when the vendor has no such label.
	ReplicasLabel string
	// CountLabel gives the node's GPU count; empty when the vendor has
	// no such label.
	CountLabel string
	// PresentLabel is "true" on a node with the vendor's GPUs, whatever
	// the device plugin allocates.
	PresentLabel string
	// DRADriver is the DRA driver whose devices are the vendor's GPUs;
	// empty when the renderer knows none.
	DRADriver string
	// WholeGPUType is the value of the driver's attribute `type` on a
	// whole GPU, when the driver publishes other devices (slices, GPUs
	// bound for virtual machines) under the same driver.
	WholeGPUType string
	// WholeGPUClass is the DeviceClass of whole GPUs the driver installs.
	WholeGPUClass string
	// RefusedClasses are the driver's DeviceClasses whose devices are not
	// whole GPUs a model server can own, with what they are.
	RefusedClasses map[string]string
}

// Vendors are the GPU vendors the renderer knows, in the order a node is
// read.
//
// NVIDIA: the device plugin's resources and GPU Feature Discovery's
// labels (github.com/NVIDIA/k8s-device-plugin; `nvidia.com/gpu.shared` is
// the name time-slicing's renameByDefault gives); the DRA driver
// github.com/NVIDIA/k8s-dra-driver-gpu (cmd/gpu-kubelet-plugin/
// deviceinfo.go for the `type` attribute, the chart's
// templates/deviceclass-*.yaml for the classes).
//
// AMD: the device plugin's `amd.com/gpu` and its node labeller's product
// label (github.com/ROCm/k8s-device-plugin).
var Vendors = []Vendor{
	{
		Name:                "NVIDIA",
		Resources:           []string{"nvidia.com/gpu", "nvidia.com/gpu.shared"},
		SliceResourcePrefix: "nvidia.com/mig-",
		ProductLabel:        "nvidia.com/gpu.product",
		MemoryLabel:         "nvidia.com/gpu.memory",
		ReplicasLabel:       "nvidia.com/gpu.replicas",
		CountLabel:          "nvidia.com/gpu.count",
		PresentLabel:        "nvidia.com/gpu.present",
		DRADriver:           "gpu.nvidia.com",
		WholeGPUType:        "gpu",
		WholeGPUClass:       "gpu.nvidia.com",
		RefusedClasses: map[string]string{
			"mig.nvidia.com":                            "MIG partitions of a GPU",
			"vfio.gpu.nvidia.com":                       "GPUs passed through to virtual machines",
			"compute-domain-daemon.nvidia.com":          "ComputeDomain daemons (multi-node NVLink)",
			"compute-domain-default-channel.nvidia.com": "ComputeDomain IMEX channels (multi-node NVLink)",
		},
	},
	{
		Name:         "AMD",
		Resources:    []string{"amd.com/gpu"},
		ProductLabel: "amd.com/gpu.product-name",
	},
}

// Resources are every vendor's GPU resources, in reading order.
func Resources() []string {
	var out []string
	for _, v := range Vendors {
		out = append(out, v.Resources...)
	}
	return out
}

// ForResource is the vendor of an extended resource (a GPU, a share or a
// slice of one); nil when it is no vendor's.
func ForResource(name string) *Vendor {
	for i, v := range Vendors {
		for _, r := range v.Resources {
			if r == name {
				return &Vendors[i]
			}
		}
		if v.SliceResourcePrefix != "" && strings.HasPrefix(name, v.SliceResourcePrefix) {
			return &Vendors[i]
		}
	}
	return nil
}

// IsWhole says the resource counts its vendor's whole GPUs (the first of
// its Resources), not shares or slices of one.
func IsWhole(name string) bool {
	v := ForResource(name)
	return v != nil && v.Resources[0] == name
}

// IsShared says the resource counts shares of a GPU its vendor's device
// plugin renamed (time-slicing's nvidia.com/gpu.shared).
func IsShared(name string) bool {
	v := ForResource(name)
	return v != nil && v.Resources[0] != name && !IsSlice(name)
}

// IsSlice says the resource counts slices of a GPU, not whole ones.
func IsSlice(name string) bool {
	v := ForResource(name)
	return v != nil && v.SliceResourcePrefix != "" && strings.HasPrefix(name, v.SliceResourcePrefix)
}

// ForDriver is the vendor of a DRA driver; nil when its devices are no
// vendor's GPUs (a NIC, an FPGA).
func ForDriver(driver string) *Vendor {
	for i, v := range Vendors {
		if v.DRADriver != "" && v.DRADriver == driver {
			return &Vendors[i]
		}
	}
	return nil
}

// RefusedClass says what a DeviceClass's devices are, and the vendor's
// class of whole GPUs to use instead, when they are not whole GPUs.
func RefusedClass(class string) (what, instead string, refused bool) {
	for _, v := range Vendors {
		if what, ok := v.RefusedClasses[class]; ok {
			return what, v.WholeGPUClass, true
		}
	}
	return "", "", false
}

// ProductOf is the GPU product a node's labels name: the first vendor's
// product label that is set.
func ProductOf(labels map[string]string) string {
	for _, v := range Vendors {
		if p := labels[v.ProductLabel]; p != "" {
			return p
		}
	}
	return ""
}

// HasGPUs says a node's labels show some vendor's GPUs, whatever the
// device plugin allocates.
func HasGPUs(labels map[string]string) bool {
	for _, v := range Vendors {
		if v.PresentLabel != "" && labels[v.PresentLabel] == "true" || labels[v.ProductLabel] != "" {
			return true
		}
	}
	return false
}
