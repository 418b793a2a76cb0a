package kuberay

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/providers"
)

// PodGroups implements providers.PodCounter for a RayService, as KubeRay
// (v1.3 to v1.7) runs it: one head pod, and per worker group
// clamp(replicas, minReplicas, maxReplicas) × numOfHosts pods. Unless
// `upgradeStrategy.type` is None, a change to the cluster's spec starts a
// whole second RayCluster beside the first and deletes the first only once
// traffic has moved (the zero-downtime upgrade, KubeRay's default since
// v1.3), so the surge is the whole cluster. With
// NewClusterWithIncrementalUpgrade the operator grows the new cluster step
// by step, which the whole cluster bounds.
func (Provider) PodGroups(obj *unstructured.Unstructured) ([]providers.PodGroup, bool, error) {
	if obj.GetAPIVersion() != APIVersion || obj.GetKind() != Kind {
		return nil, false, nil
	}
	upgrade, _, _ := unstructured.NestedString(obj.Object, "spec", "upgradeStrategy", "type")
	surge := upgrade != "None"
	cluster, _, err := unstructured.NestedMap(obj.Object, "spec", "rayClusterConfig")
	if err != nil {
		return nil, true, fmt.Errorf("`spec.rayClusterConfig`: %w", err)
	}
	head, err := providers.TemplateGroup(cluster, "headGroupSpec", "template")
	if err != nil {
		return nil, true, fmt.Errorf("`spec.rayClusterConfig.headGroupSpec.template`: %w", err)
	}
	head.Component, head.Pods = "head", 1
	out := []providers.PodGroup{head}
	groups, _, err := unstructured.NestedSlice(cluster, "workerGroupSpecs")
	if err != nil && cluster["workerGroupSpecs"] != nil { // null: no workers
		return nil, true, fmt.Errorf("`spec.rayClusterConfig.workerGroupSpecs`: %w", err)
	}
	for i, raw := range groups {
		wg, ok := raw.(map[string]any)
		if !ok {
			return nil, true, fmt.Errorf("`spec.rayClusterConfig.workerGroupSpecs[%d]` must be an object", i)
		}
		g, err := providers.TemplateGroup(wg, "template")
		if err != nil {
			return nil, true, fmt.Errorf("`spec.rayClusterConfig.workerGroupSpecs[%d].template`: %w", i, err)
		}
		g.Component, _, _ = unstructured.NestedString(wg, "groupName")
		g.Pods = workerPods(wg)
		out = append(out, g)
	}
	if surge {
		for i := range out {
			out[i].Surge = out[i].Pods
		}
	}
	return out, true, nil
}

// workerPods is clamp(replicas, minReplicas, maxReplicas) × numOfHosts,
// KubeRay's defaults for what is unset (replicas and numOfHosts 1,
// minReplicas 0, maxReplicas unbounded). A group without replicas but with
// maxReplicas is sized by Ray's autoscaler (an autoscaled model): it is
// counted at maxReplicas, the GPUs it may take at its peak.
func workerPods(wg map[string]any) int32 {
	n := providers.ReplicaCount(wg, "replicas")
	if _, set := wg["replicas"]; !set {
		if _, bounded := wg["maxReplicas"]; bounded {
			n = providers.ReplicaCount(wg, "maxReplicas")
		}
	}
	if _, ok := wg["minReplicas"]; ok {
		n = max(n, providers.ReplicaCount(wg, "minReplicas"))
	}
	if _, ok := wg["maxReplicas"]; ok {
		n = min(n, providers.ReplicaCount(wg, "maxReplicas"))
	}
	return n * providers.ReplicaCount(wg, "numOfHosts")
}
