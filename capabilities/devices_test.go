package capabilities

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
)

// draPool is a capability file with one DRA pool whose gpu block is g.
func draPool(g string) string {
	return capsDoc(`{providers: [{name: vllm}], nodePools: [{name: h100, selector: {nvidia.com/gpu.product: H100}, gpu: ` + g + `}]}`)
}

const (
	h100Name     = `device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA H100 80GB HBM3\"`
	h100Attrs    = `{productName: NVIDIA H100 80GB HBM3, architecture: Hopper, cudaComputeCapability: 9.0.0, index: "3", mig: "false"}`
	h100Memory80 = `device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"80G\")) >= 0`
)

func TestCheckDevices(t *testing.T) {
	long := strings.Repeat("a", 33)
	for _, tc := range []struct {
		name string
		gpu  string
		want []want
	}{
		{name: "a DRA pool", gpu: `{deviceClassName: gpu.nvidia.com, perNode: 8, memoryMiB: 81559, selectors: ["` + h100Name + `", "` + h100Memory80 + `"], attributes: ` + h100Attrs + `}`},
		{name: "selectors over undeclared attributes are not evaluated", gpu: `{deviceClassName: gpu.nvidia.com, selectors: ["device.attributes[\"gpu.nvidia.com\"].brand == \"Nvidia\""]}`},
		{name: "typed attributes", gpu: `{deviceClassName: gpu.nvidia.com, attributes: ` + h100Attrs + `, selectors: ["device.attributes[\"gpu.nvidia.com\"].index == 3", "!device.attributes[\"gpu.nvidia.com\"].mig", "device.attributes[\"gpu.nvidia.com\"].cudaComputeCapability.isGreaterThan(semver(\"8.9.0\"))"]}`},
		{
			name: "selectors without a device class",
			gpu:  `{selectors: ["` + h100Name + `"], attributes: {productName: x}}`,
			want: []want{e("spec.nodePools[0].gpu.selectors", "must be empty unless `deviceClassName` is set", `"nvidia.com/gpu"`), e("spec.nodePools[0].gpu.attributes", "must be empty unless `deviceClassName` is set")},
		},
		{name: "a DeviceClass serving the extended resource", gpu: `{deviceClassName: gpu.nvidia.com, extendedResource: true, perNode: 8, attributes: ` + h100Attrs + `}`},
		{
			name: "an extended resource without a class, or with selectors",
			gpu:  `{extendedResource: true, selectors: ["` + h100Name + `"]}`,
			want: []want{e("spec.nodePools[0].gpu.extendedResource", "needs `deviceClassName`"), e("spec.nodePools[0].gpu.selectors", "must be empty with `extendedResource`"), e("spec.nodePools[0].gpu.selectors", "must be empty unless `deviceClassName` is set")},
		},
		{
			name: "MIG",
			gpu:  `{deviceClassName: mig.nvidia.com}`,
			want: []want{e("spec.nodePools[0].gpu.deviceClassName", `"mig.nvidia.com" is not supported`, "MIG partitions", `"gpu.nvidia.com"`)},
		},
		{
			name: "ComputeDomain channels",
			gpu:  `{deviceClassName: compute-domain-default-channel.nvidia.com}`,
			want: []want{e("spec.nodePools[0].gpu.deviceClassName", "ComputeDomain IMEX channels")},
		},
		{
			name: "a class name that is no DNS subdomain",
			gpu:  `{deviceClassName: GPU_Nvidia}`,
			want: []want{e("spec.nodePools[0].gpu.deviceClassName", `"GPU_Nvidia" is not a valid DeviceClass name`)},
		},
		{
			name: "CEL that does not compile",
			gpu:  `{deviceClassName: gpu.nvidia.com, selectors: ["device.attributes[\"gpu.nvidia.com\"].productName = \"x\""]}`,
			want: []want{e("spec.nodePools[0].gpu.selectors[0]", "is not a valid device selector", "Syntax error")},
		},
		{
			name: "CEL that is not a boolean",
			gpu:  `{deviceClassName: gpu.nvidia.com, selectors: ["device.driver"]}`,
			want: []want{e("spec.nodePools[0].gpu.selectors[0]", "is not a valid device selector", "bool")},
		},
		{
			name: "an empty selector",
			gpu:  `{deviceClassName: gpu.nvidia.com, selectors: [" "]}`,
			want: []want{e("spec.nodePools[0].gpu.selectors[0]", "must be a CEL expression over `device`")},
		},
		{
			name: "a selector the declared device fails",
			gpu:  `{deviceClassName: gpu.nvidia.com, memoryMiB: 81559, attributes: ` + h100Attrs + `, selectors: ["device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA H200\"", "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"141Gi\")) >= 0"]}`,
			want: []want{
				e("spec.nodePools[0].gpu.selectors[0]", "is false for the pool's declared device", "Pending"),
				e("spec.nodePools[0].gpu.selectors[1]", "is false for the pool's declared device"),
			},
		},
		{
			name: "a selector over an attribute the declaration lacks",
			gpu:  `{deviceClassName: gpu.nvidia.com, attributes: {productName: x}, selectors: ["device.attributes[\"gpu.nvidia.com\"].brand == \"Nvidia\""]}`,
			want: []want{e("spec.nodePools[0].gpu.selectors[0]", "fails on the pool's declared device", "no such key")},
		},
		{
			name: "bad attribute names and values",
			gpu:  `{deviceClassName: gpu.nvidia.com, attributes: {"9lives": x, ` + long + `: yy, "bad domain/name": zz, ok: "` + strings.Repeat("v", 65) + `"}}`,
			want: []want{
				e("spec.nodePools[0].gpu.attributes", `"9lives" is not a valid device attribute name`, "C identifier"),
				e("spec.nodePools[0].gpu.attributes", `"`+long+`" is not a valid device attribute name`, "at most 32"),
				e("spec.nodePools[0].gpu.attributes", `"bad domain/name" is not a valid device attribute name`),
				e("spec.nodePools[0].gpu.attributes.ok", "must be at most 64"),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := resolveYAML(t, draPool(tc.gpu))
			requireErrors(t, problems, tc.want...)
		})
	}
}

func TestTooManySelectors(t *testing.T) {
	sel := make([]string, resourcev1.DeviceSelectorsMaxSize+1)
	for i := range sel {
		sel[i] = `"device.driver == \"gpu.nvidia.com\""`
	}
	_, problems := resolveYAML(t, draPool(`{deviceClassName: gpu.nvidia.com, selectors: [`+strings.Join(sel, ", ")+`]}`))
	requireErrors(t, problems, e("spec.nodePools[0].gpu.selectors", "has 33 expressions: must have at most 32"))
}
