package discover_test

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
)

const prodFile = "../examples/kustomize/clusters/prod/capabilities.yaml"

// hostileCluster is the prod example's cluster plus n nodes that each
// carry a node-pool label value and a taint of their own, as whoever may
// label or taint Nodes can make them: a pool each.
func hostileCluster(t *testing.T, n int) *discover.Cluster {
	_, c := Example(t, prodFile)
	for i := range n {
		c.Nodes = append(c.Nodes, Node(fmt.Sprintf("tenant-%05d", i), KV{"karpenter.sh/nodepool": fmt.Sprintf("tenant-pool-%05d", i)},
			nil, Taint(fmt.Sprintf("tenant.example.com/t%05d", i), "x", corev1.TaintEffectNoSchedule)))
	}
	return c
}

// A cluster of thousands of single-node pools makes a file larger than
// the renderer reads: Encode and Merge refuse it, saying how many nodes
// and pools, in seconds (finding each pool's selector and its notes
// scanned every node and every pool: a minute for these 10,000 nodes).
func TestRefusesAFileTheRendererRefuses(t *testing.T) {
	c := hostileCluster(t, 10000)
	start := time.Now()
	caps, notes := discover.Discover(c, "hostile")
	out, err := capsfile.Encode(caps, notes, "discovered")
	require.Zero(t, len(out), "nothing is written")
	var tooLarge *capsfile.TooLargeError
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	require.Equal(t, len(c.Nodes), tooLarge.Nodes)
	require.Equal(t, len(caps.Spec.NodePools), tooLarge.Pools)
	require.Greater(t, tooLarge.Pools, 10000)
	require.Regexp(t, `^the capability file would be \d+(\.\d)? MiB \(\d+ bytes\); the renderer reads a capability file of at most 1 MiB: `+
		fmt.Sprintf(`the cluster's %d node\(s\) make %d node pools, one per distinct node-pool label value, GPU shape and set of taints; nothing was written\. `, len(c.Nodes), tooLarge.Pools)+
		`Give the nodes of each pool one node-pool label value \(render\.airunway\.ai/node-pool, or the cloud's\) and the same taints, or write the capability file by hand \(docs/capability-file\.md\)$`, err.Error())

	declared, _ := Example(t, prodFile)
	text, err := os.ReadFile(prodFile)
	require.NoError(t, err)
	merged, changes, err := capsfile.Merge(text, declared, c)
	require.Zero(t, len(merged), "nothing is written")
	require.Empty(t, changes)
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	require.Less(t, time.Since(start), 20*time.Second)

	// Fewer such nodes make a file the renderer reads.
	c = hostileCluster(t, 500)
	caps, notes = discover.Discover(c, "hostile")
	_, err = capsfile.Encode(caps, notes, "discovered")
	require.NoError(t, err)
}
