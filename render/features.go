package render

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// unrenderedFeatures refuses the v1alpha2 fields no provider renders yet
// (LoRA adapters and autoscaling), so that a model asking for them fails
// closed instead of being deployed without them. Each provider takes them
// over in its own Check and Render (issue 26), and this list shrinks.
func unrenderedFeatures(md *hub.ModelDeployment, provider string) diag.List {
	var l diag.List
	if len(md.Spec.Adapters) > 0 {
		l.Errorf("spec.adapters", "LoRA adapters are not rendered for the %s provider by this release of airunway-render; remove `spec.adapters` or serve the adapters through `spec.engine.extraArgs`", provider)
	}
	if md.Spec.Autoscaling() != nil {
		l.Errorf("spec.scaling.autoscaling", "autoscaling is not rendered for the %s provider by this release of airunway-render; set a fixed `spec.scaling.replicas` instead", provider)
	}
	return l
}
