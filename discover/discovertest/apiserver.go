package discovertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/airunway-render/airunway-render/discover"
)

// The paths discover.Read lists, and the kind of each list's items.
const (
	NodesPath       = "/api/v1/nodes"
	DeploymentsPath = "/apis/apps/v1/deployments"
	CRDsPath        = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	GatewaysPath    = "/apis/gateway.networking.k8s.io/v1/gateways"
	APIServicesPath = "/apis/apiregistration.k8s.io/v1/apiservices"
	// DRA's lists: served only when a test gives them, as a cluster
	// before Kubernetes 1.34 serves neither.
	DeviceClassesPath  = "/apis/resource.k8s.io/v1/deviceclasses"
	ResourceSlicesPath = "/apis/resource.k8s.io/v1/resourceslices"
)

// metadataPaths are the lists discover.Read reads as metadata only: the
// API server answers them as PartialObjectMetadataLists.
var metadataPaths = map[string]bool{CRDsPath: true, GatewaysPath: true, APIServicesPath: true}

var itemKinds = map[string][2]string{
	NodesPath:          {"v1", "Node"},
	DeploymentsPath:    {"apps/v1", "Deployment"},
	DeviceClassesPath:  {"resource.k8s.io/v1", "DeviceClass"},
	ResourceSlicesPath: {"resource.k8s.io/v1", "ResourceSlice"},
}

// Add appends objects to a list, as the API server lists them.
func (l Lists) Add(t testing.TB, path string, objs ...any) {
	t.Helper()
	for _, obj := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		require.NoError(t, err)
		l[path] = append(l[path], u)
	}
}

// Generated is a list of N items made on request, page by page, for lists
// too large to hold in a test: Item(i) is the i-th.
type Generated struct {
	N    int
	Item func(i int) map[string]any
}

// Lists are the objects an APIServer serves, as JSON objects, by path: a
// test may write into them what no typed object can hold (a quantity
// resource.MustParse would take minutes over).
type Lists map[string][]map[string]any

// ClusterLists are c's objects as the API server lists them.
func ClusterLists(t testing.TB, c *discover.Cluster) Lists {
	t.Helper()
	lists := Lists{}
	add := func(path string, obj any) {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		require.NoError(t, err)
		lists[path] = append(lists[path], u)
	}
	for i := range c.Nodes {
		add(NodesPath, &c.Nodes[i])
	}
	for i := range c.Deployments {
		add(DeploymentsPath, &c.Deployments[i])
	}
	for i := range c.CRDs {
		add(CRDsPath, &c.CRDs[i])
	}
	for i := range c.Gateways {
		add(GatewaysPath, &c.Gateways[i])
	}
	for i := range c.APIServices {
		add(APIServicesPath, &c.APIServices[i])
	}
	return lists
}

// APIServer is a fake Kubernetes API server on loopback that answers the
// lists discover.Read makes, in pages as the `limit` and `continue`
// parameters ask, as the real one does; Requests counts the requests per
// path.
type APIServer struct {
	// Kubeconfig is a kubeconfig file whose current context, "fake",
	// points at the server.
	Kubeconfig string
	mu         sync.Mutex
	requests   map[string]int
	generated  map[string]Generated
}

// ServeGenerated is Serve with lists made on request, by path.
func ServeGenerated(t testing.TB, lists Lists, generated map[string]Generated) *APIServer {
	t.Helper()
	return serve(t, lists, generated)
}

// Requests is how many requests the server answered for path.
func (s *APIServer) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// Serve starts an APIServer for lists, stopped when the test ends.
func Serve(t testing.TB, lists Lists) *APIServer {
	t.Helper()
	return serve(t, lists, nil)
}

func serve(t testing.TB, lists Lists, generated map[string]Generated) *APIServer {
	t.Helper()
	s := &APIServer{requests: map[string]int{}, generated: generated}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		s.mu.Unlock()
		if g, ok := s.generated[r.URL.Path]; ok {
			start, _ := strconv.Atoi(r.URL.Query().Get("continue"))
			limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
			end := g.N
			if limit > 0 {
				end = min(end, start+limit)
			}
			var page []map[string]any
			for i := start; i < end; i++ {
				page = append(page, g.Item(i))
			}
			next := ""
			if end < g.N {
				next = strconv.Itoa(end)
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(listOf(r.URL.Path, page, next))
			return
		}
		items, ok := lists[r.URL.Path]
		if !ok && metadataPaths[r.URL.Path] || r.URL.Path == NodesPath || r.URL.Path == DeploymentsPath {
			ok = true // an empty list
		}
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		items, err := selected(items, r.URL.Query().Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		page, next := pageOf(items, r.URL.Query().Get("limit"), r.URL.Query().Get("continue"))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(listOf(r.URL.Path, page, next))
	}))
	t.Cleanup(srv.Close)
	s.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(s.Kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "`+srv.URL+`"}}]
users: [{name: fake, user: {token: fake}}]
contexts: [{name: fake, context: {cluster: fake, user: fake}}]
current-context: fake
`), 0o600))
	return s
}

// selected are the items whose labels the label selector picks.
func selected(items []map[string]any, selector string) ([]map[string]any, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, item := range items {
		l, _, _ := unstructured.NestedStringMap(item, "metadata", "labels")
		if sel.Matches(labels.Set(l)) {
			out = append(out, item)
		}
	}
	return out, nil
}

// pageOf is the page of items from offset `continue`, `limit` long (all
// of them without one), and the continue token of the next page.
func pageOf(items []map[string]any, limit, from string) ([]map[string]any, string) {
	start, _ := strconv.Atoi(from)
	start = min(start, len(items))
	end := len(items)
	if n, err := strconv.Atoi(limit); err == nil && n > 0 {
		end = min(end, start+n)
	}
	next := ""
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return items[start:end], next
}

func listOf(path string, items []map[string]any, next string) map[string]any {
	apiVersion, kind := "meta.k8s.io/v1", "PartialObjectMetadata"
	if k, ok := itemKinds[path]; ok {
		apiVersion, kind = k[0], k[1]
	}
	out := make([]any, len(items))
	for i, item := range items {
		withKind := map[string]any{"apiVersion": apiVersion, "kind": kind}
		for k, v := range item {
			if k != "apiVersion" && k != "kind" {
				withKind[k] = v
			}
		}
		out[i] = withKind
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind + "List", "metadata": map[string]any{"continue": next}, "items": out}
}
