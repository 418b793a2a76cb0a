package capsfile_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from this run")

// TestMerge updates the prod example after a season of changes in its
// cluster — KAITO downgraded, Dynamo uninstalled, KubeRay installed, the L4
// nodes replaced by two-GPU ones, the A100 pool gone, an H100 pool added —
// and holds the result and the changes listed to a golden file. The
// comments, the names, the prices and the layout stay; merging again
// changes nothing.
func TestMerge(t *testing.T) {
	const file = "../../examples/kustomize/clusters/prod/capabilities.yaml"
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	declared, c := Example(t, file)

	var nodes []corev1.Node
	for _, n := range c.Nodes {
		switch n.Labels["render.airunway.ai/node-pool"] {
		case "a100":
			continue
		case "l4":
			n.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("2")
		}
		nodes = append(nodes, n)
	}
	for i := range 2 {
		nodes = append(nodes, Node(fmt.Sprintf("h100-%d", i), With(KV{"kubernetes.azure.com/agentpool": "gpuh100"}, GFD("NVIDIA-H100-80GB-HBM3", "81559", "8")),
			KV{"nvidia.com/gpu": "8"}, Taint("sku", "gpu", corev1.TaintEffectNoSchedule)))
	}
	c.Nodes = nodes
	c.CRDs = append(c.CRDs[:0:0], CRD("workspaces.kaito.sh", nil), CRD("rayservices.ray.io", nil))
	c.Deployments[1].Spec.Template.Spec.Containers[0].Image = "mcr.microsoft.com/aks/kaito/workspace:0.11.0"
	c.Deployments = append(c.Deployments, Deployment("ray-system", "kuberay-operator", nil, "quay.io/kuberay/operator:v1.4.2"))

	mergeGolden(t, text, declared, c, "merge-prod.golden")
}

// mergeGolden merges the cluster c into the file text that declared,
// holds the merged file and its change notes to golden, and checks the
// merged file: it decodes and resolves, differs in nothing from c, and a
// second merge changes nothing.
func mergeGolden(t *testing.T, text []byte, declared *hub.ClusterCapabilities, c *discover.Cluster, golden string) {
	t.Helper()
	merged, changes, err := capsfile.Merge(text, declared, c)
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString(string(merged))
	b.WriteString("---\n# changes:\n")
	for _, ch := range changes {
		fmt.Fprintf(&b, "# %s: %s\n", ch.Field, ch.Text)
	}
	Golden(t, golden, []byte(b.String()), *update)

	again, problems := capabilities.Decode(merged)
	require.False(t, problems.HasErrors(), "%v", problems)
	_, problems = capabilities.Resolve(again)
	require.False(t, problems.HasErrors(), "%v", problems)
	require.Empty(t, discover.Compare(again, c), "a merged file has no differences from its cluster")
	twice, changes, err := capsfile.Merge(merged, again, c)
	require.NoError(t, err)
	require.Empty(t, changes)
	require.Equal(t, string(merged), string(twice))
}

// TestMergeNamesTheOldValue: every change note says what the file had,
// "<unset>" when it had nothing (issue 35: `nodes.count: → 1`), for the
// node count, the GPU facts, the capacity and the parent Gateway.
func TestMergeNamesTheOldValue(t *testing.T) {
	const text = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: l4only
spec:
  providers:
  - name: vllm
  gateway:
    inferencePoolVersion: inference.networking.k8s.io/v1
    gatewayAPIVersion: v1.5.1
  nodePools:
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
    gpu: {resourceName: nvidia.com/gpu, perNode: 1}
  - name: spare
    selector: {pool: spare}
    nodes: {count: 4}
`
	declared, problems := capabilities.Decode([]byte(text))
	require.False(t, problems.HasErrors(), "%v", problems)
	c := &discover.Cluster{
		Nodes: []corev1.Node{
			Node("l4-0", GFD("NVIDIA-L4", "23034", "1"), KV{"nvidia.com/gpu": "1"}),
			Node("spare-0", KV{"pool": "spare"}, nil),
		},
		CRDs: append(GatewayCRDs("v1.5.1", "standard"),
			CRD("inferencepools.inference.networking.k8s.io", KV{"inference.networking.k8s.io/bundle-version": "v1.5.0"})),
		Gateways: []metav1.PartialObjectMetadata{Gateway("gateway-system", "inference-gateway")},
	}
	_, changes, err := capsfile.Merge([]byte(text), declared, c)
	require.NoError(t, err)
	notes := map[string]string{}
	for _, ch := range changes {
		notes[ch.Field] = ch.Text
	}
	for field, want := range map[string]string{
		"spec.gateway.parentRef":            "<unset> → gateway-system/inference-gateway",
		"spec.nodePools[l4].nodes.count":    "<unset> → 1",
		"spec.nodePools[l4].gpu.product":    "<unset> → NVIDIA-L4",
		"spec.nodePools[l4].gpu.memoryMiB":  "<unset> → 23034",
		"spec.nodePools[l4].capacity":       "<unset> → cpu 16, memory 64Gi (the least a node allocates)",
		"spec.nodePools[spare].nodes.count": "4 → 1",
		"spec.nodePools[spare].capacity":    "<unset> → cpu 16, memory 64Gi (the least a node allocates)",
	} {
		require.Equal(t, want, notes[field], "%s (all notes: %v)", field, notes)
	}
}

// TestMergeDRA updates the DRA example after its cluster changed: the
// GPU driver upgraded (the devices now publish driverVersion), the H100
// nodes offer four GPUs each, and the L4 nodes went back to the device
// plugin. The H100 pool's attributes and perNode follow, its selectors
// and comments stay; the L4 pool loses its DRA fields. Merging again
// changes nothing.
func TestMergeDRA(t *testing.T) {
	const file = "../../examples/capabilities/dra-h100.yaml"
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	declared, c := Example(t, file)

	kept := c.ResourceSlices[:0]
	for _, s := range c.ResourceSlices {
		if strings.HasPrefix(s.Node, "h100-") {
			h := GPUSlice(s.Node, 4, GPU{Product: "NVIDIA H100 80GB HBM3", Architecture: "Hopper", CUDAComputeCapability: "9.0.0", DriverVersion: "580.95.5", MemoryMiB: 81559})
			compact, err := discover.SliceOf(&h)
			require.NoError(t, err)
			kept = append(kept, compact)
		}
	}
	c.ResourceSlices = kept
	c.DeviceClasses = nil
	classes := NVIDIAClasses()
	for i := range classes {
		c.DeviceClasses = append(c.DeviceClasses, discover.ClassOf(&classes[i]))
	}
	for i := range c.Nodes {
		if strings.HasPrefix(c.Nodes[i].Name, "l4-") {
			c.Nodes[i].Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("1")
		}
	}

	mergeGolden(t, text, declared, c, "merge-dra.golden")
}
