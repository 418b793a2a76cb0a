package dynamo

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// defaultServePort is the frontend port when the graph's status names none.
const defaultServePort = 8000

// maxPort is the highest TCP port a Service can expose.
const maxPort = 65535

// Primary implements providers.Reporter: the graph named like the model,
// or the request in intent mode (hub.AnnotationWorkload).
func (Provider) Primary(md *hub.ModelDeployment) providers.Primary {
	if md.Annotations[hub.AnnotationWorkload] == RequestKind {
		return providers.Primary{GVK: schema.FromAPIVersionAndKind(RequestAPIVersion, RequestKind), Name: md.Name, Noun: RequestKind}
	}
	return providers.Primary{GVK: schema.FromAPIVersionAndKind(APIVersion, Kind), Name: md.Name, Noun: Kind}
}

// PrimaryKinds implements providers.PrimaryKinds: the graph or the request.
func (Provider) PrimaryKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{schema.FromAPIVersionAndKind(APIVersion, Kind), schema.FromAPIVersionAndKind(RequestAPIVersion, RequestKind)}
}

// Endpoint implements providers.Endpointer: the graph's frontend Service,
// "<name>-frontend", as the operator names it unless its status says
// otherwise.
func (Provider) Endpoint(md *hub.ModelDeployment) providers.Endpoint { return endpoint(md.Name) }

func endpoint(graph string) providers.Endpoint {
	return providers.Endpoint{Service: graph + "-frontend", Port: defaultServePort}
}

// HealthFields implements providers.Reporter: a graph's health is all in
// its status; a request's also reads whether it applies its plan.
func (Provider) HealthFields() []string { return []string{"spec.autoApply"} }

// Health implements providers.Reporter as upstream translates a graph:
// `status.state` and `status.message`, replicas summed over the services
// (top-level counts win where the operator writes them), the endpoint
// from `status.endpoint` else `<name>-frontend:8000`.
func (Provider) Health(obj *unstructured.Unstructured) providers.Health {
	if obj.GetKind() == RequestKind {
		return requestHealth(obj)
	}
	f := providers.Read(obj)
	h := providers.Health{Phase: providers.PhasePending, Message: f.String("status", "message")}
	switch f.String("status", "state") {
	case "successful":
		h.Phase = providers.PhaseRunning
	case "initializing", "deploying":
		h.Phase = providers.PhaseDeploying
	case "failed":
		h.Phase = providers.PhaseFailed
	}
	h.Replicas = replicas(f)
	e := endpoint(obj.GetName())
	h.Endpoint = &e
	if svc := f.String("status", "endpoint", "service"); svc != "" {
		h.Endpoint.Service = svc
	}
	if port, ok := f.Int32("status", "endpoint", "port"); ok && port > maxPort {
		f.Problem([]string{"status", "endpoint", "port"}, "is %d, want a port from 1 to %d", port, maxPort)
	} else if ok && port > 0 {
		h.Endpoint.Port = port
	}
	h.Unreadable = f.Problems()
	return h
}

// replicas sums the services' counts (saturating, so no number of
// services can wrap them negative); top-level counts win.
func replicas(f *providers.Fields) *providers.Replicas {
	r := &providers.Replicas{}
	f.Each([]string{"status", "services"}, func(_ string, svc *providers.Fields) {
		desired, _ := svc.Int32("replicas")
		ready, hasReady := svc.Int32("readyReplicas")
		available, hasAvailable := svc.Int32("availableReplicas")
		if !hasReady {
			ready = available
		}
		if !hasAvailable {
			available = ready
		}
		r.Desired = providers.SaturatingAdd(r.Desired, desired)
		r.Ready = providers.SaturatingAdd(r.Ready, ready)
		r.Available = providers.SaturatingAdd(r.Available, available)
	})
	for _, top := range []struct {
		field string
		dst   *int32
	}{{"desiredReplicas", &r.Desired}, {"readyReplicas", &r.Ready}, {"availableReplicas", &r.Available}} {
		if v, ok := f.Int32("status", top.field); ok {
			*top.dst = v
		}
	}
	return r
}
