package kuberay

import (
	"testing"

	"github.com/airunway-render/airunway-render/internal/providertest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/stretchr/testify/require"
)

// TestHealth follows upstream-behaviour.md §5's KubeRay row.
func TestHealth(t *testing.T) {
	const rs = "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: qwen, namespace: ai}\n" +
		"spec: {rayClusterConfig: {workerGroupSpecs: [{groupName: prefill-workers, replicas: 1}, {groupName: decode-workers, replicas: 2}]}}\n"
	svc := &providers.Endpoint{Service: "qwen-serve-svc", Port: 8000}
	notReady := &providers.Replicas{Desired: 3}
	for _, tc := range []struct {
		name, status string
		want         providers.Health
	}{
		{"no status", "", providers.Health{Phase: "Pending", Replicas: notReady, Endpoint: svc}},
		{"ready condition", "status: {conditions: [{type: RayServiceReady, status: \"True\"}]}", providers.Health{Phase: "Running", Replicas: notReady, Endpoint: svc}},
		{"not ready condition", "status: {conditions: [{type: RayServiceReady, status: \"False\", message: waiting for head}]}",
			providers.Health{Phase: "Deploying", Message: "waiting for head", Replicas: notReady, Endpoint: svc}},
		{"all applications running", "status: {activeServiceStatus: {applicationStatuses: {llm: {status: RUNNING}}}}",
			providers.Health{Phase: "Running", Replicas: &providers.Replicas{Desired: 3, Ready: 3, Available: 3}, Endpoint: svc}},
		{"an application deploying overrides the condition", "status: {conditions: [{type: RayServiceReady, status: \"True\"}], activeServiceStatus: {applicationStatuses: {a: {status: RUNNING}, b: {status: DEPLOYING}}}}",
			providers.Health{Phase: "Deploying", Replicas: notReady, Endpoint: svc}},
		{"a failed application fails", "status: {activeServiceStatus: {applicationStatuses: {a: {status: RUNNING}, b: {status: DEPLOY_FAILED, message: import error}}}}",
			providers.Health{Phase: "Failed", Message: "import error", Replicas: notReady, Endpoint: svc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Provider{}.Health(providertest.Object(t, rs+tc.status)))
		})
	}
}
