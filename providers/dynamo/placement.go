package dynamo

import (
	"encoding/json"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

var _ providers.NodeSpanner = Provider{}

// NodesPerPod implements providers.NodeSpanner: a worker given
// `spec.services.<worker>.multinode.nodeCount` through overrides (the
// documented way to run Dynamo multinode) is that many pods per replica,
// one per node, each with the service's `gpu`: Dynamo's `gpu` is per node
// (docs/kubernetes/deployment/multinode-deployment.md, "GPU
// Distribution"), so a pool must hold all of it on one node.
func (Provider) NodesPerPod(md *hub.ModelDeployment, component string) int32 {
	if md.Spec.Provider == nil || len(md.Spec.Provider.Overrides) == 0 {
		return 1
	}
	var o struct {
		Spec struct {
			Services map[string]struct {
				Multinode *struct {
					NodeCount int32 `json:"nodeCount"`
				} `json:"multinode"`
			} `json:"services"`
		} `json:"spec"`
	}
	if json.Unmarshal(md.Spec.Provider.Overrides, &o) != nil {
		return 1 // not this shape; the override check reports real problems
	}
	service := map[string]string{
		providers.ComponentMain:    ServiceWorker,
		providers.ComponentPrefill: ServicePrefillWorker,
		providers.ComponentDecode:  ServiceDecodeWorker,
	}[component]
	if m := o.Spec.Services[service].Multinode; m != nil && m.NodeCount > 1 {
		return m.NodeCount
	}
	return 1
}
