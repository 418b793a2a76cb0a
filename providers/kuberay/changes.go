package kuberay

import "github.com/airunway-render/airunway-render/providers"

// ChangeRules: a change of a RayService's cluster configuration makes the
// KubeRay operator bring up a new RayCluster and switch to it, so the
// model servers load their model again.
func (Provider) ChangeRules() map[string]providers.KindChangeRules {
	return map[string]providers.KindChangeRules{
		Kind: {Restarts: []string{"spec.rayClusterConfig"}},
	}
}
