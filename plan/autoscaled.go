package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/providers"
)

// bounds is the replica range an autoscaler keeps its target in.
type bounds struct{ min, max int32 }

// readAutoscaler reads a rendered KEDA ScaledObject or
// HorizontalPodAutoscaler: its target's replica range, by namespace, kind
// and name. An autoscaled workload is rendered without replicas (the API
// server's default of 1 is no plan), so the plan counts it at its
// maximum: the GPUs it may take at its peak.
func (r *Reader) readAutoscaler(obj *unstructured.Unstructured) {
	lo, hi := []string{"spec", "minReplicas"}, []string{"spec", "maxReplicas"}
	if obj.GetKind() == "ScaledObject" {
		lo, hi = []string{"spec", "minReplicaCount"}, []string{"spec", "maxReplicaCount"}
	}
	targetKind, _, _ := unstructured.NestedString(obj.Object, "spec", "scaleTargetRef", "kind")
	targetName, _, _ := unstructured.NestedString(obj.Object, "spec", "scaleTargetRef", "name")
	min, _, _ := unstructured.NestedInt64(obj.Object, lo...)
	r.scaled[key(obj.GetNamespace(), targetKind, targetName)] = bounds{min: int32(min), max: providers.ReplicaCount(obj.Object, hi...)}
}

func key(namespace, kind, name string) string { return namespace + "/" + kind + "/" + name }

// scaleToPeak counts an autoscaled workload's pod groups at their
// maximum and says so. A Deployment is its autoscaler's target; a Dynamo
// service is, through its scaling adapter `<graph>-<service, lowercased>`.
// (An autoscaled Ray worker group, without replicas, is counted at its
// maxReplicas by the kuberay provider's own counter.)
func scaleToPeak(namespace, kind, name string, groups []readGroup, scaled map[string]bounds, model string) []string {
	var notes []string
	for i := range groups {
		target := key(namespace, kind, name)
		if kind == "DynamoGraphDeployment" {
			target = key(namespace, "DynamoGraphDeploymentScalingAdapter", name+"-"+strings.ToLower(groups[i].component))
		}
		b, ok := scaled[target]
		if !ok {
			continue
		}
		// The rendered count is the API server's default, one replica:
		// per replica, Pods/1 pods (a multinode service has several).
		groups[i].pods *= b.max
		notes = append(notes, fmt.Sprintf("%s/%s (model %q): autoscaled between %d and %d replicas; planned at %d, its peak", kind, name, model, b.min, b.max, b.max))
	}
	return notes
}
