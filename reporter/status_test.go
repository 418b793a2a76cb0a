package reporter

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/vllm"
)

var (
	created = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	md      = &hub.ModelDeployment{ObjectMeta: metav1.ObjectMeta{Name: "qwen", Namespace: "ai"}}
	decided = map[string]string{
		"render.airunway.ai/provider": "vllm", "render.airunway.ai/provider-reason": "explicit provider selection",
		"render.airunway.ai/engine": "vllm", "render.airunway.ai/engine-reason": "explicit engine selection",
	}
)

// deployment is the vLLM provider's primary object, last written at
// written, with the given status.
func deployment(t *testing.T, written time.Time, status string) *unstructured.Unstructured {
	t.Helper()
	obj := providertest.Object(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: qwen, namespace: ai}\nspec: {replicas: 1}\n"+status)
	obj.SetCreationTimestamp(metav1.NewTime(created))
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Time: &metav1.Time{Time: written}}})
	return obj
}

func observe(obj *unstructured.Unstructured, now time.Time, prev *v1.ModelDeploymentStatus) Observation {
	p := vllm.Provider{}
	o := Observation{Generation: 3, Annotations: decided, Primary: p.Primary(md), Object: obj, Previous: prev, Now: now}
	if obj != nil {
		o.Health = p.Health(obj)
	}
	return o
}

func conditions(s v1.ModelDeploymentStatus) map[string]string {
	out := map[string]string{}
	for _, c := range s.Conditions {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

// TestLifecycle walks a rendered ModelDeployment through Pending,
// Deploying, Running and, when the operator falls silent while the model
// is not ready, Unknown.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	steps := []struct {
		name       string
		obj        *unstructured.Unstructured
		now        time.Time
		phase      string
		message    string
		conditions map[string]string
	}{
		{"not applied yet", nil, created, "Pending", "waiting for Deployment qwen to be applied",
			map[string]string{"Ready": "False/ResourceNotFound", "Reconciling": "True/Progressing"}},
		{"rolling out", deployment(t, created, "status: {conditions: [{type: Progressing, status: \"True\"}]}"), created.Add(time.Minute), "Deploying", "Deployments created, waiting for pods to be ready",
			map[string]string{"Ready": "False/DeploymentInProgress", "Reconciling": "True/Progressing"}},
		{"available", deployment(t, created.Add(2*time.Minute), "status: {readyReplicas: 1, availableReplicas: 1, conditions: [{type: Available, status: \"True\"}]}"), created.Add(10 * time.Minute), "Running", "Deployment qwen is ready, pods are ready",
			map[string]string{"Ready": "True/DeploymentReady"}},
		{"operator silent while not ready", deployment(t, created.Add(3*time.Minute), "status: {conditions: [{type: Progressing, status: \"True\"}]}"), created.Add(8 * time.Minute), "Deploying",
			"Deployment qwen is not ready and its operator has not updated it since 2026-11-22T10:03:00Z; its status may be out of date",
			map[string]string{"Ready": "Unknown/ProviderStale", "Reconciling": "True/ProviderStale"}},
		{"failed", deployment(t, created.Add(3*time.Minute), "status: {conditions: [{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded}]}"), created.Add(30 * time.Minute), "Failed", "deployment timed out waiting for rollout",
			map[string]string{"Ready": "False/DeploymentFailed", "Stalled": "True/DeploymentFailed"}},
	}
	var prev *v1.ModelDeploymentStatus
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			s := Compute(observe(step.obj, step.now, prev))
			require.Equal(t, step.phase, s.Phase)
			require.Equal(t, step.message, s.Message)
			require.Equal(t, step.conditions, conditions(s))
			require.Equal(t, int64(3), s.ObservedGeneration)
			for _, c := range s.Conditions {
				require.Equal(t, int64(3), c.ObservedGeneration, c.Type)
			}
			require.Equal(t, &v1.ProviderStatus{Name: "vllm", SelectedReason: "explicit provider selection", ResourceName: "qwen", ResourceKind: "Deployment"}, s.Provider)
			require.Equal(t, &v1.EngineStatus{Type: "vllm", SelectedReason: "explicit engine selection"}, s.Engine)
			prev = &s
		})
	}
}

func TestRunningCarriesReplicasAndEndpoint(t *testing.T) {
	t.Parallel()
	obj := deployment(t, created, "status: {readyReplicas: 1, availableReplicas: 1, conditions: [{type: Available, status: \"True\"}]}")
	s := Compute(observe(obj, created, nil))
	require.Equal(t, &v1.ReplicaStatus{Desired: 1, Ready: 1, Available: 1}, s.Replicas)
	require.Equal(t, &v1.EndpointStatus{Service: "qwen", Port: 8000}, s.Endpoint)
}

// TestSameObservationSameStatus is what keeps the reporter from writing on
// a no-op resync: later observations of an unchanged object compute the
// identical status, transition times included.
func TestSameObservationSameStatus(t *testing.T) {
	t.Parallel()
	for _, status := range []string{
		"status: {conditions: [{type: Available, status: \"True\"}]}",
		"status: {conditions: [{type: Progressing, status: \"True\"}]}",
	} {
		obj := deployment(t, created, status)
		first := Compute(observe(obj, created.Add(time.Minute), nil))
		again := Compute(observe(obj, created.Add(2*time.Minute), &first))
		require.Equal(t, first, again)
		stale := Compute(observe(obj, created.Add(6*time.Minute), &again))
		require.Equal(t, stale, Compute(observe(obj, created.Add(9*time.Minute), &stale)), "a stale status must not change while nothing happens")
	}
}

func TestTransitionTimeMovesOnlyOnAFlip(t *testing.T) {
	t.Parallel()
	progressing := deployment(t, created, "status: {conditions: [{type: Progressing, status: \"True\"}]}")
	first := Compute(observe(progressing, created.Add(time.Minute), nil))
	ready := meta.FindStatusCondition(first.Conditions, ConditionReady)
	require.Equal(t, created.Add(time.Minute), ready.LastTransitionTime.Time)

	available := deployment(t, created.Add(2*time.Minute), "status: {conditions: [{type: Available, status: \"True\"}]}")
	second := Compute(observe(available, created.Add(3*time.Minute), &first))
	require.Equal(t, created.Add(3*time.Minute), meta.FindStatusCondition(second.Conditions, ConditionReady).LastTransitionTime.Time)
}

// TestConditionsKeepComputesOrder: the previous status lends its
// conditions' transition times only. The order is Compute's whatever order
// the previous status has them in, and the previous status is left as it
// was.
func TestConditionsKeepComputesOrder(t *testing.T) {
	t.Parallel()
	obj := deployment(t, created, "status: {conditions: [{type: Progressing, status: \"True\"}]}")
	first := Compute(observe(obj, created.Add(time.Minute), nil))
	require.Len(t, first.Conditions, 2)
	previous := first
	previous.Conditions = slices.Clone(first.Conditions)
	slices.Reverse(previous.Conditions)
	asGiven := slices.Clone(previous.Conditions)
	require.Equal(t, first, Compute(observe(obj, created.Add(2*time.Minute), &previous)))
	require.Equal(t, asGiven, previous.Conditions, "Compute changed the previous status")
}

func TestCRDMissing(t *testing.T) {
	t.Parallel()
	o := observe(nil, created, nil)
	o.CRDMissing = true
	s := Compute(o)
	require.Equal(t, "Failed", s.Phase)
	require.Equal(t, map[string]string{"Ready": "False/ProviderCRDMissing", "Stalled": "True/ProviderCRDMissing"}, conditions(s))
	require.Contains(t, s.Message, "the cluster does not serve apps/v1 Deployment: install the provider's CRDs")
}

var _ providers.Reporter = vllm.Provider{}

func TestUnsupportedProvider(t *testing.T) {
	t.Parallel()
	o := observe(nil, created, nil)
	o.Unsupported = "sglang-operator"
	s := Compute(o)
	require.Equal(t, map[string]string{"Ready": "Unknown/ProviderUnsupported", "Reconciling": "True/ProviderUnsupported"}, conditions(s))
	require.Contains(t, s.Message, `does not know provider "sglang-operator"`)
	_, ok := StaleAt(o)
	require.False(t, ok)
}

func TestGatewayIsCopied(t *testing.T) {
	t.Parallel()
	o := observe(deployment(t, created, ""), created, nil)
	o.Gateway = &v1.GatewayStatus{Endpoint: "203.0.113.7", ModelName: "qwen", GatewayNamespace: "gateway-system"}
	require.Equal(t, o.Gateway, Compute(o).Gateway)
}

// TestGatewayAPIFormats: status.gateway.apiFormats are the renderer's
// (AnnotationAPIFormats), in upstream's order, without a value the CRD's
// enum would refuse; none without a gateway route.
func TestGatewayAPIFormats(t *testing.T) {
	t.Parallel()
	o := observe(deployment(t, created, ""), created, nil)
	o.Annotations = map[string]string{hub.AnnotationAPIFormats: "anthropic-messages,grpc,openai-chat"}
	require.Nil(t, Compute(o).Gateway)
	o.Gateway = &v1.GatewayStatus{ModelName: "qwen"}
	require.Equal(t, []string{"openai-chat", "anthropic-messages"}, Compute(o).Gateway.APIFormats)
	require.Empty(t, o.Gateway.APIFormats, "Compute changed the observation")
}

// TestHardwareCompatible words each memory fit verdict; a model without
// one (no GPU components, or rendered by an older renderer) gets none.
func TestHardwareCompatible(t *testing.T) {
	t.Parallel()
	for verdict, want := range map[string]string{
		"fits": "True/MemoryFits", "tight": "True/MemoryTight", "short-context": "True/ShortContext",
		"not-checked": "Unknown/HardwareNotChecked", "": "", "does-not-fit": "",
	} {
		o := observe(deployment(t, created, ""), created, nil)
		o.Annotations = map[string]string{hub.AnnotationHardwareFit: verdict, hub.AnnotationHardwareFitReason: "why"}
		s := Compute(o)
		require.Equal(t, want, conditions(s)[ConditionHardwareCompatible], verdict)
		if want != "" {
			require.Equal(t, "why", meta.FindStatusCondition(s.Conditions, ConditionHardwareCompatible).Message)
		}
	}
}

// TestStaleAt: the controller re-checks a not-ready object when it would
// turn stale, with the configured idle time; running, failed and missing
// objects never do.
func TestStaleAt(t *testing.T) {
	t.Parallel()
	written := created.Add(time.Minute)
	progressing := observe(deployment(t, written, "status: {conditions: [{type: Progressing, status: \"True\"}]}"), created, nil)
	at, ok := StaleAt(progressing)
	require.True(t, ok)
	require.True(t, written.Add(StaleAfter).Equal(at), "%s", at)
	progressing.StaleAfter = 3 * time.Second
	at, _ = StaleAt(progressing)
	require.True(t, written.Add(3*time.Second).Equal(at), "%s", at)
	progressing.Now = at
	require.Equal(t, "Unknown/ProviderStale", conditions(Compute(progressing))["Ready"])

	for name, status := range map[string]string{
		"running": "status: {conditions: [{type: Available, status: \"True\"}]}",
		"failed":  "status: {conditions: [{type: Progressing, status: \"False\", reason: ProgressDeadlineExceeded}]}",
	} {
		_, ok := StaleAt(observe(deployment(t, written, status), created, nil))
		require.False(t, ok, name)
	}
	_, ok = StaleAt(observe(nil, created, nil))
	require.False(t, ok, "missing")
}

func TestWatchFailed(t *testing.T) {
	t.Parallel()
	o := observe(nil, created, nil)
	o.WatchError = "cannot list apps/v1, Kind=Deployment: forbidden"
	s := Compute(o)
	require.Equal(t, "Pending", s.Phase)
	require.Equal(t, map[string]string{"Ready": "Unknown/ProviderWatchFailed", "Reconciling": "True/ProviderWatchFailed"}, conditions(s))
	require.Equal(t, "the status reporter cannot watch apps/v1 Deployment: cannot list apps/v1, Kind=Deployment: forbidden", s.Message)
}
