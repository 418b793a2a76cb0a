package kuberay

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// readyCondition is the type of KubeRay's RayServiceReady condition.
const readyCondition = "Ready"

// Primary implements providers.Reporter: the RayService named like the model.
func (Provider) Primary(md *hub.ModelDeployment) providers.Primary {
	return providers.Primary{GVK: schema.FromAPIVersionAndKind(APIVersion, Kind), Name: md.Name, Noun: Kind}
}

// Endpoint implements providers.Endpointer: the serve Service KubeRay
// creates for a RayService, "<name>-serve-svc".
func (Provider) Endpoint(md *hub.ModelDeployment) providers.Endpoint { return endpoint(md.Name) }

func endpoint(service string) providers.Endpoint {
	return providers.Endpoint{Service: service + "-serve-svc", Port: ServePort}
}

// HealthFields implements providers.Reporter: the desired replicas are
// the worker groups'.
func (Provider) HealthFields() []string {
	return []string{"spec.rayClusterConfig.workerGroupSpecs.[].replicas"}
}

// Health implements providers.Reporter as upstream translates a
// RayService: the operator's RayServiceReady condition, whose type is
// "Ready" (ray-operator apis/ray/v1/rayservice_types.go; the cluster twin
// runs the operator and reads it), overridden by the Serve
// applications' statuses (any DEPLOY_FAILED fails, all RUNNING runs).
// Desired replicas are the worker groups'; they count as ready only when
// every application runs.
func (Provider) Health(obj *unstructured.Unstructured) providers.Health {
	f := providers.Read(obj)
	h := providers.Health{Phase: providers.PhasePending}
	switch ready := f.Conditions()[readyCondition]; ready.Status {
	case "True":
		h.Phase = providers.PhaseRunning
	case "False":
		h.Phase, h.Message = providers.PhaseDeploying, ready.Message
	}
	apps := 0
	allRunning, failed := true, false
	f.Each([]string{"status", "activeServiceStatus", "applicationStatuses"}, func(_ string, app *providers.Fields) {
		apps++
		status := app.String("status")
		if status != "RUNNING" {
			allRunning = false
		}
		if status == "DEPLOY_FAILED" && !failed {
			failed = true
			h.Phase, h.Message = providers.PhaseFailed, app.String("message")
		}
	})
	allRunning = allRunning && apps > 0
	switch {
	case failed:
	case allRunning:
		h.Phase = providers.PhaseRunning
	case apps > 0:
		h.Phase = providers.PhaseDeploying
	}
	var desired int32
	f.EachItem([]string{"spec", "rayClusterConfig", "workerGroupSpecs"}, func(g *providers.Fields) {
		n, _ := g.Int32("replicas")
		desired = providers.SaturatingAdd(desired, n)
	})
	h.Replicas = &providers.Replicas{Desired: desired}
	if allRunning {
		h.Replicas.Ready, h.Replicas.Available = desired, desired
	}
	e := endpoint(obj.GetName())
	h.Endpoint = &e
	h.Unreadable = f.Problems()
	return h
}
