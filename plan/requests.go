package plan

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// podRequests are one pod's requests as the scheduler adds them up
// (containers, init containers, sidecars: k8s.io/component-helpers, the
// scheduler's own code), a limit without a request counting as the
// request, as the API server defaults it.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range cs {
			defaultRequests(&cs[i].Resources)
		}
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// checkRequests refuses a pod whose requests add up beyond the range of
// hub.ParseQuantity (each container's is within it): packing counts them
// in int64 milli-units and bytes, which would overflow.
func checkRequests(r corev1.ResourceList) error {
	for _, name := range slices.Sorted(maps.Keys(r)) {
		if err := hub.CheckQuantityRange(r[name]); err != nil {
			q := r[name]
			return fmt.Errorf("one pod's %s requests add up to %s, which %w", name, q.String(), err)
		}
	}
	return nil
}

func defaultRequests(r *corev1.ResourceRequirements) {
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// requiredLabels are the node labels a pod requires: its nodeSelector and
// the single-value `In` requirements of a required node affinity with one
// term (with several, no label is required by all of them).
func requiredLabels(spec *corev1.PodSpec) map[string]string {
	out := providers.Merge(spec.NodeSelector)
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return out
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 {
		return out
	}
	for _, r := range terms[0].MatchExpressions {
		if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			if out == nil {
				out = map[string]string{}
			}
			out[r.Key] = r.Values[0]
		}
	}
	return out
}
