package discover_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

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
// and pools. (How long that takes is BenchmarkRefuseHostile's to
// measure: finding each pool's selector and its notes once scanned every
// node and every pool, a minute for these 10,000 nodes.)
func TestRefusesAFileTheRendererRefuses(t *testing.T) {
	c := hostileCluster(t, 10000)
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

	// Fewer such nodes make a file the renderer reads.
	c = hostileCluster(t, 500)
	caps, notes = discover.Discover(c, "hostile")
	_, err = capsfile.Encode(caps, notes, "discovered")
	require.NoError(t, err)
}

// gpuSliceItem is the i-th of many ResourceSlices as the API server lists
// them: 128 devices (the API server's most), each with attrs attributes
// whose values value(i, device, attribute) makes, plus NVIDIA's uuid.
func gpuSliceItem(i, attrs int, value func(i, d, a int) string) map[string]any {
	devices := make([]any, 128)
	for d := range devices {
		attributes := map[string]any{
			"type": map[string]any{"string": "gpu"}, "productName": map[string]any{"string": "NVIDIA H100 80GB HBM3"},
			"uuid": map[string]any{"string": fmt.Sprintf("GPU-%08d-%03d", i, d)},
		}
		for a := range attrs {
			attributes[fmt.Sprintf("a%d", a)] = map[string]any{"string": value(i, d, a)}
		}
		devices[d] = map[string]any{"name": fmt.Sprintf("gpu-%d", d), "attributes": attributes, "capacity": map[string]any{"memory": map[string]any{"value": "81559Mi"}}}
	}
	node := fmt.Sprintf("node-%05d", i)
	return map[string]any{
		"metadata": map[string]any{"name": node + "-gpu.nvidia.com"},
		"spec":     map[string]any{"driver": "gpu.nvidia.com", "nodeName": node, "pool": map[string]any{"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices},
	}
}

// draServer serves the prod example's cluster, NVIDIA's DeviceClasses and
// n generated ResourceSlices.
func draServer(t testing.TB, n int, item func(i int) map[string]any) *APIServer {
	_, c := Example(t, prodFile)
	lists := ClusterLists(t, c)
	for _, dc := range NVIDIAClasses() {
		lists.Add(t, DeviceClassesPath, &dc)
	}
	return ServeGenerated(t, lists, map[string]Generated{ResourceSlicesPath: {N: n, Item: item}})
}

// heapPeak runs f while sampling the heap, and returns the most it held
// above what it held before.
func heapPeak(f func()) uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base, peak := m.HeapInuse, m.HeapInuse
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return peak - base
}

// Many ResourceSlices of 128 GPUs each, as drivers could publish them:
// the GPUs of a kind are kept once (their uuid aside), so reading them
// holds a page at a time, not every device. 200 slices (25,600 devices)
// are 8 pages of 25, enough to prove the paging and the compaction: the
// heap peak (the fake server's page included, as it serves in this
// process) measured 22-29 MiB reading 25 slices, 32-41 MiB reading 200
// (15 runs) and 33 MiB reading 2,000, so it does not grow with the slices.
// Reading the 200 at once instead (one unpaged list, every slice decoded
// and kept) peaked at 193-213 MiB and held 76-78 MiB after: the 64 MiB
// bound fails that and leaves about 1.5x the paged peak. The read takes
// about 2 s (2,000 slices took 15-28 s; 10,000 read in 112 s, the fake
// server's encoding and client-go's decoding most of it, with the heap at
// most 74 MiB above the start and 3 MiB after). The paging and the
// compaction are asserted here; the heap peak is measured by
// BenchmarkReadManyDevices.
func TestReadManyDevices(t *testing.T) {
	const slices = 200
	s := draServer(t, slices, func(i int) map[string]any {
		return gpuSliceItem(i, 4, func(i, d, a int) string { return fmt.Sprintf("value-%d", a) })
	})
	c, err := readAll(t, s)
	require.NoError(t, err)
	require.Len(t, c.ResourceSlices, slices)
	for _, rs := range c.ResourceSlices {
		require.Len(t, rs.Devices, 1)
		require.Equal(t, 128, rs.Devices[0].Count)
	}
	require.Equal(t, slices/25, s.Requests(ResourceSlicesPath), "pages of 25")
}

// BenchmarkReadManyDevices measures what TestReadManyDevices reads: the
// heap peak above the start (MiB/heap-peak), which a test must not
// assert (TestReadManyDevices failed at 87 MiB against a 64 MiB bound in a
// loaded make test, where the figures above were quiet runs').
func BenchmarkReadManyDevices(b *testing.B) {
	const slices = 200
	s := draServer(b, slices, func(i int) map[string]any {
		return gpuSliceItem(i, 4, func(i, d, a int) string { return fmt.Sprintf("value-%d", a) })
	})
	var peak uint64
	for b.Loop() {
		var err error
		peak = max(peak, heapPeak(func() { _, err = readAll(b, s) }))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "MiB/heap-peak")
}

// Devices that are each unlike any other, at the API server's limits
// (32 attributes of 64 characters), stop the read once what discover
// keeps of them passes DeviceBudget, a few pages in; an attribute past
// the API server's limits is refused, naming the slice.
func TestReadRefusesHostileDevices(t *testing.T) {
	long := strings.Repeat("x", 56)
	s := draServer(t, 10000, func(i int) map[string]any {
		return gpuSliceItem(i, 28, func(i, d, a int) string { return fmt.Sprintf("%s%08x", long, (i*128+d)*28+a) })
	})
	var err error
	start := time.Now()
	peak := heapPeak(func() { _, err = readAll(t, s) })
	require.ErrorContains(t, err, "the cluster's devices are more than discover keeps: their distinct attributes and capacities pass 32 MiB")
	require.Less(t, s.Requests(ResourceSlicesPath), 20, "it stops a few pages in")
	t.Logf("refused after %d pages in %s, heap peak %d MiB", s.Requests(ResourceSlicesPath), time.Since(start), peak>>20)
	require.Less(t, peak, uint64(384<<20))

	s = draServer(t, 3, func(i int) map[string]any {
		item := gpuSliceItem(i, 1, func(i, d, a int) string { return "ok" })
		if i == 2 {
			device := item["spec"].(map[string]any)["devices"].([]any)[5].(map[string]any)
			device["attributes"].(map[string]any)["productName"] = map[string]any{"string": strings.Repeat("H", 1<<20)}
		}
		return item
	})
	_, err = read(t, s)
	require.ErrorContains(t, err, `reading resourceslices.resource.k8s.io "node-00002-gpu.nvidia.com": device "gpu-5": attribute productName is 1048576 characters long; the API server accepts at most 64`)
}

// readAll reads the cluster s serves, without client-go's rate limit or
// fuzzcheck's time bound (a list of 10,000 slices takes seconds).
func readAll(t testing.TB, s *APIServer) (*discover.Cluster, error) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	require.NoError(t, err)
	cfg.QPS = -1
	return discover.Read(context.Background(), cfg)
}
