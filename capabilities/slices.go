package capabilities

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strconv"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/dra"
	"github.com/airunway-render/airunway-render/api/hub"
)

// The per-device attributes ResourceSlices add to a DRA pool's declared
// ones, as NVIDIA's DRA driver (k8s-dra-driver-gpu) publishes them for
// every GPU: its index on the node and its UUID.
const (
	DeviceIndexAttribute = "index"
	DeviceUUIDAttribute  = "uuid"
)

// ResourceSlices returns the ResourceSlices (resource.k8s.io/v1) a DRA
// driver would publish for the Nodes the capability file describes
// (Nodes): per Node of a pool whose GPUs are DRA devices
// (`gpu.deviceClassName`), one slice named `<node>-<deviceClassName>`, of
// the driver named like the DeviceClass (NVIDIA's driver and its
// DeviceClass of whole GPUs are both gpu.nvidia.com; PoolDevice assumes
// the same), for that node (`spec.nodeName`), whose pool is the node
// (named after it, generation 1, one slice), with `perNode` devices
// (default DefaultGPUsPerNode) `gpu-0`, `gpu-1`…: each with the pool's
// declared attributes, typed as DeviceAttribute reads them, plus `index`
// (an integer) and `uuid` (a string, `GPU-` and a UUID derived from the
// node name and index), which win over declared ones of the same names;
// and with capacity `memory` of `memoryMiB` Mi when the pool declares it.
// Sorted as Nodes; the same file gives the same slices.
func (r *Resolved) ResourceSlices() []resourcev1.ResourceSlice {
	var out []resourcev1.ResourceSlice
	for _, p := range r.NodePools {
		if !p.HasDevices() {
			continue
		}
		for i := range poolNodeCount(p) {
			out = append(out, nodeSlice(p, nodeName(p, i)))
		}
	}
	return out
}

func nodeSlice(p hub.NodePool, node string) resourcev1.ResourceSlice {
	g := p.GPU
	perNode := g.PerNode
	if perNode == 0 {
		perNode = DefaultGPUsPerNode
	}
	out := make([]resourcev1.Device, 0, perNode)
	for i := range perNode {
		d := dra.Declared(g)
		index := int64(i)
		uuid := DeviceUUID(node, i)
		d.Attributes[DeviceIndexAttribute] = resourcev1.DeviceAttribute{IntValue: &index}
		d.Attributes[DeviceUUIDAttribute] = resourcev1.DeviceAttribute{StringValue: &uuid}
		device := resourcev1.Device{Name: "gpu-" + strconv.Itoa(int(i)), Attributes: d.Attributes}
		if len(d.Capacity) > 0 {
			device.Capacity = d.Capacity
		}
		out = append(out, device)
	}
	nodeName := node
	return resourcev1.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: resourcev1.SchemeGroupVersion.String(), Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + g.DeviceClassName},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   g.DeviceClassName,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: &nodeName,
			Devices:  out,
		},
	}
}

// DeviceUUID is the UUID a generated node's i-th GPU publishes, in
// NVIDIA's form (`GPU-` and a UUID): the first 16 bytes of the SHA-256 of
// the node's name and the index, so that it is the same on every run.
func DeviceUUID(node string, i int32) string {
	sum := sha256.Sum256([]byte(node + "/" + strconv.Itoa(int(i))))
	b := sum[:16]
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// DeviceClasses returns the DeviceClasses the DRA pools of the capability
// file name, one per `gpu.deviceClassName`, sorted by name: each selects
// the devices of the driver named like it (`device.driver == "<name>"`),
// as the DeviceClass NVIDIA's driver installs does (which also asks for
// `type == "gpu"`, an attribute the generated devices do not have), and
// serve the pool's GPU resource as an extended resource where the pool says
// so (`extendedResource`), as NVIDIA's chart sets it.
func (r *Resolved) DeviceClasses() []resourcev1.DeviceClass {
	// extended names the resource a class serves, "" for none.
	extended := map[string]string{}
	for _, p := range r.NodePools {
		if p.HasDevices() {
			if p.GPU.ExtendedResource {
				extended[p.GPU.DeviceClassName] = p.GPUResource()
			} else if _, ok := extended[p.GPU.DeviceClassName]; !ok {
				extended[p.GPU.DeviceClassName] = ""
			}
		}
	}
	var out []resourcev1.DeviceClass
	for _, name := range slices.Sorted(maps.Keys(extended)) {
		class := resourcev1.DeviceClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: resourcev1.SchemeGroupVersion.String(), Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
				CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == ` + strconv.Quote(name)},
			}}},
		}
		if resource := extended[name]; resource != "" {
			class.Spec.ExtendedResourceName = &resource
		}
		out = append(out, class)
	}
	return out
}
