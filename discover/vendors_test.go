package discover_test

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/gpus"
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/discover"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
)

// TestEveryVendorIsRead is the check behind docs/architecture.md's
// "Adding a GPU vendor": every row of package gpus is read by discovery,
// held by drift, and refused where it must be, with no other change. A
// row whose labels, resources or driver discovery ignores fails here.
func TestEveryVendorIsRead(t *testing.T) {
	for _, v := range gpus.Vendors {
		t.Run(v.Name, func(t *testing.T) {
			for i, res := range v.Resources {
				labels := KV{"karpenter.sh/nodepool": "gpus", v.ProductLabel: "Example-GPU"}
				if v.MemoryLabel != "" {
					labels[v.MemoryLabel] = "40960"
				}
				c := &discover.Cluster{Nodes: []corev1.Node{Node(fmt.Sprintf("n%d", i), labels, KV{res: "4"})}}
				caps, _ := discover.Discover(c, "vendor")
				require.Len(t, caps.Spec.NodePools, 1, "%s: a node offering %s is a GPU pool", v.Name, res)
				g := caps.Spec.NodePools[0].GPU
				require.NotNil(t, g, "%s: %s counts GPUs", v.Name, res)
				require.Equal(t, int32(4), g.PerNode)
				require.Equal(t, "Example-GPU", g.Product, "%s: the product comes from %s", v.Name, v.ProductLabel)
				if res != hub.DefaultGPUResource {
					require.Equal(t, res, g.ResourceName)
				}
				if v.MemoryLabel != "" {
					require.Equal(t, int64(40960), g.MemoryMiB, "%s: the memory comes from %s", v.Name, v.MemoryLabel)
				}
				// Drift reads the same labels: a product changed on the node
				// is a difference (the pool selected by its pool label, so
				// that the node stays in it).
				caps.Spec.NodePools[0].Selector = map[string]string{"karpenter.sh/nodepool": "gpus"}
				require.Empty(t, discover.Compare(caps, c))
				c.Nodes[0].Labels[v.ProductLabel] = "Other-GPU"
				diffs := discover.Compare(caps, c)
				require.True(t, hasField(diffs, ".gpu.product"), "%s: drift reads %s: %v", v.Name, v.ProductLabel, diffs)
			}
			requireSimulatedNodesRead(t, v)
			if v.DRADriver != "" {
				requireDRAPool(t, v)
			}
			for class := range v.RefusedClasses {
				requireRefused(t, class, v.WholeGPUClass)
			}
		})
	}
}

// requireSimulatedNodesRead: the nodes `capabilities nodes` (and the
// twin) make of a pool of the vendor's GPUs carry the labels discovery
// reads them by, so the pool comes back as it was written.
func requireSimulatedNodesRead(t *testing.T, v gpus.Vendor) {
	t.Helper()
	resolved, l := resolvePool(t, fmt.Sprintf("{resourceName: %s, product: Example-GPU, memoryMiB: 40960, perNode: 2}\n    nodes: {count: 1}", strconv.Quote(v.Resources[0])))
	require.False(t, l.HasErrors(), "%v", l)
	caps, _ := discover.Discover(&discover.Cluster{Nodes: resolved.Nodes()}, "simulated")
	require.Len(t, caps.Spec.NodePools, 1)
	g := caps.Spec.NodePools[0].GPU
	require.NotNil(t, g, "%s: the simulated node's %s is read", v.Name, v.Resources[0])
	require.Equal(t, "Example-GPU", g.Product, "%s: the simulated node carries %s", v.Name, v.ProductLabel)
	require.Equal(t, int32(2), g.PerNode)
	if v.MemoryLabel != "" {
		require.Equal(t, int64(40960), g.MemoryMiB, "%s: the simulated node carries %s", v.Name, v.MemoryLabel)
	}
}

// requireDRAPool: a node whose GPUs are the driver's DRA devices, picked by
// the vendor's class of whole GPUs, is a pool of that class.
func requireDRAPool(t *testing.T, v gpus.Vendor) {
	t.Helper()
	c := &discover.Cluster{Nodes: []corev1.Node{Node("d0", KV{"karpenter.sh/nodepool": "dra"}, nil)}}
	sel := fmt.Sprintf("device.driver == '%s'", v.DRADriver)
	if v.WholeGPUType != "" {
		sel += fmt.Sprintf(" && device.attributes['%s'].type == '%s'", v.DRADriver, v.WholeGPUType)
	}
	class := resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: v.WholeGPUClass},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: sel}}}}}
	slice := GPUSlice("d0", 2, H100)
	slice.Spec.Driver = v.DRADriver
	for i := range slice.Spec.Devices {
		typ := v.WholeGPUType
		slice.Spec.Devices[i].Attributes["type"] = resourcev1.DeviceAttribute{StringValue: &typ}
	}
	WithDRA(t, c, []resourcev1.DeviceClass{class}, slice)
	caps, notes := discover.Discover(c, "vendor")
	require.Len(t, caps.Spec.NodePools, 1, "%s: %v", v.Name, notes)
	g := caps.Spec.NodePools[0].GPU
	require.NotNil(t, g)
	require.Equal(t, v.WholeGPUClass, g.DeviceClassName, "%s: the pool claims the driver's whole GPUs", v.Name)
	require.Equal(t, int32(2), g.PerNode)
}

// requireRefused: a capability file naming a class of the vendor's that
// holds no whole GPUs fails, pointing at the class that does.
func requireRefused(t *testing.T, class, instead string) {
	t.Helper()
	_, l := resolvePool(t, fmt.Sprintf("{deviceClassName: %s, perNode: 1, memoryMiB: 1024}", strconv.Quote(class)))
	require.True(t, l.HasErrors(), "%s is refused", class)
	require.Contains(t, fmt.Sprint(l), fmt.Sprintf("use the DeviceClass of whole GPUs (%q)", instead))
}

// resolvePool decodes a capability file of one node pool, p, whose `gpu`
// (and what follows it) is gpu, and resolves it: the resolution's problems
// are the caller's to judge.
func resolvePool(t *testing.T, gpu string) (*capabilities.Resolved, diag.List) {
	t.Helper()
	declared, l := capabilities.Decode([]byte(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: vendor}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: p
    selector: {pool: p}
    gpu: ` + gpu + "\n"))
	require.False(t, l.HasErrors(), "%v", l)
	return capabilities.Resolve(declared)
}

func hasField(diffs []discover.Difference, suffix string) bool {
	for _, d := range diffs {
		if len(d.Field) >= len(suffix) && d.Field[len(d.Field)-len(suffix):] == suffix {
			return true
		}
	}
	return false
}
