package render

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// unrenderedFeatures refuses the v1alpha2 fields a provider does not
// render yet (Dynamo's LoRA adapters, Dynamo's and KubeRay's autoscaling),
// so that a model asking for them fails closed instead of being deployed
// without them. Each provider takes them over in its own Check and Render
// (issue 26), and this list shrinks: the vllm and llmd providers render
// adapters and autoscaling; the kaito provider refuses both in its Check,
// the kuberay provider adapters.
func unrenderedFeatures(md *hub.ModelDeployment, provider string) diag.List {
	var l diag.List
	if len(md.Spec.Adapters) > 0 && provider == hub.ProviderDynamo {
		l.Errorf("spec.adapters", "LoRA adapters are not rendered for the %s provider by this release of airunway-render; remove `spec.adapters` or serve the adapters through `spec.engine.extraArgs`", provider)
	}
	if md.Spec.Autoscaling() != nil && (provider == hub.ProviderDynamo || provider == hub.ProviderKubeRay) {
		l.Errorf("spec.scaling.autoscaling", "autoscaling is not rendered for the %s provider by this release of airunway-render; set a fixed `spec.scaling.replicas` instead", provider)
	}
	return l
}
