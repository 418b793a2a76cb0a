package dynamo

import "github.com/airunway-render/airunway-render/providers"

// ChangeRules: a change of a DynamoGraphDeployment's services makes the
// Dynamo operator roll the services' pods, so the model servers load
// their model again; a request's spec cannot change once it runs.
func (Provider) ChangeRules() map[string]providers.KindChangeRules {
	return map[string]providers.KindChangeRules{
		Kind: {Restarts: []string{"spec.services"}},
		// Dynamo's webhook refuses any change of a request's spec while it
		// is Profiling, Deploying, Ready or Deployed ("updates are
		// forbidden while the resource is in phase …; delete and recreate
		// the resource", internal/webhook/validation/
		// dynamographdeploymentrequest.go at the schemas' commit).
		RequestKind: {Immutable: []providers.ImmutableField{{Path: "spec", Why: "Dynamo's webhook refuses to change a DynamoGraphDeploymentRequest's spec once it is profiling, deploying or deployed"}}},
	}
}
