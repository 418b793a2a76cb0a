package kaito

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// TestHealth follows upstream's KAITO StatusTranslator
// (providers/kaito/status.go in kaito-project/airunway).
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

// TestHealthMalformed: a Workspace status of the wrong shape never
// panics; the fields that cannot be read are named, unknown states are
// reported as upstream does, and messages are cut to
// providers.MaxMessageBytes.
func TestHealthMalformed(t *testing.T) {
	const ws = "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: phi, namespace: ai}\n"
	huge := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name, doc  string
		phase      string
		unreadable []string
	}{
		{"status a list", "status: [Ready]", "Pending", []string{"status is a list, want an object"}},
		{"state a number", "status: {state: 3}", "Pending", []string{"status.state is a number, want a string"}},
		{"state an object, conditions read instead", "status: {state: {phase: Ready}, conditions: [{type: WorkspaceSucceeded, status: \"True\"}]}", "Running",
			[]string{"status.state is an object, want a string"}},
		{"conditions a string", "status: {conditions: WorkspaceSucceeded}", "Pending", []string{"status.conditions is a string, want a list"}},
		{"condition without a type", "status: {conditions: [{status: \"True\"}]}", "Pending", []string{"status.conditions[0].type is missing, want a non-empty string"}},
		{"count as a string", "resource: {count: \"2\"}\nstatus: {state: Ready}", "Running", []string{"resource.count is a string, want an integer"}},
		{"resource a string", "resource: big\nstatus: {state: Ready}", "Running", []string{"resource is a string, want an object"}},
		{"null everywhere", "resource: null\nstatus: {state: null, conditions: null}", "Pending", nil},
		{"unknown condition status", "status: {conditions: [{type: WorkspaceSucceeded, status: Maybe}]}", "Pending", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Provider{}.Health(providertest.Object(t, ws+tc.doc))
			require.Equal(t, tc.phase, h.Phase)
			require.Equal(t, tc.unreadable, h.Unreadable)
		})
	}
	t.Run("huge unknown state", func(t *testing.T) {
		h := Provider{}.Health(providertest.Object(t, ws+"status: {state: "+huge+"}"))
		require.Equal(t, "Pending", h.Phase)
		require.True(t, strings.HasPrefix(h.Message, "unknown state: xxx"))
		require.LessOrEqual(t, len(h.Message), len("unknown state: ")+providers.MaxMessageBytes)
		require.True(t, strings.HasSuffix(h.Message, providers.TruncatedMarker))
	})
	t.Run("huge failure message", func(t *testing.T) {
		h := Provider{}.Health(providertest.Object(t, ws+"status: {conditions: [{type: WorkspaceSucceeded, status: \"False\", message: "+huge+"}]}"))
		require.Equal(t, "Failed", h.Phase)
		require.Len(t, h.Message, providers.MaxMessageBytes)
		require.True(t, strings.HasSuffix(h.Message, providers.TruncatedMarker))
	})
}
