package discover_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	. "github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/discovertest"
)

// TestCompare changes one fact of a cluster at a time and expects exactly
// the differences that name it.
func TestCompare(t *testing.T) {
	const prod = "../examples/kustomize/clusters/prod/capabilities.yaml"
	const gw = "../examples/gateway/capabilities.yaml"
	nodeNamed := func(c *Cluster, name string) *corev1.Node {
		for i := range c.Nodes {
			if c.Nodes[i].Name == name {
				return &c.Nodes[i]
			}
		}
		t.Fatalf("no node %s", name)
		return nil
	}
	cases := []struct {
		name, file string
		change     func(c *Cluster)
		fields     []string
	}{
		{"as declared", prod, func(*Cluster) {}, nil},
		{"gateway as declared", gw, func(*Cluster) {}, nil},
		{"a pool relabelled", prod, func(c *Cluster) {
			for _, n := range []string{"l4-0", "l4-1", "l4-2", "l4-3"} {
				nodeNamed(c, n).Labels["nvidia.com/gpu.product"] = "NVIDIA-L4-SHARED"
			}
		}, []string{"spec.nodePools[l4].selector"}},
		{"a node gone", prod, func(c *Cluster) { c.Nodes = c.Nodes[1:] }, []string{"spec.nodePools[l4].nodes.count"}},
		{"an autoscaled pool under its minimum", prod, func(c *Cluster) {
			var kept []corev1.Node
			for _, n := range c.Nodes {
				if n.Labels[hub.LabelNodePool] != "a100" {
					kept = append(kept, n)
				}
			}
			c.Nodes = kept
		}, []string{"spec.nodePools[a100].selector"}},
		{"fewer GPUs on a node, a taint lost, a memory label changed", prod, func(c *Cluster) {
			n := nodeNamed(c, "a100-1")
			n.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("1")
			nodeNamed(c, "l4-2").Spec.Taints = nil
			nodeNamed(c, "a100-0").Labels["nvidia.com/gpu.memory"] = "40960"
		}, []string{"spec.nodePools[a100].gpu.memoryMiB", "spec.nodePools[a100].gpu.perNode", "spec.nodePools[l4].taints"}},
		{"a taint added to the CPU pool", prod, func(c *Cluster) {
			nodeNamed(c, "cpu-0").Spec.Taints = []corev1.Taint{discovertest.Taint("dedicated", "system", corev1.TaintEffectNoSchedule)}
		}, []string{"spec.nodePools[cpu].taints"}},
		{"a provider CRD removed", prod, func(c *Cluster) {
			c.CRDs = []metav1.PartialObjectMetadata{discovertest.CRD("dynamographdeployments.nvidia.com", nil)}
		}, []string{"spec.providers[kaito]"}},
		{"an operator upgraded", prod, func(c *Cluster) {
			for i := range c.Deployments {
				if c.Deployments[i].Name == "kaito-operator" {
					c.Deployments[i].Spec.Template.Spec.Containers[0].Image = "mcr.microsoft.com/aks/kaito/workspace:0.13.0"
				}
			}
		}, []string{"spec.providers[kaito].version"}},
		{"the Gateway API bumped, the Gateway gone", gw, func(c *Cluster) {
			c.CRDs = append(discovertest.GatewayCRDs("v1.6.0", "experimental"), discovertest.CRD("inferencepools.inference.networking.k8s.io", nil))
			c.Gateways = nil
		}, []string{"spec.gateway.channel", "spec.gateway.gatewayAPIVersion", "spec.gateway.parentRef"}},
		{"the InferencePool CRD removed", gw, func(c *Cluster) {
			c.CRDs = discovertest.GatewayCRDs("v1.5.1", "standard")
		}, []string{"spec.gateway.inferencePoolVersion"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caps, c := discovertest.Example(t, tc.file)
			tc.change(c)
			var fields []string
			for _, d := range Compare(caps, c) {
				fields = append(fields, d.Field)
				require.NotEmpty(t, d.Message)
			}
			require.Equal(t, tc.fields, fields)
		})
	}
}

// TestCompareNamesTheChange reads one difference whole.
func TestCompareNamesTheChange(t *testing.T) {
	caps, c := discovertest.Example(t, "../examples/kustomize/clusters/prod/capabilities.yaml")
	c.Deployments = append(c.Deployments, appsv1.Deployment{})
	for i := range c.Nodes {
		if c.Nodes[i].Name == "l4-3" {
			c.Nodes[i].Spec.Taints = nil
		}
	}
	require.Equal(t, []Difference{{
		Field: "spec.nodePools[l4].taints", Declared: "nvidia.com/gpu=present:NoSchedule",
		Live:    "none on l4-3; nvidia.com/gpu=present:NoSchedule on l4-0, l4-1, l4-2",
		Message: `pool "l4": the nodes' taints differ from the file's (nvidia.com/gpu=present:NoSchedule): none on l4-3; nvidia.com/gpu=present:NoSchedule on l4-0, l4-1, l4-2`,
		Pool:    "l4",
	}}, Compare(caps, c))
}

// TestCompareDRA holds the DRA example to its cluster's ResourceSlices
// and DeviceClasses, changing one fact at a time.
func TestCompareDRA(t *testing.T) {
	const file = "../examples/capabilities/dra-h100.yaml"
	// reslice rebuilds the cluster's slices from the twin's, changed.
	reslice := func(c *Cluster, change func(s *resourcev1.ResourceSlice) bool) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		caps, problems := capabilities.Decode(data)
		require.False(t, problems.HasErrors())
		r, problems := capabilities.Resolve(caps)
		require.False(t, problems.HasErrors())
		c.ResourceSlices = nil
		for _, s := range r.ResourceSlices() {
			if !change(&s) {
				continue
			}
			compact, err := SliceOf(&s)
			require.NoError(t, err)
			c.ResourceSlices = append(c.ResourceSlices, compact)
		}
	}
	onNode := func(node string, change func(s *resourcev1.ResourceSlice)) func(*Cluster) {
		return func(c *Cluster) {
			reslice(c, func(s *resourcev1.ResourceSlice) bool {
				if *s.Spec.NodeName == node {
					change(s)
				}
				return true
			})
		}
	}
	product := func(p string) func(s *resourcev1.ResourceSlice) {
		return func(s *resourcev1.ResourceSlice) {
			for i := range s.Spec.Devices {
				s.Spec.Devices[i].Attributes["productName"] = resourcev1.DeviceAttribute{StringValue: &p}
			}
		}
	}
	cases := []struct {
		name   string
		change func(c *Cluster)
		fields []string
	}{
		{"as declared", func(*Cluster) {}, nil},
		{"a GPU's product changed", onNode("h100-0", product("NVIDIA H200")),
			[]string{"spec.nodePools[h100].gpu.attributes.productName", "spec.nodePools[h100].gpu.selectors[0]"}},
		{"fewer devices, less memory", onNode("l4-1", func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices = append(s.Spec.Devices, s.Spec.Devices[0])
			for i := range s.Spec.Devices {
				s.Spec.Devices[i].Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("16Gi")}}
			}
		}), []string{"spec.nodePools[l4].gpu.memoryMiB", "spec.nodePools[l4].gpu.perNode"}},
		{"an H100 under 80 GB fails the memory selector", onNode("h100-1", func(s *resourcev1.ResourceSlice) {
			for i := range s.Spec.Devices {
				s.Spec.Devices[i].Capacity = map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("40Gi")}}
			}
		}), []string{"spec.nodePools[h100].gpu.memoryMiB", "spec.nodePools[h100].gpu.selectors[1]"}},
		{"a node's slice gone", func(c *Cluster) {
			reslice(c, func(s *resourcev1.ResourceSlice) bool { return *s.Spec.NodeName != "l4-2" })
		}, []string{"spec.nodePools[cpu].nodes.count", "spec.nodePools[cpu].taints", "spec.nodePools[l4].gpu.deviceClassName"}},
		{"the DeviceClass deleted", func(c *Cluster) { c.DeviceClasses = nil },
			[]string{"spec.nodePools[h100].gpu.deviceClassName", "spec.nodePools[l4].gpu.deviceClassName"}},
		{"the class picks only type gpu, which the devices lack", func(c *Cluster) {
			c.DeviceClasses = nil
			classes := discovertest.NVIDIAClasses()
			c.DeviceClasses = append(c.DeviceClasses, ClassOf(&classes[0]))
		}, []string{"spec.nodePools[h100].gpu.deviceClassName", "spec.nodePools[l4].gpu.deviceClassName"}},
		// Without slices, the GPU nodes look like CPU nodes, as nodes that
		// stopped allocating nvidia.com/gpu do.
		{"no resource.k8s.io/v1", func(c *Cluster) { c.DRA, c.DeviceClasses, c.ResourceSlices = false, nil, nil },
			[]string{"spec.nodePools[cpu].nodes.count", "spec.nodePools[cpu].taints", "spec.nodePools[h100].gpu.deviceClassName", "spec.nodePools[l4].gpu.deviceClassName"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			caps, c := discovertest.Example(t, file)
			tc.change(c)
			var fields []string
			for _, d := range Compare(caps, c) {
				fields = append(fields, d.Field)
				require.NotEmpty(t, d.Message)
				require.Contains(t, []string{"h100", "l4", "cpu"}, d.Pool)
			}
			require.Equal(t, tc.fields, fields)
		})
	}

	caps, c := discovertest.Example(t, file)
	onNode("h100-0", product("NVIDIA H200"))(c)
	diffs := Compare(caps, c)
	require.Equal(t, Difference{
		Field: "spec.nodePools[h100].gpu.attributes.productName", Declared: "NVIDIA H100 80GB HBM3",
		Live:    "NVIDIA H100 80GB HBM3 on h100-1; NVIDIA H200 on h100-0",
		Message: `pool "h100": the devices' attribute productName differs from the file's NVIDIA H100 80GB HBM3: NVIDIA H100 80GB HBM3 on h100-1; NVIDIA H200 on h100-0`,
		Pool:    "h100",
	}, diffs[0])
	require.Equal(t, `pool "h100": selector device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3" picks no device of DeviceClass gpu.nvidia.com on some nodes, where the pool's pods would stay Pending (devices picked: 0 on h100-0; 8 on h100-1)`, diffs[1].Message)
}

// TestCompareExtendedResource: a pool whose pods request the GPU resource
// from a DeviceClass (`extendedResource`) differs from a cluster whose
// class serves no such resource, where its pods would stay Pending, and
// matches one whose class does.
func TestCompareExtendedResource(t *testing.T) {
	caps, c := discovertest.Example(t, "../examples/capabilities/dra-h100.yaml")
	for i := range caps.Spec.NodePools {
		if g := caps.Spec.NodePools[i].GPU; g != nil && g.DeviceClassName != "" {
			g.ExtendedResource, g.Selectors = true, nil
		}
	}
	var fields []string
	for _, d := range Compare(caps, c) {
		fields = append(fields, d.Field)
	}
	require.Contains(t, fields, "spec.nodePools[h100].gpu.extendedResource")
	for i := range c.DeviceClasses {
		c.DeviceClasses[i].ExtendedResource = "nvidia.com/gpu"
	}
	for _, d := range Compare(caps, c) {
		require.NotContains(t, d.Field, "extendedResource", d.Message)
	}
}
