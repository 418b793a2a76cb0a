package dynamo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// TestHealth follows upstream's Dynamo StatusTranslator
// (providers/dynamo/status.go in kaito-project/airunway).
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

// TestHealthMalformed: a graph status of the wrong shape never panics;
// the fields that cannot be read are named, counts cannot wrap, and the
// message is cut to providers.MaxMessageBytes.
func TestHealthMalformed(t *testing.T) {
	const dgd = "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: llama, namespace: ai}\n"
	frontend := &providers.Endpoint{Service: "llama-frontend", Port: 8000}
	for _, tc := range []struct {
		name, doc  string
		phase      string
		replicas   *providers.Replicas
		endpoint   *providers.Endpoint
		unreadable []string
	}{
		{"status a string", "status: successful", "Pending", &providers.Replicas{}, frontend, []string{"status is a string, want an object"}},
		{"state a list", "status: {state: [successful]}", "Pending", &providers.Replicas{}, frontend, []string{"status.state is a list, want a string"}},
		{"services a list", "status: {state: successful, services: [{replicas: 1}]}", "Running", &providers.Replicas{}, frontend,
			[]string{"status.services is a list, want an object"}},
		{"a service a string", "status: {state: successful, services: {Frontend: up, Worker: {replicas: 2, readyReplicas: 2}}}", "Running",
			&providers.Replicas{Desired: 2, Ready: 2, Available: 2}, frontend, []string{"status.services.Frontend is a string, want an object"}},
		{"counts as strings", "status: {state: deploying, readyReplicas: \"1\", services: {Frontend: {replicas: \"1\"}}}", "Deploying",
			&providers.Replicas{}, frontend, []string{"status.readyReplicas is a string, want an integer", "status.services.Frontend.replicas is a string, want an integer"}},
		{"counts do not wrap", "status: {state: successful, services: {A: {replicas: 2147483647, readyReplicas: 2147483647}, B: {replicas: 2147483647, readyReplicas: 1}}}", "Running",
			&providers.Replicas{Desired: 2147483647, Ready: 2147483647, Available: 2147483647}, frontend, nil},
		{"port past 65535", "status: {state: successful, endpoint: {service: llama-epp, port: 70000}}", "Running", &providers.Replicas{},
			&providers.Endpoint{Service: "llama-epp", Port: 8000}, []string{"status.endpoint.port is 70000, want a port from 1 to 65535"}},
		{"port as a string", "status: {state: successful, endpoint: {port: \"9000\"}}", "Running", &providers.Replicas{}, frontend,
			[]string{"status.endpoint.port is a string, want an integer"}},
		{"endpoint a string", "status: {state: successful, endpoint: \"llama:9000\"}", "Running", &providers.Replicas{}, frontend,
			[]string{"status.endpoint is a string, want an object"}},
		{"null everywhere", "status: {state: null, message: null, services: {A: null}, endpoint: null, readyReplicas: null}", "Pending", &providers.Replicas{}, frontend, nil},
		{"unknown state", "status: {state: hibernating}", "Pending", &providers.Replicas{}, frontend, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Provider{}.Health(providertest.Object(t, dgd+tc.doc))
			require.Equal(t, tc.phase, h.Phase)
			require.Equal(t, tc.replicas, h.Replicas)
			require.Equal(t, tc.endpoint, h.Endpoint)
			require.Equal(t, tc.unreadable, h.Unreadable)
		})
	}
	t.Run("huge message and service name", func(t *testing.T) {
		huge := strings.Repeat("x", 1<<20)
		h := Provider{}.Health(providertest.Object(t, dgd+"status: {state: failed, message: "+huge+", endpoint: {service: "+huge+"}}"))
		require.Equal(t, "Failed", h.Phase)
		require.Len(t, h.Message, providers.MaxMessageBytes)
		require.True(t, strings.HasSuffix(h.Message, providers.TruncatedMarker))
		require.Len(t, h.Endpoint.Service, providers.MaxMessageBytes)
	})
}
