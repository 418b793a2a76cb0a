package discover_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/discover"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
)

// read reads the cluster s serves, in fuzzcheck's time bound, without
// client-go's rate limit.
func read(t *testing.T, s *APIServer) (*discover.Cluster, error) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	require.NoError(t, err)
	cfg.QPS = -1
	var c *discover.Cluster
	fuzzcheck.Bounded(t, func() error {
		c, err = discover.Read(context.Background(), cfg)
		return nil
	})
	return c, err
}

// Read lists page by page and reads back the cluster it was served.
func TestReadPages(t *testing.T) {
	_, c := Example(t, "../examples/kustomize/clusters/prod/capabilities.yaml")
	for i := range 1200 {
		c.Nodes = append(c.Nodes, Node(fmt.Sprintf("cpu-%04d", i), KV{"kubernetes.azure.com/agentpool": "system"}, nil))
	}
	s := Serve(t, ClusterLists(t, c))
	got, err := read(t, s)
	require.NoError(t, err)
	require.Len(t, got.Nodes, len(c.Nodes))
	require.Equal(t, (len(c.Nodes)+499)/500, s.Requests(NodesPath), "pages of 500")
	c.Sort()
	got.Sort()
	want, _ := discover.Discover(c, "prod")
	found, _ := discover.Discover(got, "prod")
	require.Equal(t, want, found)
}

// A Node's allocatable is its kubelet's to write: a hostile quantity is
// refused before the converter parses it (1E-1000000000 would take it
// more than ten minutes) and before discover compares it (1e1000000000).
func TestReadRefusesHostileQuantities(t *testing.T) {
	for resourceName, tc := range map[string]struct{ quantity, want string }{
		"cpu":            {"1e1000000000", "`status.allocatable.cpu`: \"1e1000000000\" has the exponent 1000000000; a quantity's exponent must be between -99 and 99"},
		"memory":         {"1E-1000000000", "`status.allocatable.memory`: \"1E-1000000000\" has the exponent -1000000000"},
		"nvidia.com/gpu": {"9223372036854775808", "`status.allocatable.nvidia.com/gpu`: \"9223372036854775808\" is out of range"},
	} {
		t.Run(resourceName, func(t *testing.T) {
			_, c := Example(t, "../examples/kustomize/clusters/prod/capabilities.yaml")
			lists := ClusterLists(t, c)
			status := lists[NodesPath][0]["status"].(map[string]any)
			status["allocatable"].(map[string]any)[resourceName] = tc.quantity
			_, err := read(t, Serve(t, lists))
			require.ErrorContains(t, err, fmt.Sprintf("reading nodes %q: %s", c.Nodes[0].Name, tc.want))
		})
	}
}

// A list longer than any real cluster's is refused, page by page, before
// it is all read.
func TestReadRefusesEndlessLists(t *testing.T) {
	_, c := Example(t, "../examples/kustomize/clusters/prod/capabilities.yaml")
	lists := ClusterLists(t, c)
	crd := lists[CRDsPath][0]
	for i := range discover.MaxListItems + 1 - len(lists[CRDsPath]) {
		lists[CRDsPath] = append(lists[CRDsPath], map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("x%d.example.com", i)}})
	}
	lists[CRDsPath][0] = crd
	s := Serve(t, lists)
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	require.NoError(t, err)
	cfg.QPS = -1
	_, err = discover.Read(context.Background(), cfg) // seconds: 301 pages
	require.ErrorContains(t, err, "listing customresourcedefinitions.apiextensions.k8s.io: the cluster has more than 150000 of them; discover reads at most 150000 of a kind (Kubernetes' scalability thresholds: 5,000 nodes, 150,000 pods)")
	require.Equal(t, discover.MaxListItems/500+1, s.Requests(CRDsPath))
}

// Read lists DeviceClasses and ResourceSlices where resource.k8s.io/v1 is
// served, and discovers from them what the same objects give in memory.
func TestReadDRA(t *testing.T) {
	_, c := Example(t, "../examples/kustomize/clusters/prod/capabilities.yaml")
	lists := ClusterLists(t, c)
	classes := NVIDIAClasses()
	slices := []resourcev1.ResourceSlice{GPUSlice("h100-0", 8, H100), GPUSlice("h100-1", 8, H100)}
	for i := range classes {
		lists.Add(t, DeviceClassesPath, &classes[i])
	}
	for i := range slices {
		lists.Add(t, ResourceSlicesPath, &slices[i])
	}
	for _, name := range []string{"h100-0", "h100-1"} {
		c.Nodes = append(c.Nodes, Node(name, KV{"karpenter.sh/nodepool": "h100"}, nil))
		lists.Add(t, NodesPath, &c.Nodes[len(c.Nodes)-1])
	}
	got, err := read(t, Serve(t, lists))
	require.NoError(t, err)
	require.True(t, got.DRA)
	require.Len(t, got.ResourceSlices, 2)
	c.DeviceClasses, c.ResourceSlices = nil, nil
	WithDRA(t, c, classes, slices...)
	want, _ := discover.Discover(c, "prod")
	found, _ := discover.Discover(got, "prod")
	require.Equal(t, want, found)
	i := poolIndex(found.Spec.NodePools, "h100")
	require.Equal(t, "gpu.nvidia.com", found.Spec.NodePools[i].GPU.DeviceClassName)
	require.Equal(t, int32(8), found.Spec.NodePools[i].GPU.PerNode)

	// A cluster without resource.k8s.io/v1 answers 404: no DRA, no error.
	delete(lists, DeviceClassesPath)
	delete(lists, ResourceSlicesPath)
	got, err = read(t, Serve(t, lists))
	require.NoError(t, err)
	require.False(t, got.DRA)
}

func poolIndex(pools []hub.NodePool, name string) int {
	for i := range pools {
		if pools[i].Name == name {
			return i
		}
	}
	return -1
}
