package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/discover"
	"github.com/airunway-render/airunway-render/discover/capsfile"
	"github.com/airunway-render/airunway-render/discover/discovertest"
)

// TestDiscoverFailsClosed: every way `capabilities discover` cannot do its
// job exits 1, says why on stderr, and prints nothing. (On a cluster:
// test/twin's TestDiscoverRoundTrip.)
func TestDiscoverFailsClosed(t *testing.T) {
	dir := t.TempDir()
	// A kubeconfig whose API server refuses connections: port 1 on
	// loopback, so nothing leaves the machine.
	unreachable := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: twin, context: {cluster: c, user: u}}]
current-context: twin
`), 0o600))
	badCaps := filepath.Join(dir, "caps.yaml")
	require.NoError(t, os.WriteFile(badCaps, []byte("apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: x}\nspec:\n  nodePools:\n  - name: l4\n    gpu: {perNode: -1}\n"), 0o644))
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", dir) // no ~/.kube/config

	cases := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"a kubeconfig that does not exist", []string{"--kubeconfig", filepath.Join(dir, "missing")}, "loading the kubeconfig"},
		{"an unknown context", []string{"--kubeconfig", unreachable, "--context", "prod"}, `context "prod" does not exist`},
		{"an API server that does not answer", []string{"--kubeconfig", unreachable}, `reading the cluster (context "twin")`},
		{"a capability file the renderer refuses", []string{"--kubeconfig", unreachable, "--merge", badCaps}, "spec.nodePools[0].gpu.perNode"},
		{"a capability file that is not there", []string{"--kubeconfig", unreachable, "--merge", filepath.Join(dir, "none.yaml")}, "cannot read the capability file"},
		{"an argument", []string{"--kubeconfig", unreachable, "extra"}, "extra"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", append([]string{"capabilities", "discover"}, tc.args...)...)
			require.NotZero(t, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.stderr)
		})
	}
}

func TestDNSName(t *testing.T) {
	for in, want := range map[string]string{
		"arn:aws:eks:us-east-1:123456789012:cluster/prod-gpu": "prod-gpu",
		"admin@aks-eastus":                 "aks-eastus",
		"gke_proj_us-central1_Dev_Cluster": "gke-proj-us-central1-dev-cluster",
		"kind-kind":                        "kind-kind",
	} {
		require.Equal(t, want, dnsName(in), in)
	}
}

// discoverCluster is the prod example's cluster, served by a fake API
// server, plus extra nodes.
func discoverCluster(t *testing.T, extra ...corev1.Node) (*discover.Cluster, *discovertest.APIServer) {
	t.Helper()
	_, c := discovertest.Example(t, "../examples/kustomize/clusters/prod/capabilities.yaml")
	c.Nodes = append(c.Nodes, extra...)
	return c, discovertest.Serve(t, discovertest.ClusterLists(t, c))
}

// A cluster of ordinary nodes discovers to what the library writes for
// it, byte for byte (discover's goldens hold those bytes).
func TestDiscoverFromAnAPIServer(t *testing.T) {
	c, s := discoverCluster(t)
	stdout, stderr, code := run(t, "", "capabilities", "discover", "--kubeconfig", s.Kubeconfig)
	require.Zero(t, code, stderr)
	caps, notes := discover.Discover(c, "fake")
	want, err := capsfile.Encode(caps, notes, "Discovered by `airunway-render capabilities discover` from context \"fake\".\nRead the comments, name the pools, add prices; --merge keeps them when you discover again.")
	require.NoError(t, err)
	require.Equal(t, string(want), stdout)
}

// Thousands of nodes with a node-pool label value and a taint each (as
// whoever may label or taint Nodes can make them) would make a capability
// file the renderer refuses to read: discover writes nothing and says why,
// with or without --merge; --node-selector reads the nodes the renderer
// places on.
func TestDiscoverRefusesAFileTheRendererRefuses(t *testing.T) {
	var hostile []corev1.Node
	for i := range 5000 {
		hostile = append(hostile, discovertest.Node(fmt.Sprintf("tenant-%05d", i), discovertest.KV{"karpenter.sh/nodepool": fmt.Sprintf("tenant-pool-%05d", i)},
			nil, discovertest.Taint(fmt.Sprintf("tenant.example.com/t%05d", i), "x", corev1.TaintEffectNoSchedule)))
	}
	c, s := discoverCluster(t, hostile...)

	stdout, stderr, code := run(t, "", "capabilities", "discover", "--kubeconfig", s.Kubeconfig)
	require.Equal(t, 1, code)
	require.Empty(t, stdout, "nothing is written")
	require.Contains(t, stderr, "[error] the capability file would be ")
	require.Contains(t, stderr, fmt.Sprintf("the renderer reads a capability file of at most 1 MiB: the cluster's %d node(s) make ", len(c.Nodes)))
	require.Contains(t, stderr, "one per distinct node-pool label value, GPU shape and set of taints; nothing was written. Give the nodes of each pool one node-pool label value")
	require.Contains(t, stderr, "or read only the nodes the renderer places on (`--node-selector LABELS`)")

	stdout, stderr, code = run(t, "", "capabilities", "discover", "--kubeconfig", s.Kubeconfig, "--merge", "../examples/kustomize/clusters/prod/capabilities.yaml")
	require.Equal(t, 1, code)
	require.Empty(t, stdout, "nothing is written")
	require.Contains(t, stderr, "[error] merging into ../examples/kustomize/clusters/prod/capabilities.yaml: the capability file would be ")
	require.NotContains(t, stderr, "--node-selector", "a merge cannot take it")

	stdout, stderr, code = run(t, "", "capabilities", "discover", "--kubeconfig", s.Kubeconfig, "--node-selector", "!karpenter.sh/nodepool")
	require.Zero(t, code, stderr)
	_, ordinary := discoverCluster(t)
	want, _, _ := run(t, "", "capabilities", "discover", "--kubeconfig", ordinary.Kubeconfig)
	require.Equal(t, want, stdout, "the nodes of the example, as without the hostile ones")
}

func TestDiscoverNodeSelectorMistakes(t *testing.T) {
	_, s := discoverCluster(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--node-selector", "a=b", "--merge", "../examples/kustomize/clusters/prod/capabilities.yaml"}, "`--node-selector` must not be combined with `--merge`"},
		{[]string{"--node-selector", "a==b=c"}, "`--node-selector` is \"a==b=c\": "},
	} {
		stdout, stderr, code := run(t, "", append([]string{"capabilities", "discover", "--kubeconfig", s.Kubeconfig}, tc.args...)...)
		require.Equal(t, 1, code)
		require.Empty(t, stdout)
		require.Contains(t, stderr, tc.want)
		require.Zero(t, s.Requests(discovertest.NodesPath), "refused before reading the cluster")
	}
}
