package kuberay

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/providers"
)

// Primary implements providers.Reporter: the RayService named like the model.
func (Provider) Primary(md *v1.ModelDeployment) providers.Primary {
	return providers.Primary{GVK: schema.FromAPIVersionAndKind(APIVersion, Kind), Name: md.Name, Noun: Kind}
}

// Health implements providers.Reporter as upstream translates a
// RayService: the RayServiceReady condition, overridden by the Serve
// applications' statuses (any DEPLOY_FAILED fails, all RUNNING runs).
// Desired replicas are the worker groups'; they count as ready only when
// every application runs.
func (Provider) Health(obj *unstructured.Unstructured) providers.Health {
	h := providers.Health{Phase: providers.PhasePending}
	switch ready := providers.Conditions(obj)["RayServiceReady"]; ready.Status {
	case "True":
		h.Phase = providers.PhaseRunning
	case "False":
		h.Phase, h.Message = providers.PhaseDeploying, ready.Message
	}
	apps, _, _ := unstructured.NestedMap(obj.Object, "status", "activeServiceStatus", "applicationStatuses")
	allRunning := len(apps) > 0
	names := make([]string, 0, len(apps))
	for name := range apps {
		names = append(names, name)
	}
	sort.Strings(names)
	failed := false
	for _, name := range names {
		status, _, _ := unstructured.NestedString(apps, name, "status")
		if status != "RUNNING" {
			allRunning = false
		}
		if status == "DEPLOY_FAILED" && !failed {
			failed = true
			h.Phase = providers.PhaseFailed
			h.Message, _, _ = unstructured.NestedString(apps, name, "message")
		}
	}
	switch {
	case failed:
	case allRunning:
		h.Phase = providers.PhaseRunning
	case len(apps) > 0:
		h.Phase = providers.PhaseDeploying
	}
	var desired int32
	groups, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rayClusterConfig", "workerGroupSpecs")
	for _, g := range groups {
		if m, ok := g.(map[string]any); ok {
			n, _ := providers.Int32(m, "replicas")
			desired += n
		}
	}
	h.Replicas = &providers.Replicas{Desired: desired}
	if allRunning {
		h.Replicas.Ready, h.Replicas.Available = desired, desired
	}
	h.Endpoint = &providers.Endpoint{Service: obj.GetName() + "-serve-svc", Port: ServePort}
	return h
}
