package podserver

import (
	"testing"

	"github.com/airunway-render/airunway-render/internal/providertest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/stretchr/testify/require"
)

// TestHealth follows upstream-behaviour.md §5's llm-d/vLLM row.
func TestHealth(t *testing.T) {
	const dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: qwen-decode, namespace: ai}\nspec: {replicas: 2}\n"
	svc := &providers.Endpoint{Service: "qwen-decode", Port: 8000}
	for _, tc := range []struct {
		name, status string
		want         providers.Health
	}{
		{"no status", "", providers.Health{Phase: "Pending", Replicas: &providers.Replicas{Desired: 2}, Endpoint: svc}},
		{"available", "status: {readyReplicas: 2, availableReplicas: 2, conditions: [{type: Available, status: \"True\"}, {type: Progressing, status: \"True\"}]}",
			providers.Health{Phase: "Running", Replicas: &providers.Replicas{Desired: 2, Ready: 2, Available: 2}, Endpoint: svc}},
		{"progressing", "status: {readyReplicas: 1, conditions: [{type: Available, status: \"False\", message: min availability}, {type: Progressing, status: \"True\"}]}",
			providers.Health{Phase: "Deploying", Replicas: &providers.Replicas{Desired: 2, Ready: 1}, Endpoint: svc}},
		{"deadline exceeded", "status: {conditions: [{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded, message: \"ReplicaSet has timed out progressing.\"}]}",
			providers.Health{Phase: "Failed", Message: "ReplicaSet has timed out progressing.", Replicas: &providers.Replicas{Desired: 2}, Endpoint: svc}},
		{"deadline exceeded without message", "status: {conditions: [{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded}]}",
			providers.Health{Phase: "Failed", Message: "deployment timed out waiting for rollout", Replicas: &providers.Replicas{Desired: 2}, Endpoint: svc}},
		{"unavailable with a message", "status: {conditions: [{type: Available, status: \"False\", message: quota exceeded}]}",
			providers.Health{Phase: "Failed", Message: "quota exceeded", Replicas: &providers.Replicas{Desired: 2}, Endpoint: svc}},
		{"unavailable without a message", "status: {conditions: [{type: Available, status: \"False\"}]}",
			providers.Health{Phase: "Pending", Replicas: &providers.Replicas{Desired: 2}, Endpoint: svc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Health(providertest.Object(t, dep+tc.status)))
		})
	}
}
