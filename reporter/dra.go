package reporter

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/discover"
)

// The Dynamic Resource Allocation kinds drift reads (resource.k8s.io/v1,
// Kubernetes 1.34 and later): a DRA pool is held to the devices its
// nodes' ResourceSlices publish and to its DeviceClass. Watched where
// served, like the provider kinds (kinds.go).
var (
	resourceSliceGVK = resourcev1.SchemeGroupVersion.WithKind("ResourceSlice")
	deviceClassGVK   = resourcev1.SchemeGroupVersion.WithKind("DeviceClass")
)

// draKinds are watched whole (they are cluster-scoped and not rendered);
// an event asks for a comparison, unless the trimmed object is as it was
// (a driver republishing the same devices with a new pool generation).
func draKinds() []watchedKind {
	changed := func(k *kinds, _ *unstructured.Unstructured) []types.NamespacedName {
		k.changed()
		return nil
	}
	return []watchedKind{
		{gvk: resourceSliceGVK, everything: true, quiet: true, owners: changed},
		{gvk: deviceClassGVK, everything: true, quiet: true, owners: changed},
	}
}

// trimResourceSlice keeps what Compare reads of a ResourceSlice: its
// name, driver and node (or how it picks its nodes), and its devices'
// attributes and capacities, without the attributes that name one device
// (uuid, PCI address: discover keeps none) and without device names, so
// that a node's identical GPUs are kept once with a count (the key
// "count" of each trimmed device, which no ResourceSlice has). No
// resourceVersion or pool generation: a republish of the same devices
// leaves the trimmed slice as it was and starts no comparison.
func trimResourceSlice(obj map[string]any) map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	outSpec := map[string]any{}
	for _, k := range []string{"driver", "nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection"} {
		if v, ok := spec[k]; ok {
			outSpec[k] = v
		}
	}
	var devices []any
	index := map[string]int{} // a trimmed device's content, as JSON: its place in devices
	devs, _ := spec["devices"].([]any)
	for _, d := range devs {
		dm, ok := d.(map[string]any)
		if !ok {
			continue
		}
		kept := map[string]any{}
		if attrs, ok := dm["attributes"].(map[string]any); ok {
			a := maps.Clone(attrs)
			maps.DeleteFunc(a, func(name string, _ any) bool { return discover.IdentityAttribute(name) })
			kept["attributes"] = a
		}
		if c, ok := dm["capacity"].(map[string]any); ok {
			kept["capacity"] = c
		}
		// A trimmed device already stands for its count: the transform
		// may see an object twice.
		weight := int64(1)
		if c, ok := countOf(dm); ok {
			weight = c
		}
		key, err := json.Marshal(kept) // map keys sorted: equal contents, equal keys
		if err != nil {
			continue
		}
		if i, ok := index[string(key)]; ok {
			n, _ := countOf(devices[i])
			devices[i].(map[string]any)["count"] = n + weight
			continue
		}
		index[string(key)] = len(devices)
		kept["count"] = weight
		devices = append(devices, kept)
	}
	if devices != nil {
		outSpec["devices"] = devices
	}
	return map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": map[string]any{"name": nameOf(obj)}, "spec": outSpec}
}

// trimDeviceClass keeps a DeviceClass's name and selectors.
func trimDeviceClass(obj map[string]any) map[string]any {
	out := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": map[string]any{"name": nameOf(obj)}}
	spec := map[string]any{}
	if sel, ok, _ := unstructured.NestedSlice(obj, "spec", "selectors"); ok {
		spec["selectors"] = sel
	}
	// The resource the class serves: a pool that requests it (its
	// `extendedResource`) is compared with it.
	if name, ok, _ := unstructured.NestedString(obj, "spec", "extendedResourceName"); ok {
		spec["extendedResourceName"] = name
	}
	if len(spec) > 0 {
		out["spec"] = spec
	}
	return out
}

func nameOf(obj map[string]any) string {
	name, _, _ := unstructured.NestedString(obj, "metadata", "name")
	return name
}

// snapshotDRA reads the watched DeviceClasses and ResourceSlices into the
// cluster Compare reads. A cluster that serves no resource.k8s.io/v1 has
// none, and cluster.DRA stays false; one the reporter may not watch is an
// error (its RBAC: deploy/base).
func (d *drift) snapshotDRA(ctx context.Context, cluster *discover.Cluster) error {
	for _, gvk := range []schema.GroupVersionKind{resourceSliceGVK, deviceClassGVK} {
		if err := d.kinds.WatchError(gvk); err != nil {
			return err
		}
	}
	slicesReader, ok := d.kinds.Reader(resourceSliceGVK)
	classesReader, ok2 := d.kinds.Reader(deviceClassGVK)
	if !ok || !ok2 {
		return nil
	}
	cluster.DRA = true
	classes := &unstructured.UnstructuredList{}
	classes.SetGroupVersionKind(deviceClassGVK.GroupVersion().WithKind("DeviceClassList"))
	if err := classesReader.List(ctx, classes); err != nil {
		return err
	}
	for _, u := range classes.Items {
		var dc resourcev1.DeviceClass
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &dc); err != nil {
			return fmt.Errorf("reading DeviceClass %q: %w", u.GetName(), err)
		}
		cluster.DeviceClasses = append(cluster.DeviceClasses, discover.ClassOf(&dc))
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(resourceSliceGVK.GroupVersion().WithKind("ResourceSliceList"))
	if err := slicesReader.List(ctx, list); err != nil {
		return err
	}
	for _, u := range list.Items {
		s, err := sliceFromTrimmed(u.Object)
		if err != nil {
			return fmt.Errorf("reading ResourceSlice %q: %w", u.GetName(), err)
		}
		cluster.ResourceSlices = append(cluster.ResourceSlices, s)
	}
	return nil
}

// sliceFromTrimmed reads a trimmed ResourceSlice as discover keeps it,
// each trimmed device standing for its count of devices.
func sliceFromTrimmed(obj map[string]any) (discover.ResourceSlice, error) {
	var rs resourcev1.ResourceSlice
	if err := hub.CheckQuantities(obj, &rs, ""); err != nil {
		return discover.ResourceSlice{}, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &rs); err != nil {
		return discover.ResourceSlice{}, err
	}
	devs, _, _ := unstructured.NestedSlice(obj, "spec", "devices")
	var expanded []resourcev1.Device
	for i, d := range rs.Spec.Devices {
		n := int64(1)
		if i < len(devs) {
			if c, ok := countOf(devs[i]); ok {
				n = min(max(c, 1), resourcev1.ResourceSliceMaxDevices)
			}
		}
		for range n {
			expanded = append(expanded, d)
		}
	}
	rs.Spec.Devices = expanded
	return discover.SliceOf(&rs)
}

// countOf reads a trimmed device's count, whatever integer type the cache
// left it as.
func countOf(device any) (int64, bool) {
	m, _ := device.(map[string]any)
	switch c := m["count"].(type) {
	case int64:
		return c, true
	case int:
		return int64(c), true
	case float64:
		return int64(c), true
	}
	return 0, false
}
