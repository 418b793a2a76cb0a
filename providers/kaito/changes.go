package kaito

import "github.com/airunway-render/airunway-render/providers"

// ChangeRules states what KAITO's admission webhook (kaito.sh/v1beta1
// Workspaces) refuses on update: labelSelector is immutable, count and a
// set instanceType cannot change, and inference and tuning cannot be
// swapped. A change of the inference template replaces the model server.
func (Provider) ChangeRules() map[string]providers.KindChangeRules {
	return map[string]providers.KindChangeRules{
		Kind: {
			Immutable: []providers.ImmutableField{
				{Path: "resource.labelSelector", Why: "KAITO's webhook refuses to change a Workspace's `resource.labelSelector`"},
				{Path: "resource.count", Why: "KAITO's webhook refuses to change a Workspace's `resource.count`"},
				{Path: "resource.instanceType", Why: "KAITO's webhook refuses to change a Workspace's `resource.instanceType` once set", OnlyWhenSet: true},
			},
			Exclusive: [2]string{"inference", "tuning"},
			Restarts:  []string{"inference"},
		},
	}
}
