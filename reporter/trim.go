package reporter

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/airunway-render/airunway-render/providers"
)

// What the informer caches keep. A reporter watches every rendered model
// and its primary object, so what a cached object weighs is multiplied by
// the models of the cluster: each cache keeps only what the status
// translation, the gateway status and the drift comparison read, and
// drops before storing the rest — above all the field sets of
// metadata.managedFields, which for an object applied server-side weigh
// more than the object.

// lastApplied is kubectl's (and Argo CD's client-side apply's) copy of the
// whole object as last applied: nothing the reporter reads.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// transformFor is the cache transform of a watched kind.
func transformFor(gvk schema.GroupVersionKind) toolscache.TransformFunc {
	switch gvk {
	case routeGVK:
		// The model name (spec.rules) and the parent Gateways
		// (spec.parentRefs); a route's status is not read.
		return trimUnstructured(func(obj map[string]any) map[string]any {
			out := providers.KeepForHealth(obj, []string{"spec.rules", "spec.parentRefs"})
			delete(out, "status")
			return out
		}, false)
	case gatewayGVK:
		// The address, in status.addresses.
		return trimUnstructured(func(obj map[string]any) map[string]any {
			out := providers.KeepForHealth(obj, nil)
			delete(out, "status")
			if addresses, ok := unstructuredField(obj, "status", "addresses"); ok {
				out["status"] = map[string]any{"addresses": addresses}
			}
			return out
		}, false)
	case resourceSliceGVK:
		return trimUnstructured(trimResourceSlice, false)
	case deviceClassGVK:
		return trimUnstructured(trimDeviceClass, false)
	case ClusterCapabilitiesGVK:
		// Read whole, as the renderer reads the file; they are few.
		return trimUnstructured(nil, false)
	}
	for _, r := range reporters() {
		if slices.Contains(primaryKinds(r), gvk) {
			fields := r.HealthFields()
			// The managers' write times stay: a primary object not
			// updated for StaleAfter is stale (lastWrite).
			return trimUnstructured(func(obj map[string]any) map[string]any { return providers.KeepForHealth(obj, fields) }, true)
		}
	}
	return trimUnstructured(nil, false)
}

// unstructuredField is the value at path, whatever its type.
func unstructuredField(obj map[string]any, path ...string) (any, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(obj, path...)
	return v, ok && err == nil
}

// trimModel is the transform of the ModelDeployment cache: the reporter
// reads a model's metadata, spec and status, none of its managed fields.
var trimModel = trimUnstructured(nil, false)

// trimUnstructured returns a transform that keeps what keep returns of an
// object (all of it when keep is nil), without the last-applied annotation
// and without managedFields, or with only each manager's name, operation
// and time when writeTimes is set.
func trimUnstructured(keep func(map[string]any) map[string]any, writeTimes bool) toolscache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // a tombstone, or a kind read typed
		}
		if keep != nil {
			u = &unstructured.Unstructured{Object: keep(u.Object)}
		}
		trimMetadata(u, writeTimes)
		return u, nil
	}
}

// trimMetadata drops the last-applied annotation and the managed field
// sets, in place, on the maps as decoded: every watch event of every
// cached kind passes here (a first start sees each model twice, its own
// status write's event too), and going through the typed managed fields
// (GetManagedFields, SetManagedFields) copied and converted the field
// sets only to drop them.
func trimMetadata(u *unstructured.Unstructured, writeTimes bool) {
	metadata, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if annotations, ok := metadata["annotations"].(map[string]any); ok {
		if v, _ := annotations[lastApplied].(string); v != "" {
			delete(annotations, lastApplied)
		}
	}
	entries, ok := metadata["managedFields"].([]any)
	if !writeTimes || !ok {
		delete(metadata, "managedFields")
		return
	}
	kept := make([]any, 0, len(entries))
	for _, e := range entries {
		entry, ok := e.(map[string]any)
		if !ok {
			continue
		}
		times := make(map[string]any, 3)
		for _, k := range managedFieldsKept {
			if v, ok := entry[k]; ok {
				times[k] = v
			}
		}
		kept = append(kept, times)
	}
	metadata["managedFields"] = kept
}

// managedFieldsKept are what a managed fields entry keeps with writeTimes:
// who wrote, how, and when (lastWrite reads the time).
var managedFieldsKept = []string{"manager", "operation", "time"}
