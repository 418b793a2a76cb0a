package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
