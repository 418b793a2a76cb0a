package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// For a capability file with DRA pools, `capabilities nodes` prints the
// Nodes (without GPU capacity on the DRA pools' nodes), then one
// DeviceClass per deviceClassName, then one ResourceSlice per node of a
// DRA pool.
func TestCapabilitiesNodesDRA(t *testing.T) {
	out, stderr, code := run(t, "", "capabilities", "nodes", "-f", "../examples/capabilities/dra-h100.yaml") // h100: 2, l4: 4, cpu: 3
	require.Equal(t, 0, code, stderr)
	docs := items(t, out)
	var kinds []string
	for _, d := range docs {
		kinds = append(kinds, d.GetKind())
	}
	require.Equal(t, []string{"Node", "Node", "Node", "Node", "Node", "Node", "Node", "Node", "Node", "DeviceClass",
		"ResourceSlice", "ResourceSlice", "ResourceSlice", "ResourceSlice", "ResourceSlice", "ResourceSlice"}, kinds)
	gpu, err := docs[0].Pipe(yaml.Lookup("status", "allocatable", "nvidia.com/gpu"))
	require.NoError(t, err)
	require.Nil(t, gpu, "a DRA node has no GPU extended resource")
	require.Equal(t, "gpu.nvidia.com", docs[9].GetName())
	require.Equal(t, "h100-0-gpu.nvidia.com", docs[10].GetName())
	for _, path := range [][]string{{"status"}, {"metadata", "creationTimestamp"}} {
		n, err := docs[10].Pipe(yaml.Lookup(path...))
		require.NoError(t, err)
		require.Nil(t, n, "%v", path)
	}
}
