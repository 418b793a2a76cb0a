package reporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func parseObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

// TestCachesKeepWhatIsRead: a primary object keeps its metadata (its
// managers' write times, not their field sets), status and the fields
// its Health reads; a route its rules and parents; a Gateway its
// addresses; a model everything but managed fields; none keeps the
// last-applied copy.
func TestCachesKeepWhatIsRead(t *testing.T) {
	t.Parallel()
	written := metav1.NewTime(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	managed := `
  managedFields:
  - {manager: argocd-controller, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:replicas": {}}}}
  - {manager: kube-controller-manager, operation: Update, subresource: status, time: "2026-11-27T10:00:00Z", fieldsType: FieldsV1, fieldsV1: {"f:status": {}}}`
	deployment := parseObject(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
  namespace: ai
  annotations: {render.airunway.ai/generated-from: qwen, kubectl.kubernetes.io/last-applied-configuration: "{...}"}`+managed+`
spec:
  replicas: 2
  template: {spec: {containers: [{name: vllm, args: [--model, qwen]}]}}
status: {readyReplicas: 2}
`)
	out, err := transformFor(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})(deployment)
	require.NoError(t, err)
	got := out.(*unstructured.Unstructured)
	require.Equal(t, map[string]any{"replicas": float64(2)}, got.Object["spec"].(map[string]any), "the pod template is not read")
	require.Equal(t, map[string]string{"render.airunway.ai/generated-from": "qwen"}, got.GetAnnotations())
	require.Len(t, got.GetManagedFields(), 2)
	for _, m := range got.GetManagedFields() {
		require.Nil(t, m.FieldsV1, "field sets are not read")
	}
	require.True(t, written.Time.Equal(lastWrite(got)), "the operator's last write survives")
	require.Equal(t, float64(2), got.Object["status"].(map[string]any)["readyReplicas"])

	route := parseObject(t, `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: qwen
  namespace: ai`+managed+`
spec:
  parentRefs: [{name: gw}]
  rules: [{matches: [{headers: [{name: X-Gateway-Model-Name, value: qwen}]}]}]
  hostnames: [a.example]
status: {parents: [{parentRef: {name: gw}, conditions: [{type: Accepted}]}]}
`)
	out, err = transformFor(routeGVK)(route)
	require.NoError(t, err)
	got = out.(*unstructured.Unstructured)
	require.Nil(t, got.Object["status"])
	require.Nil(t, got.GetManagedFields())
	require.Equal(t, "qwen", modelName(got))
	require.Len(t, parentGateways(got), 1)
	require.NotContains(t, got.Object["spec"], "hostnames")

	gw := parseObject(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec: {listeners: [{name: http, port: 80}]}
status: {addresses: [{value: 127.0.0.1}], listeners: [{name: http, attachedRoutes: 3}]}
`)
	out, err = transformFor(gatewayGVK)(gw)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"addresses": []any{map[string]any{"value": "127.0.0.1"}}}, out.(*unstructured.Unstructured).Object["status"])
	require.Nil(t, out.(*unstructured.Unstructured).Object["spec"])

	model := parseObject(t, `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: qwen
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{...}", render.airunway.ai/provider: vllm}`+managed+`
spec: {model: {id: Qwen/Qwen3-0.6B}}
status: {phase: Running}
`)
	out, err = trimModel(model)
	require.NoError(t, err)
	got = out.(*unstructured.Unstructured)
	require.Nil(t, got.GetManagedFields())
	require.Equal(t, map[string]string{"render.airunway.ai/provider": "vllm"}, got.GetAnnotations())
	require.Equal(t, "Qwen/Qwen3-0.6B", got.Object["spec"].(map[string]any)["model"].(map[string]any)["id"])

	tombstone := toolsTombstone{}
	out, err = trimModel(tombstone)
	require.NoError(t, err)
	require.Equal(t, tombstone, out, "what is not an object passes through")
}

type toolsTombstone struct{}
