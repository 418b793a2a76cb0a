package discover_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
)

// benchCluster is a large cluster: n nodes in ten AKS pools (eight GPU
// pools of two products and counts, two CPU pools), KAITO and Dynamo, and
// the capability file discovered from it.
func benchCluster(n int) (*discover.Cluster, *hub.ClusterCapabilities) {
	c := &discover.Cluster{}
	gpuTaint := Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule)
	for i := range n {
		pool := i % 10
		labels := KV{"kubernetes.azure.com/agentpool": fmt.Sprintf("pool%d", pool)}
		switch {
		case pool < 4:
			c.Nodes = append(c.Nodes, Node(fmt.Sprintf("n%d", i), With(labels, GFD(fmt.Sprintf("NVIDIA-H100-80GB-HBM3-%d", pool), "81559", "8")), KV{"nvidia.com/gpu": "8"}, gpuTaint))
		case pool < 8:
			c.Nodes = append(c.Nodes, Node(fmt.Sprintf("n%d", i), With(labels, GFD(fmt.Sprintf("NVIDIA-L4-%d", pool), "23034", "1")), KV{"nvidia.com/gpu": "1"}, gpuTaint))
		default:
			c.Nodes = append(c.Nodes, Node(fmt.Sprintf("n%d", i), labels, nil))
		}
	}
	c.CRDs = append(GatewayCRDs("v1.5.1", "standard"), CRD("workspaces.kaito.sh", nil), CRD("dynamographdeployments.nvidia.com", nil))
	c.Deployments = []appsv1.Deployment{
		Deployment("kaito-workspace", "kaito-workspace", nil, OperatorImages[hub.ProviderKAITO]+"0.10.0"),
		Deployment("dynamo-system", "dynamo-operator", nil, OperatorImages[hub.ProviderDynamo]+"1.1.1"),
	}
	caps, _ := discover.Discover(c, "bench")
	return c, caps
}

// BenchmarkCompare is what the status reporter spends on every change of
// a Node, CRD or Deployment: the applied file against the whole cluster.
// BenchmarkDiscover is `capabilities discover` once the lists are read.
func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		c, caps := benchCluster(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				if diffs := discover.Compare(caps, c); len(diffs) != 0 {
					b.Fatal(diffs)
				}
			}
		})
	}
}

func BenchmarkDiscover(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		c, _ := benchCluster(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				discover.Discover(c, "bench")
			}
		})
	}
}

// BenchmarkRefuseHostile is discover and Encode on a cluster of 10,000
// single-node pools, which Encode refuses (TestRefusesAFileTheRendererRefuses):
// the time a hostile labelling of Nodes costs before the refusal.
func BenchmarkRefuseHostile(b *testing.B) {
	c, _ := benchCluster(100)
	for i := range 10000 {
		c.Nodes = append(c.Nodes, Node(fmt.Sprintf("tenant-%05d", i), KV{"karpenter.sh/nodepool": fmt.Sprintf("tenant-pool-%05d", i)},
			nil, Taint(fmt.Sprintf("tenant.example.com/t%05d", i), "x", corev1.TaintEffectNoSchedule)))
	}
	for b.Loop() {
		caps, notes := discover.Discover(c, "hostile")
		if out, err := capsfile.Encode(caps, notes, "discovered"); err == nil || len(out) != 0 {
			b.Fatalf("not refused: %d bytes, %v", len(out), err)
		}
	}
}
