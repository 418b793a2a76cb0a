package kaito

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/providers"
)

// defaultTolerations are what KAITO (v0.10, v0.12) adds to an inference
// pod outside Azure: nvidia.com/gpu and sku=gpu NoSchedule taints
// (pkg/workspace/inference/preset_inferences.go, defaultTolerations).
var defaultTolerations = []corev1.Toleration{
	{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: "sku", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
}

// PodGroups implements providers.PodCounter for a Workspace: one
// StatefulSet (no surge) on the nodes `resource.labelSelector` matches,
// with KAITO's tolerations added. A template's pods are `resource.count`
// with the template's requests. A preset's pods each take every GPU of
// their node (KAITO reads the node's nvidia.com/gpu.count); how many there
// are is KAITO's node estimator's decision for vLLM presets, which the
// rendered object does not hold: `resource.count` is counted, and the
// plan says so.
//
// An InferenceSet is counted as its Workspaces: `spec.replicas` of them
// (KAITO's default 1 where an autoscaler owns the count, which the plan
// then takes at its peak), each one replica of `spec.template` on the
// nodes `spec.labelSelector` matches.
func (Provider) PodGroups(obj *unstructured.Unstructured) ([]providers.PodGroup, bool, error) {
	if obj.GetAPIVersion() != APIVersion {
		return nil, false, nil
	}
	var inference, selector, count []string
	switch obj.GetKind() {
	case Kind:
		inference, selector, count = []string{"inference"}, []string{"resource", "labelSelector"}, []string{"resource", "count"}
	case InferenceSetKind:
		inference, selector, count = []string{"spec", "template", "inference"}, []string{"spec", "labelSelector"}, []string{"spec", "replicas"}
	default:
		return nil, false, nil
	}
	g := providers.PodGroup{}
	template := append(slices.Clone(inference), "template")
	if _, ok, _ := unstructured.NestedMap(obj.Object, template...); ok {
		var err error
		if g, err = providers.TemplateGroup(obj.Object, template...); err != nil {
			return nil, true, err
		}
	} else {
		g.WholeNodeGPUs = true
	}
	match, _, err := unstructured.NestedStringMap(obj.Object, append(slices.Clone(selector), "matchLabels")...)
	if err != nil {
		return nil, true, fmt.Errorf("`%s.matchLabels`: %w", strings.Join(selector, "."), err)
	}
	// KAITO requires the labels through a node affinity; a nodeSelector
	// asks the same of a node.
	g.Spec.NodeSelector = providers.Merge(g.Spec.NodeSelector, match)
	g.Spec.Tolerations = append(g.Spec.Tolerations, defaultTolerations...)
	g.Pods = providers.ReplicaCount(obj.Object, count...)
	return []providers.PodGroup{g}, true, nil
}
