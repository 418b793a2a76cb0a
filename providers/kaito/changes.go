package kaito

import "github.com/airunway-render/airunway-render/providers"

// ChangeRules states what KAITO's admission webhook (kaito.sh/v1beta1
// Workspaces and InferenceSets) refuses on update: labelSelector is immutable, count and a
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
		// The InferenceSet's webhook refuses only a change of the template's
		// partition (api/v1beta1/inferenceset_validation.go, v0.12.0),
		// which the renderer never writes; its controller copies a template
		// change to its Workspaces' labels and nothing else (pkg/inferenceset,
		// "Updating the template" in KAITO's docs).
		InferenceSetKind: {
			NotRolledOut: []providers.NotRolledOut{
				{Path: "spec.template.inference", Why: "KAITO's InferenceSet controller does not roll a template change out to the Workspaces it made: the running replicas keep serving the old template, and only Workspaces it makes afterwards (scaling up) get the new one; delete the Workspaces labelled `inferenceset.kaito.sh/created-by` one at a time to replace them"},
				{Path: "spec.labelSelector", Why: "KAITO's InferenceSet controller does not move the Workspaces it made: the running replicas stay on their nodes, and only Workspaces it makes afterwards select nodes by the new labels; delete the Workspaces labelled `inferenceset.kaito.sh/created-by` one at a time to move them"},
			},
		},
	}
}
