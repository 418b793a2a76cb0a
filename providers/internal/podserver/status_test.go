package podserver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// TestHealth follows upstream's llm-d and vLLM StatusTranslators
// (providers/llmd/status.go and providers/vllm/controller.go in
// kaito-project/airunway).
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

// TestHealthMalformed: a Deployment status of the wrong shape never
// panics; the fields that cannot be read are named, and messages copied
// from it are cut to providers.MaxMessageBytes.
func TestHealthMalformed(t *testing.T) {
	const dep = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: qwen-decode, namespace: ai}\n"
	huge := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name, doc  string
		phase      string
		unreadable []string
	}{
		{"status a string", "status: broken", "Pending", []string{"status is a string, want an object"}},
		{"conditions a string", "status: {conditions: Available}", "Pending", []string{"status.conditions is a string, want a list"}},
		{"conditions an object", "status: {conditions: {Available: \"True\"}}", "Pending", []string{"status.conditions is an object, want a list"}},
		{"counts as strings", "spec: {replicas: \"2\"}\nstatus: {readyReplicas: \"2\", conditions: [{type: Available, status: \"True\"}]}", "Running",
			[]string{"spec.replicas is a string, want an integer", "status.readyReplicas is a string, want an integer"}},
		{"negative count", "status: {availableReplicas: -3}", "Pending", []string{"status.availableReplicas is -3, want an integer from 0 to 2147483647"}},
		{"condition without type or status", "status: {conditions: [{reason: X}, {type: Available}]}", "Pending",
			[]string{"status.conditions[0].status is missing, want a non-empty string", "status.conditions[0].type is missing, want a non-empty string",
				"status.conditions[1].status is missing, want a non-empty string"}},
		{"null everywhere", "spec: null\nstatus: {readyReplicas: null, availableReplicas: null, conditions: [null]}", "Pending", nil},
		{"unknown condition status", "status: {conditions: [{type: Available, status: Maybe}]}", "Pending", nil},
		{"unknown condition type", "status: {conditions: [{type: Exploded, status: \"True\"}]}", "Pending", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Health(providertest.Object(t, dep+tc.doc))
			require.Equal(t, tc.phase, h.Phase)
			require.Equal(t, tc.unreadable, h.Unreadable)
		})
	}
	for _, status := range []string{
		"{conditions: [{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded, message: " + huge + "}]}",
		"{conditions: [{type: Available, status: \"False\", message: " + huge + "}]}",
	} {
		h := Health(providertest.Object(t, dep+"status: "+status))
		require.Equal(t, "Failed", h.Phase)
		require.Len(t, h.Message, providers.MaxMessageBytes)
		require.True(t, strings.HasSuffix(h.Message, providers.TruncatedMarker))
	}
}
