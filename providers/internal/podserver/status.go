package podserver

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/providers"
)

// HealthFields are the fields outside metadata and status Health reads.
var HealthFields = []string{"spec.replicas"}

// Health translates the status of a model-server Deployment as upstream's
// llm-d and vLLM providers do: Available wins, a rollout past its deadline
// fails, a progressing rollout deploys, an unavailable Deployment with a
// message fails, anything else is pending.
func Health(obj *unstructured.Unstructured) providers.Health {
	f := providers.Read(obj)
	c := f.Conditions()
	h := providers.Health{Phase: providers.PhasePending}
	switch available, progressing := c["Available"], c["Progressing"]; {
	case available.Status == "True":
		h.Phase = providers.PhaseRunning
	case progressing.Status == "False" && progressing.Reason == "ProgressDeadlineExceeded":
		h.Phase, h.Message = providers.PhaseFailed, progressing.Message
		if h.Message == "" {
			h.Message = "deployment timed out waiting for rollout"
		}
	case progressing.Status == "True":
		h.Phase = providers.PhaseDeploying
	case available.Status == "False" && available.Message != "":
		h.Phase, h.Message = providers.PhaseFailed, available.Message
	}
	desired, _ := f.Int32("spec", "replicas")
	ready, _ := f.Int32("status", "readyReplicas")
	avail, _ := f.Int32("status", "availableReplicas")
	h.Replicas = &providers.Replicas{Desired: desired, Ready: ready, Available: avail}
	e := Endpoint(obj.GetName())
	h.Endpoint = &e
	h.Unreadable = f.Problems()
	return h
}

// Primary is the model-server Deployment that stands for the deployment.
func Primary(name string) providers.Primary {
	return providers.Primary{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Name: name, Noun: "Deployments"}
}

// Endpoint is the Service the renderer puts in front of the Deployment
// named name: the same name, the server's port.
func Endpoint(name string) providers.Endpoint {
	return providers.Endpoint{Service: name, Port: Port}
}
