package dynamo

import "github.com/airunway-render/airunway-render/providers"

// ChangeRules: a change of a DynamoGraphDeployment's services makes the
// Dynamo operator roll the services' pods, so the model servers load
// their model again.
func (Provider) ChangeRules() map[string]providers.KindChangeRules {
	return map[string]providers.KindChangeRules{
		Kind: {Restarts: []string{"spec.services"}},
	}
}
