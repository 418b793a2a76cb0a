package kuberay

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// TestHealth follows upstream's KubeRay StatusTranslator
// (providers/kuberay/status.go in kaito-project/airunway).
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
		{"ready condition", "status: {conditions: [{type: Ready, status: \"True\"}]}", providers.Health{Phase: "Running", Replicas: notReady, Endpoint: svc}},
		// RayServiceReady is the Go constant's name; the operator writes
		// its value, Ready.
		{"a condition named after the constant", "status: {conditions: [{type: RayServiceReady, status: \"True\"}]}", providers.Health{Phase: "Pending", Replicas: notReady, Endpoint: svc}},
		{"not ready condition", "status: {conditions: [{type: Ready, status: \"False\", message: waiting for head}]}",
			providers.Health{Phase: "Deploying", Message: "waiting for head", Replicas: notReady, Endpoint: svc}},
		{"all applications running", "status: {activeServiceStatus: {applicationStatuses: {llm: {status: RUNNING}}}}",
			providers.Health{Phase: "Running", Replicas: &providers.Replicas{Desired: 3, Ready: 3, Available: 3}, Endpoint: svc}},
		{"an application deploying overrides the condition", "status: {conditions: [{type: Ready, status: \"True\"}], activeServiceStatus: {applicationStatuses: {a: {status: RUNNING}, b: {status: DEPLOYING}}}}",
			providers.Health{Phase: "Deploying", Replicas: notReady, Endpoint: svc}},
		{"a failed application fails", "status: {activeServiceStatus: {applicationStatuses: {a: {status: RUNNING}, b: {status: DEPLOY_FAILED, message: import error}}}}",
			providers.Health{Phase: "Failed", Message: "import error", Replicas: notReady, Endpoint: svc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Provider{}.Health(providertest.Object(t, rs+tc.status)))
		})
	}
}

// TestHealthMalformed: a RayService status of the wrong shape never
// panics; the fields that cannot be read are named, unknown application
// statuses deploy, and messages are cut to providers.MaxMessageBytes.
func TestHealthMalformed(t *testing.T) {
	const rs = "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: qwen, namespace: ai}\n"
	for _, tc := range []struct {
		name, doc  string
		phase      string
		desired    int32
		unreadable []string
	}{
		{"status a number", "status: 7", "Pending", 0, []string{"status is a number, want an object"}},
		{"conditions an object", "status: {conditions: {Ready: \"True\"}}", "Pending", 0, []string{"status.conditions is an object, want a list"}},
		{"condition without a status", "status: {conditions: [{type: Ready}]}", "Pending", 0,
			[]string{"status.conditions[0].status is missing, want a non-empty string"}},
		{"applications a list", "status: {activeServiceStatus: {applicationStatuses: [{status: RUNNING}]}}", "Pending", 0,
			[]string{"status.activeServiceStatus.applicationStatuses is a list, want an object"}},
		{"an application a string", "status: {activeServiceStatus: {applicationStatuses: {llm: RUNNING}}}", "Pending", 0,
			[]string{"status.activeServiceStatus.applicationStatuses.llm is a string, want an object"}},
		{"application status a number", "status: {activeServiceStatus: {applicationStatuses: {llm: {status: 1}}}}", "Deploying", 0,
			[]string{"status.activeServiceStatus.applicationStatuses.llm.status is a number, want a string"}},
		{"unknown application status", "status: {activeServiceStatus: {applicationStatuses: {llm: {status: EXPLODING}}}}", "Deploying", 0, nil},
		{"worker groups an object", "spec: {rayClusterConfig: {workerGroupSpecs: {replicas: 2}}}", "Pending", 0,
			[]string{"spec.rayClusterConfig.workerGroupSpecs is an object, want a list"}},
		{"worker replicas as strings", "spec: {rayClusterConfig: {workerGroupSpecs: [{replicas: \"2\"}, {replicas: 1}]}}", "Pending", 1,
			[]string{"spec.rayClusterConfig.workerGroupSpecs[0].replicas is a string, want an integer"}},
		{"worker replicas do not wrap", "spec: {rayClusterConfig: {workerGroupSpecs: [{replicas: 2147483647}, {replicas: 2147483647}]}}", "Pending", 2147483647, nil},
		{"null everywhere", "spec: {rayClusterConfig: {workerGroupSpecs: [null]}}\nstatus: {conditions: null, activeServiceStatus: {applicationStatuses: null}}", "Pending", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Provider{}.Health(providertest.Object(t, rs+tc.doc))
			require.Equal(t, tc.phase, h.Phase)
			require.Equal(t, tc.desired, h.Replicas.Desired)
			require.Equal(t, tc.unreadable, h.Unreadable)
		})
	}
	huge := strings.Repeat("x", 1<<20)
	for name, doc := range map[string]string{
		"huge application message": "status: {activeServiceStatus: {applicationStatuses: {llm: {status: DEPLOY_FAILED, message: " + huge + "}}}}",
		"huge condition message":   "status: {conditions: [{type: Ready, status: \"False\", message: " + huge + "}]}",
	} {
		t.Run(name, func(t *testing.T) {
			h := Provider{}.Health(providertest.Object(t, rs+doc))
			require.Len(t, h.Message, providers.MaxMessageBytes)
			require.True(t, strings.HasSuffix(h.Message, providers.TruncatedMarker))
		})
	}
}
