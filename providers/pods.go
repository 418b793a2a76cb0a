package providers

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/airunway-render/airunway-render/api/hub"
)

// PodGroup is a set of identical pods that a rendered object makes once
// its controller or operator runs it: what `airunway-render plan` packs
// onto the node pools.
type PodGroup struct {
	// Component names the pods within their object: "" for the object's
	// own pod template, else a Dynamo service, a Ray group.
	Component string
	// Pods is how many run once the rollout is done.
	Pods int32
	// Surge is how many more run at the peak of a rolling update.
	Surge int32
	// Unavailable is how many of the pods a rolling update may take down
	// before their replacements are Ready (a Deployment's maxUnavailable).
	// When it is 0 the surge pods must find room beside the old ones, or
	// the rollout stalls with them Pending; otherwise the controller takes
	// old pods down and their replacements take the room they leave.
	Unavailable int32
	// Spec is one pod's spec as far as scheduling goes: containers with
	// their resources, nodeSelector, affinity, tolerations.
	Spec corev1.PodSpec
	// WholeNodeGPUs: the operator gives each pod every GPU of the node it
	// lands on (KAITO presets); Spec requests no GPU then.
	WholeNodeGPUs bool
	// Note says what the plan cannot count of the object and why (its
	// pods are an operator's run-time decision), for the plan's notes.
	Note string
}

// PodCounter is implemented by providers whose objects an operator turns
// into pods: it says which pods, from the rendered object alone.
type PodCounter interface {
	// PodGroups returns the pods obj makes; handled is false for a kind
	// the provider does not own.
	PodGroups(obj *unstructured.Unstructured) (groups []PodGroup, handled bool, err error)
}

// WorkloadPodGroups counts the pods of Kubernetes' own workload kinds and
// LeaderWorkerSet; handled is false for any other kind.
func WorkloadPodGroups(obj *unstructured.Unstructured) ([]PodGroup, bool, error) {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "apps" && gvk.Kind == "Deployment":
		g, err := TemplateGroup(obj.Object, "spec", "template")
		if err != nil {
			return nil, true, err
		}
		g.Pods = ReplicaCount(obj.Object, "spec", "replicas")
		g.Surge, g.Unavailable, err = deploymentRollout(obj.Object, g.Pods)
		return []PodGroup{g}, true, err
	case gvk.Group == "apps" && gvk.Kind == "StatefulSet":
		// A StatefulSet replaces pods in place: no surge.
		g, err := TemplateGroup(obj.Object, "spec", "template")
		g.Pods = ReplicaCount(obj.Object, "spec", "replicas")
		return []PodGroup{g}, true, err
	case gvk.Group == "batch" && gvk.Kind == "Job":
		g, err := TemplateGroup(obj.Object, "spec", "template")
		g.Pods = ReplicaCount(obj.Object, "spec", "parallelism")
		return []PodGroup{g}, true, err
	case gvk.Group == "leaderworkerset.x-k8s.io" && gvk.Kind == "LeaderWorkerSet":
		return leaderWorkerSetGroups(obj.Object)
	}
	return nil, false, nil
}

// leaderWorkerSetGroups: each of `replicas` groups is one leader and
// `size`-1 workers (the leader's template defaults to the workers'); a
// rolling update adds `maxSurge` whole groups, default 0, and may take
// `maxUnavailable` groups down first, default 1 (the LeaderWorkerSet
// API's defaults).
func leaderWorkerSetGroups(obj map[string]any) ([]PodGroup, bool, error) {
	groups := ReplicaCount(obj, "spec", "replicas")
	size := max(1, ReplicaCount(obj, "spec", "leaderWorkerTemplate", "size"))
	surge, err := surgeOf(obj, groups, "0", "spec", "rolloutStrategy", "rollingUpdateConfiguration", "maxSurge")
	if err != nil {
		return nil, true, err
	}
	unavailable, err := scaledOf(obj, groups, "1", false, "spec", "rolloutStrategy", "rollingUpdateConfiguration", "maxUnavailable")
	if err != nil {
		return nil, true, err
	}
	workers, err := TemplateGroup(obj, "spec", "leaderWorkerTemplate", "workerTemplate")
	if err != nil {
		return nil, true, err
	}
	workers.Component, workers.Pods, workers.Surge, workers.Unavailable = "workers", groups*(size-1), surge*(size-1), unavailable*(size-1)
	leader := workers
	if _, ok, _ := unstructured.NestedMap(obj, "spec", "leaderWorkerTemplate", "leaderTemplate"); ok {
		if leader, err = TemplateGroup(obj, "spec", "leaderWorkerTemplate", "leaderTemplate"); err != nil {
			return nil, true, err
		}
	}
	leader.Component, leader.Pods, leader.Surge, leader.Unavailable = "leader", groups, surge, unavailable
	return []PodGroup{leader, workers}, true, nil
}

// deploymentRollout is `maxSurge` (default 25%, a percentage rounded up)
// and `maxUnavailable` (default 25%, rounded down) of a RollingUpdate
// Deployment, with Kubernetes' fencepost: both 0 makes maxUnavailable 1
// (pkg/controller/deployment/util ResolveFenceposts). A Recreate
// Deployment has no surge: it takes every pod down first.
func deploymentRollout(obj map[string]any, pods int32) (surge, unavailable int32, err error) {
	if t, _, _ := unstructured.NestedString(obj, "spec", "strategy", "type"); t == "Recreate" {
		return 0, pods, nil
	}
	if surge, err = surgeOf(obj, pods, "25%", "spec", "strategy", "rollingUpdate", "maxSurge"); err != nil {
		return 0, 0, err
	}
	if unavailable, err = scaledOf(obj, pods, "25%", false, "spec", "strategy", "rollingUpdate", "maxUnavailable"); err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, nil
}

// surgeOf reads an int-or-percent surge field, scaled against total and
// rounded up as Kubernetes does for surges.
func surgeOf(obj map[string]any, total int32, def string, fields ...string) (int32, error) {
	return scaledOf(obj, total, def, true, fields...)
}

// scaledOf reads an int-or-percent field, scaled against total and
// rounded up or down.
func scaledOf(obj map[string]any, total int32, def string, roundUp bool, fields ...string) (int32, error) {
	v := intstr.Parse(def)
	if raw, ok, _ := unstructured.NestedFieldNoCopy(obj, fields...); ok {
		switch t := raw.(type) {
		case string:
			v = intstr.FromString(t)
		case int64:
			v = intstr.FromInt32(int32(min(t, math.MaxInt32)))
		case float64:
			v = intstr.FromInt32(int32(min(t, math.MaxInt32)))
		default:
			return 0, fmt.Errorf("`%s` must be an integer or a percentage, got %T", strings.Join(fields, "."), raw)
		}
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(total), roundUp)
	if err != nil {
		return 0, fmt.Errorf("`%s`: %w", strings.Join(fields, "."), err)
	}
	return int32(max(n, 0)), nil
}

// ReplicaCount reads a replica count as Fields.Int32 reads counts;
// absent, or not a count, means 1, as Kubernetes defaults it.
func ReplicaCount(obj map[string]any, fields ...string) int32 {
	if n, ok := (&Fields{obj: obj, problems: &[]string{}}).Int32(fields...); ok {
		return n
	}
	return 1
}

// TemplateGroup reads the pod template at fields of obj into a PodGroup
// without counts.
func TemplateGroup(obj map[string]any, fields ...string) (PodGroup, error) {
	raw, _, _ := unstructured.NestedMap(obj, append(fields, "spec")...)
	var g PodGroup
	// The converter parses quantities unbounded: check them first.
	if err := hub.CheckQuantities(raw, &g.Spec, strings.Join(append(fields, "spec"), ".")); err != nil {
		return PodGroup{}, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &g.Spec); err != nil {
		return PodGroup{}, fmt.Errorf("`%s.spec` is not a pod spec: %w", strings.Join(fields, "."), err)
	}
	return g, nil
}
