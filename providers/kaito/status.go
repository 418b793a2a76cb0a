package kaito

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// servicePort is the port of the Service KAITO creates for a Workspace.
const servicePort = 80

// Primary implements providers.Reporter: the Workspace named like the
// model, or the InferenceSet where the renderer recorded one
// (hub.AnnotationWorkload).
func (Provider) Primary(md *hub.ModelDeployment) providers.Primary {
	if md.Annotations[hub.AnnotationWorkload] == InferenceSetKind {
		return providers.Primary{GVK: schema.FromAPIVersionAndKind(APIVersion, InferenceSetKind), Name: md.Name, Noun: InferenceSetKind}
	}
	return providers.Primary{GVK: schema.FromAPIVersionAndKind(APIVersion, Kind), Name: md.Name, Noun: Kind}
}

// PrimaryKinds implements providers.PrimaryKinds: a Workspace or an
// InferenceSet.
func (Provider) PrimaryKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{schema.FromAPIVersionAndKind(APIVersion, Kind), schema.FromAPIVersionAndKind(APIVersion, InferenceSetKind)}
}

// Endpoint implements providers.Endpointer: the Service KAITO creates for
// a Workspace, named like it, on port 80.
func (Provider) Endpoint(md *hub.ModelDeployment) providers.Endpoint { return endpoint(md.Name) }

func endpoint(workspace string) providers.Endpoint {
	return providers.Endpoint{Service: workspace, Port: servicePort}
}

// HealthFields implements providers.Reporter: a Workspace's replicas are
// its `resource.count`, an InferenceSet's its `spec.replicas`.
func (Provider) HealthFields() []string { return []string{"resource.count", "spec.replicas"} }

// Health implements providers.Reporter as upstream translates a Workspace:
// `status.state` (KAITO 0.10 and later) when set, else the conditions of
// older releases. A Workspace that says neither is pending, with no
// replicas or endpoint.
func (Provider) Health(obj *unstructured.Unstructured) providers.Health {
	if obj.GetKind() == InferenceSetKind {
		return inferenceSetHealth(obj)
	}
	f := providers.Read(obj)
	h, ready, said := fromState(f)
	if !said {
		h, ready, said = fromConditions(f)
	}
	if said {
		count, _ := f.Int32("resource", "count")
		h.Replicas = &providers.Replicas{Desired: count}
		if ready {
			h.Replicas.Ready, h.Replicas.Available = count, count
		}
		e := endpoint(obj.GetName())
		h.Endpoint = &e
	}
	h.Unreadable = f.Problems()
	return h
}

func fromState(f *providers.Fields) (h providers.Health, ready, said bool) {
	state := f.String("status", "state")
	switch state {
	case "":
		return providers.Health{Phase: providers.PhasePending}, false, false
	case "Ready", "Succeeded":
		return providers.Health{Phase: providers.PhaseRunning}, true, true
	case "NotReady":
		return providers.Health{Phase: providers.PhaseDeploying}, false, true
	case "Running":
		return providers.Health{Phase: providers.PhaseDeploying, Message: "fine-tuning in progress"}, false, true
	case "Failed":
		return providers.Health{Phase: providers.PhaseFailed}, false, true
	case "Pending":
		return providers.Health{Phase: providers.PhasePending}, false, true
	}
	// The state was cut to MaxMessageBytes when read, so this is bounded.
	return providers.Health{Phase: providers.PhasePending, Message: "unknown state: " + state}, false, true
}

func fromConditions(f *providers.Fields) (h providers.Health, ready, said bool) {
	c := f.Conditions()
	if len(c) == 0 {
		return providers.Health{Phase: providers.PhasePending}, false, false
	}
	switch succeeded := c["WorkspaceSucceeded"]; {
	case succeeded.Status == "True":
		return providers.Health{Phase: providers.PhaseRunning}, true, true
	case succeeded.Status == "False":
		return providers.Health{Phase: providers.PhaseFailed, Message: succeeded.Message}, false, true
	case c["ResourceReady"].Status == "True" && c["InferenceReady"].Status != "True":
		return providers.Health{Phase: providers.PhaseDeploying}, false, true
	}
	return providers.Health{Phase: providers.PhasePending}, false, true
}
