package dynamo

import (
	"testing"

	"github.com/airunway-render/airunway-render/internal/providertest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/stretchr/testify/require"
)

// TestHealth follows upstream-behaviour.md §5's Dynamo row.
func TestHealth(t *testing.T) {
	const dgd = "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: llama, namespace: ai}\n"
	frontend := &providers.Endpoint{Service: "llama-frontend", Port: 8000}
	for _, tc := range []struct {
		name, status string
		want         providers.Health
	}{
		{"no status", "", providers.Health{Phase: "Pending", Replicas: &providers.Replicas{}, Endpoint: frontend}},
		{"successful", "status: {state: successful}", providers.Health{Phase: "Running", Replicas: &providers.Replicas{}, Endpoint: frontend}},
		{"initializing", "status: {state: initializing, message: pulling}", providers.Health{Phase: "Deploying", Message: "pulling", Replicas: &providers.Replicas{}, Endpoint: frontend}},
		{"deploying", "status: {state: deploying}", providers.Health{Phase: "Deploying", Replicas: &providers.Replicas{}, Endpoint: frontend}},
		{"failed with message", "status: {state: failed, message: image pull backoff}", providers.Health{Phase: "Failed", Message: "image pull backoff", Replicas: &providers.Replicas{}, Endpoint: frontend}},
		{"unknown state", "status: {state: paused}", providers.Health{Phase: "Pending", Replicas: &providers.Replicas{}, Endpoint: frontend}},
		{"replicas summed over services, ready and available stand in for each other",
			"status: {state: deploying, services: {Frontend: {replicas: 1, readyReplicas: 1}, VllmWorker: {replicas: 3, availableReplicas: 2}}}",
			providers.Health{Phase: "Deploying", Replicas: &providers.Replicas{Desired: 4, Ready: 3, Available: 3}, Endpoint: frontend}},
		{"top-level counts win", "status: {state: successful, desiredReplicas: 5, readyReplicas: 5, availableReplicas: 4, services: {A: {replicas: 1}}}",
			providers.Health{Phase: "Running", Replicas: &providers.Replicas{Desired: 5, Ready: 5, Available: 4}, Endpoint: frontend}},
		{"endpoint from status", "status: {state: successful, endpoint: {service: llama-epp, port: 9000}}",
			providers.Health{Phase: "Running", Replicas: &providers.Replicas{}, Endpoint: &providers.Endpoint{Service: "llama-epp", Port: 9000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Provider{}.Health(providertest.Object(t, dgd+tc.status)))
		})
	}
}
