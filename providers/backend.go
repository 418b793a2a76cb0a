package providers

import "github.com/airunway-render/airunway-render/api/hub"

// Backend tells the gateway how its InferencePool reaches the model servers
// a provider renders. The pool must select pods that really carry
// PodSelector: where the renderer writes the pod template it adds
// `airunway.ai/model-deployment`; where an operator creates the pods, the
// provider names the label that operator puts on them.
type Backend struct {
	// PodSelector are labels every pod serving user requests carries.
	PodSelector map[string]string
	// Port is the container port the model server listens on.
	Port int32
	// ServedName is the model name the server answers to when the provider,
	// not `spec.model.servedName`, decides it; "" otherwise.
	ServedName string
	// IgnoresServedName is true when the rendered server never receives
	// `spec.model.servedName`, so the route must not match on it.
	IgnoresServedName bool
}

// Routable is implemented by providers whose model servers the gateway can
// route to. A provider whose operator manages its own InferencePool (its
// engine capability says `managesInferencePool`) need not implement it.
type Routable interface {
	Backend(req *Request) Backend
}

// ModelPodSelector is the selector of providers whose pod templates the
// renderer writes.
func ModelPodSelector(req *Request) map[string]string {
	return map[string]string{hub.LabelModelDeployment: req.MD.Name}
}
