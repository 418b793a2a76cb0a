package dynamo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
)

// intentCaps declares Dynamo 1.5.0, the first release serving the request.
const intentCaps = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: dynamo-1-5}
spec:
  providers:
  - {name: dynamo, version: "1.5.0"}
`

func intentProblems(t *testing.T, overrides string, opts ...opt) (kinds []string, l diag.List) {
	t.Helper()
	req := request(t, "", base, append([]opt{withCaps(t, intentCaps), withOverrides(overrides)}, opts...)...)
	objs, l := Provider{}.Render(req)
	for _, o := range objs {
		kinds = append(kinds, o["kind"].(string))
	}
	return kinds, l
}

// TestIntentMode: `deploymentMode` chooses the object; the intent keys
// need intent mode; a mode other than intent or manual is refused; the
// manual mode keeps merging `spec` into the graph.
func TestIntentMode(t *testing.T) {
	kinds, l := intentProblems(t, `{"deploymentMode": "intent", "searchStrategy": "thorough", "autoApply": false, "plannerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.5.0"}`)
	require.False(t, l.HasErrors(), "%v", l)
	require.Equal(t, []string{RequestKind}, kinds)
	req := request(t, "", base, withCaps(t, intentCaps), withOverrides(`{"deploymentMode": "intent", "searchStrategy": "thorough", "autoApply": false, "plannerImage": "p:1"}`))
	objs, _ := Provider{}.Render(req)
	spec := objs[0]["spec"].(map[string]any)
	require.Equal(t, []any{"thorough", false, "p:1", "vllm", "meta-llama/Llama-2-7b-chat-hf", int64(1)},
		[]any{spec["searchStrategy"], spec["autoApply"], spec["image"], spec["backend"], spec["model"], dig(spec, "hardware", "totalGpus")})
	require.Equal(t, RequestKind, Provider{}.Workload(req))

	_, l = intentProblems(t, `{"deploymentMode": "auto"}`)
	require.Contains(t, text(l), `spec.provider.overrides.deploymentMode: "auto" is not supported: must be "intent"`)
	_, l = intentProblems(t, `{"searchStrategy": "rapid", "autoApply": true}`)
	require.Contains(t, text(l), "spec.provider.overrides.searchStrategy: requires `deploymentMode: intent`")
	require.Contains(t, text(l), "spec.provider.overrides.autoApply: requires `deploymentMode: intent`")

	manual := renderSpec(t, base, withCaps(t, intentCaps), withOverrides(`{"deploymentMode": "manual", "spec": {"backendFramework": "vllm"}}`))
	require.Equal(t, Kind, manual.obj["kind"])
	require.Equal(t, "vllm", dig(manual.obj, "spec", "backendFramework"))
	require.Empty(t, Provider{}.Workload(request(t, "", base, withCaps(t, intentCaps))))
}

// TestIntentModeMocker: the mocker stays a graph, with a warning that
// names the dropped mode.
func TestIntentModeMocker(t *testing.T) {
	req := request(t, mockerMeta, base, withCaps(t, intentCaps), withOverrides(`{"deploymentMode": "intent"}`))
	objs, l := Provider{}.Render(req)
	require.False(t, l.HasErrors(), "%v", l)
	require.Equal(t, Kind, objs[0]["kind"])
	require.Contains(t, text(l), "spec.provider.overrides.deploymentMode: is ignored for the Dynamo mocker")
}

// TestRequestHealth: the request's phases as upstream's PR #428 reads them.
func TestRequestHealth(t *testing.T) {
	for _, tc := range []struct{ status, phase, message string }{
		{"{}", "Pending", ""},
		{"{phase: Profiling, conditions: [{type: Profiling, status: \"True\", message: profiling}]}", "Deploying", "profiling"},
		{"{phase: Ready}", "Deploying", "DGDR plan is ready; autoApply is false"},
		{"{phase: Deployed, dgdName: g}", "Running", ""},
		{"{phase: Failed, conditions: [{type: A, status: \"True\", message: first}, {type: B, status: \"False\", message: second}]}", "Failed", "first"},
		{"{phase: Failed, conditions: [{type: A, status: \"False\", message: \"\"}, {type: B, status: \"False\", message: second}]}", "Failed", ""},
	} {
		obj := providertest.Object(t, "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeploymentRequest\nmetadata: {name: m, namespace: ns}\nspec: {autoApply: false}\nstatus: "+tc.status)
		h := Provider{}.Health(obj)
		require.Equal(t, tc.phase, h.Phase, tc.status)
		require.Equal(t, tc.message, h.Message, tc.status)
		if tc.phase == "Running" {
			require.Equal(t, "g-frontend", h.Endpoint.Service)
		}
		require.Empty(t, h.Unreadable)
	}
}

// text is every problem, one a line.
func text(l diag.List) string {
	var b strings.Builder
	for _, p := range l {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}
