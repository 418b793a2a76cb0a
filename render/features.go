package render

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// unrenderedFeatures refuses the v1alpha2 field a provider does not render
// yet, Dynamo's LoRA adapters, so that a model asking for them fails
// closed instead of being deployed without them. Every other provider
// renders adapters and autoscaling, or refuses them in its own Check.
func unrenderedFeatures(md *hub.ModelDeployment, provider string) diag.List {
	var l diag.List
	if len(md.Spec.Adapters) > 0 && provider == hub.ProviderDynamo {
		l.Errorf("spec.adapters", "LoRA adapters are not rendered for the %s provider by this release of airunway-render; remove `spec.adapters` or serve the adapters through `spec.engine.extraArgs`", provider)
	}
	return l
}
