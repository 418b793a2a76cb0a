package discover

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/airunway-render/airunway-render/api/hub"
)

// Cluster is what discovery reads of a cluster: a snapshot, so that
// Discover and Compare are plain functions of it.
type Cluster struct {
	Nodes []corev1.Node
	// CRDs are the CustomResourceDefinitions' metadata: their names say
	// which kinds are served, their annotations which bundle they came from.
	CRDs []metav1.PartialObjectMetadata
	// Deployments are read for the operators' releases (their images,
	// arguments and labels); only their metadata and pod template matter.
	Deployments []appsv1.Deployment
	// Gateways are the Gateway API Gateways' metadata.
	Gateways []metav1.PartialObjectMetadata
	// APIServices are the aggregated APIs' metadata: one named
	// v1beta1.custom.metrics.k8s.io says a metrics adapter serves Pods
	// metrics to HorizontalPodAutoscalers.
	APIServices []metav1.PartialObjectMetadata
	// DRA is true when the cluster serves resource.k8s.io/v1 (Dynamic
	// Resource Allocation, Kubernetes 1.34 and later).
	DRA bool
	// DeviceClasses and ResourceSlices are what the cluster says of its
	// DRA devices (dra.go): the classes' selectors, and each node's
	// devices as its drivers publish them.
	DeviceClasses  []DeviceClass
	ResourceSlices []ResourceSlice
}

// What Read lists.
var (
	nodesResource       = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	deploymentsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crdsResource        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gatewaysResource    = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	apiServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// Read lists a cluster's Nodes, CRDs, Deployments (every namespace),
// Gateways, APIServices, and DRA's DeviceClasses and ResourceSlices. CRDs,
// Gateways and APIServices are read as metadata only. A cluster without
// the Gateway API has no Gateways, one without resource.k8s.io/v1 no
// DeviceClasses or ResourceSlices; any other failure (a forbidden list
// names the verb and resource the ClusterRole in deploy/discover grants) is
// an error.
func Read(ctx context.Context, cfg *rest.Config) (*Cluster, error) {
	return ReadNodes(ctx, cfg, "")
}

// ReadNodes is Read of only the Nodes that nodeSelector, a label
// selector as kubectl's `-l` takes, picks ("" picks every Node): for a
// cluster whose other nodes are not the renderer's to place on.
func ReadNodes(ctx context.Context, cfg *rest.Config, nodeSelector string) (*Cluster, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	if c.Nodes, err = listTyped[corev1.Node](ctx, dyn, nodesResource, nodeSelector); err != nil {
		return nil, err
	}
	if c.Deployments, err = listTyped[appsv1.Deployment](ctx, dyn, deploymentsResource, ""); err != nil {
		return nil, err
	}
	if c.CRDs, err = listMetadata(ctx, meta, crdsResource); err != nil {
		return nil, err
	}
	if c.HasCRD(gatewayCRD) {
		if c.Gateways, err = listMetadata(ctx, meta, gatewaysResource); err != nil {
			return nil, err
		}
	}
	if c.APIServices, err = listMetadata(ctx, meta, apiServicesResource); err != nil {
		return nil, err
	}
	if err := readDRA(ctx, dyn, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Read lists page by page and refuses a list longer than MaxListItems: a
// list is the one input of discover whose size the cluster's users set
// (any namespace's owner adds Deployments; kubelets and autoscalers add
// Nodes), and one response holding all of it would be read whole.
const (
	// listPageSize is the items one list request asks for, kubectl's chunk.
	listPageSize = 500
	// MaxListItems bounds each list: Kubernetes' scalability thresholds
	// are 5,000 nodes and 150,000 pods in a cluster, so no real cluster
	// has more of any kind discover reads.
	MaxListItems = 150000
)

// listTyped lists a resource in every namespace through the dynamic client
// and converts the items: the typed clientset would link every API group.
// An item's quantities are checked (hub.CheckQuantities) before the
// converter parses them: a Node's allocatable comes from its kubelet.
func listTyped[T any](ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, selector string) ([]T, error) {
	var out []T
	err := listPages(gvr, selector, listPageSize, func(opts metav1.ListOptions) (string, int, error) {
		list, err := dyn.Resource(gvr).List(ctx, opts)
		if err != nil {
			return "", 0, err
		}
		for i := range list.Items {
			var item T
			at := fmt.Sprintf("%s %q", gvr.GroupResource(), list.Items[i].GetName())
			if err := hub.CheckQuantities(list.Items[i].Object, &item, ""); err != nil {
				return "", 0, fmt.Errorf("reading %s: %w", at, err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &item); err != nil {
				return "", 0, fmt.Errorf("reading %s: %w", at, err)
			}
			out = append(out, item)
		}
		return list.GetContinue(), len(list.Items), nil
	})
	return out, err
}

func listMetadata(ctx context.Context, meta metadata.Interface, gvr schema.GroupVersionResource) ([]metav1.PartialObjectMetadata, error) {
	var out []metav1.PartialObjectMetadata
	err := listPages(gvr, "", listPageSize, func(opts metav1.ListOptions) (string, int, error) {
		list, err := meta.Resource(gvr).List(ctx, opts)
		if err != nil {
			return "", 0, err
		}
		out = append(out, list.Items...)
		return list.Continue, len(list.Items), nil
	})
	return out, err
}

// listPages calls list for each page of gvr's objects with the labels
// selector picks, limit items at a time, until the API server says
// there is no more, and fails once the items pass MaxListItems.
func listPages(gvr schema.GroupVersionResource, selector string, limit int64, list func(metav1.ListOptions) (next string, items int, err error)) error {
	opts := metav1.ListOptions{Limit: limit, LabelSelector: selector}
	for total := 0; ; {
		next, n, err := list(opts)
		if err != nil {
			return fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
		}
		if total += n; total > MaxListItems {
			return fmt.Errorf("listing %s: the cluster has more than %d of them; discover reads at most %d of a kind (Kubernetes' scalability thresholds: 5,000 nodes, 150,000 pods)", gvr.GroupResource(), MaxListItems, MaxListItems)
		}
		if next == "" {
			return nil
		}
		opts.Continue = next
	}
}

// Sort orders every list by namespace and name, so that what a Cluster
// gives does not depend on the order the API server or a cache listed it.
// Discover, Compare and Pools sort before they read; callers need not.
func (c *Cluster) Sort() {
	slices.SortFunc(c.Nodes, func(a, b corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(c.Deployments, func(a, b appsv1.Deployment) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	byKey := func(a, b metav1.PartialObjectMetadata) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	}
	slices.SortFunc(c.CRDs, byKey)
	slices.SortFunc(c.Gateways, byKey)
	slices.SortFunc(c.APIServices, byKey)
	slices.SortFunc(c.DeviceClasses, func(a, b DeviceClass) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(c.ResourceSlices, func(a, b ResourceSlice) int { return cmp.Compare(a.Name, b.Name) })
}

// CRD returns the named CustomResourceDefinition's metadata, or nil.
func (c *Cluster) CRD(name string) *metav1.PartialObjectMetadata {
	for i := range c.CRDs {
		if c.CRDs[i].Name == name {
			return &c.CRDs[i]
		}
	}
	return nil
}

// HasCRD reports whether the named CustomResourceDefinition is installed.
func (c *Cluster) HasCRD(name string) bool { return c.CRD(name) != nil }
