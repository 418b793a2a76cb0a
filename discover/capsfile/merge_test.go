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

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
)

var _ = flag.Bool("update", false, "rewrite testdata/*.golden from this run")

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

	merged, changes, err := capsfile.Merge(text, declared, c)
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString(string(merged))
	b.WriteString("---\n# changes:\n")
	for _, ch := range changes {
		fmt.Fprintf(&b, "# %s: %s\n", ch.Field, ch.Text)
	}
	Golden(t, "merge-prod.golden", []byte(b.String()))

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
