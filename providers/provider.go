package providers

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// Object is one rendered Kubernetes object.
type Object = map[string]any

// Request is everything a provider may read.
type Request struct {
	// MD is defaulted and validated; providers must not modify it.
	MD *hub.ModelDeployment
	// Engine is the resolved engine type.
	Engine string
	// Provider is the capability file's entry for this provider, never nil.
	Provider *hub.ResolvedProvider
	// Caps is the whole resolved capability file, never nil.
	Caps *hub.ResolvedCapabilities
	// GatewayEnabled is the engine's gateway decision for this model
	// (hub.ModelDeployment.GatewayEnabled): it is served through the
	// cluster's Gateway API Inference Extension. The gateway objects and
	// a provider's own topology (Dynamo's Epp) both follow it.
	GatewayEnabled bool
	// Placement says which node pool each component runs on; use
	// Placement.For(component) for a pod's nodeSelector and tolerations.
	Placement *Placement
}

// NodeSpanner is implemented by providers whose replicas can span several
// nodes (Dynamo's multinode workers): each replica is then that many pods,
// one per node, each with the component's GPUs.
type NodeSpanner interface {
	NodesPerPod(md *hub.ModelDeployment, component string) int32
}

// UpgradeNoter is implemented by providers whose operator, when upgraded,
// changes what already runs beyond what the rendered objects show (KAITO
// 0.8 moves every Workspace to a StatefulSet). `airunway-render preview`
// lists the notes next to the object differences.
type UpgradeNoter interface {
	// UpgradeNotes says what moving the operator from one release to
	// another does to the workloads it runs.
	UpgradeNotes(from, to *version.Version) []UpgradeNote
}

// UpgradeNote is one fact of an operator upgrade a reviewer must know.
type UpgradeNote struct {
	// Breaking: the workloads are recreated or restarted whatever the
	// rendered objects show.
	Breaking bool
	Message  string
}

// Provider renders one kind of inference deployment.
type Provider interface {
	// Name is the provider name used in `spec.provider.name`.
	Name() string
	// Check reports what this provider cannot serve, as upstream's provider
	// controllers do before rendering, beyond the engines, serving modes
	// and GPUs of its capability catalogue entry, which the render engine
	// checks for every provider.
	Check(req *Request) diag.List
	// Render returns the provider objects for the ModelDeployment.
	Render(req *Request) ([]Object, diag.List)
}

// FromTyped converts a typed Kubernetes object into an Object, dropping
// what a typed Go struct always serialises but a reviewer must not see:
// null values, `creationTimestamp: null`, empty `status`, `strategy` and
// `resources` objects.
func FromTyped(v any) (Object, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	prune(obj)
	// Rendered objects state intent only; status belongs to the cluster.
	delete(obj, "status")
	return obj, nil
}

var emptyNoise = map[string]bool{"status": true, "strategy": true, "resources": true, "metadata": true}

func prune(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(t)
			if len(t) == 0 && emptyNoise[k] {
				delete(m, k)
			}
		case []any:
			for _, e := range t {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}
