package kaito

import (
	"testing"

	"github.com/airunway-render/airunway-render/internal/providertest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/stretchr/testify/require"
)

// TestHealth follows upstream-behaviour.md §5's KAITO row.
func TestHealth(t *testing.T) {
	const ws = "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: phi, namespace: ai}\nresource: {count: 2}\n"
	endpoint := &providers.Endpoint{Service: "phi", Port: 80}
	for _, tc := range []struct {
		name, status string
		want         providers.Health
	}{
		{"no status yet", "", providers.Health{Phase: "Pending"}},
		{"state Ready", "status: {state: Ready}", providers.Health{Phase: "Running", Replicas: &providers.Replicas{Desired: 2, Ready: 2, Available: 2}, Endpoint: endpoint}},
		{"state Succeeded", "status: {state: Succeeded}", providers.Health{Phase: "Running", Replicas: &providers.Replicas{Desired: 2, Ready: 2, Available: 2}, Endpoint: endpoint}},
		{"state NotReady", "status: {state: NotReady}", providers.Health{Phase: "Deploying", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"state Running is fine-tuning", "status: {state: Running}", providers.Health{Phase: "Deploying", Message: "fine-tuning in progress", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"state Failed", "status: {state: Failed}", providers.Health{Phase: "Failed", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"state Pending", "status: {state: Pending}", providers.Health{Phase: "Pending", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"unknown state", "status: {state: Upgrading}", providers.Health{Phase: "Pending", Message: "unknown state: Upgrading", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"state wins over conditions", "status: {state: NotReady, conditions: [{type: WorkspaceSucceeded, status: \"True\"}]}",
			providers.Health{Phase: "Deploying", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"before 0.10: WorkspaceSucceeded True", "status: {conditions: [{type: WorkspaceSucceeded, status: \"True\"}]}",
			providers.Health{Phase: "Running", Replicas: &providers.Replicas{Desired: 2, Ready: 2, Available: 2}, Endpoint: endpoint}},
		{"before 0.10: WorkspaceSucceeded False", "status: {conditions: [{type: WorkspaceSucceeded, status: \"False\", message: no GPU nodes}]}",
			providers.Health{Phase: "Failed", Message: "no GPU nodes", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"before 0.10: resources up, inference not", "status: {conditions: [{type: ResourceReady, status: \"True\"}, {type: InferenceReady, status: \"False\"}]}",
			providers.Health{Phase: "Deploying", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
		{"before 0.10: nothing ready", "status: {conditions: [{type: ResourceReady, status: \"False\"}]}",
			providers.Health{Phase: "Pending", Replicas: &providers.Replicas{Desired: 2}, Endpoint: endpoint}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Provider{}.Health(providertest.Object(t, ws+tc.status)))
		})
	}
}
