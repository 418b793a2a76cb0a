package dynamo

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/providers"
)

// defaultServePort is the frontend port when the graph's status names none.
const defaultServePort = 8000

// Primary implements providers.Reporter: the graph named like the model.
func (Provider) Primary(md *v1.ModelDeployment) providers.Primary {
	return providers.Primary{GVK: schema.FromAPIVersionAndKind(APIVersion, Kind), Name: md.Name, Noun: Kind}
}

// Health implements providers.Reporter as upstream translates a graph:
// `status.state` and `status.message`, replicas summed over the services
// (top-level counts win where the operator writes them), the endpoint
// from `status.endpoint` else `<name>-frontend:8000`.
func (Provider) Health(obj *unstructured.Unstructured) providers.Health {
	state, _, _ := unstructured.NestedString(obj.Object, "status", "state")
	msg, _, _ := unstructured.NestedString(obj.Object, "status", "message")
	h := providers.Health{Phase: providers.PhasePending, Message: msg}
	switch state {
	case "successful":
		h.Phase = providers.PhaseRunning
	case "initializing", "deploying":
		h.Phase = providers.PhaseDeploying
	case "failed":
		h.Phase = providers.PhaseFailed
	}
	h.Replicas = replicas(obj.Object)
	h.Endpoint = &providers.Endpoint{Service: obj.GetName() + "-frontend", Port: defaultServePort}
	if svc, _, _ := unstructured.NestedString(obj.Object, "status", "endpoint", "service"); svc != "" {
		h.Endpoint.Service = svc
	}
	if port, ok := providers.Int32(obj.Object, "status", "endpoint", "port"); ok && port > 0 {
		h.Endpoint.Port = port
	}
	return h
}

func replicas(obj map[string]any) *providers.Replicas {
	r := &providers.Replicas{}
	services, _, _ := unstructured.NestedMap(obj, "status", "services")
	names := make([]string, 0, len(services))
	for name := range services {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		svc, ok := services[name].(map[string]any)
		if !ok {
			continue
		}
		desired, _ := providers.Int32(svc, "replicas")
		ready, hasReady := providers.Int32(svc, "readyReplicas")
		available, hasAvailable := providers.Int32(svc, "availableReplicas")
		if !hasReady {
			ready = available
		}
		if !hasAvailable {
			available = ready
		}
		r.Desired += desired
		r.Ready += ready
		r.Available += available
	}
	for field, dst := range map[string]*int32{"desiredReplicas": &r.Desired, "readyReplicas": &r.Ready, "availableReplicas": &r.Available} {
		if v, ok := providers.Int32(obj, "status", field); ok {
			*dst = v
		}
	}
	return r
}
