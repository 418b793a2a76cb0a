package twin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// TestScaleToZero: models with no replicas on the twin. A vLLM model with
// `replicas: 0` (testdata/scale-to-zero) runs no pod, and the status
// reporter says so; an autoscaled one with `minReplicas: 0` and a
// HorizontalPodAutoscaler (golden v1alpha2-vllm-autoscaling-hpa-to-zero)
// is accepted by the real 1.37 API server as rendered, zero minimum and
// External metric, which it refuses without HPAScaleToZero; the real HPA
// controller then keeps it within its bounds (the twin serves no metrics).
// KAITO's InferenceSet at zero is TestKAITOInferenceSet's last step.
func TestScaleToZero(t *testing.T) {
	ctx := context.Background()
	const dir = "golden/testdata/v1alpha2-vllm-autoscaling-hpa-to-zero"
	caps := dir + "/functionConfig/capabilities.yaml"
	t.Run("replicas 0", func(t *testing.T) {
		useCluster(t, caps)
		objs := render(t, caps, "test/twin/testdata/scale-to-zero/model.yaml")
		ns, models := deploy(t, objs)
		startReporter(t, ns)
		require.Len(t, models, 1)
		key := client.ObjectKeyFromObject(models[0])
		waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
			pods := &corev1.PodList{}
			require.NoError(c, cluster.Client.List(ctx, pods, client.InNamespace(ns)))
			require.Empty(c, pods.Items, "pods of a model at zero replicas")
			phase, desired := modelReplicas(c, key)
			require.Equal(c, []any{"Running", int64(0)}, []any{phase, desired}, "the model's phase and desired replicas")
		}, func() string { return "" }, "model %s at zero replicas", key.Name)
	})
	t.Run("an HPA with minReplicas 0", func(t *testing.T) {
		useCluster(t, caps)
		objs := render(t, caps, dir+"/modeldeployment.yaml")
		ns, _ := deploy(t, objs)
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "qwen"}, hpa))
		require.NotNil(t, hpa.Spec.MinReplicas)
		require.Zero(t, *hpa.Spec.MinReplicas, "the API server kept minReplicas 0")
		require.Equal(t, autoscalingv2.ExternalMetricSourceType, hpa.Spec.Metrics[0].Type)
		// The controller reads the target through its scale subresource
		// and reports it cannot read the External metric the twin does
		// not serve: it acts on the HPA as rendered.
		waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
			live := &autoscalingv2.HorizontalPodAutoscaler{}
			require.NoError(c, cluster.Client.Get(ctx, client.ObjectKeyFromObject(hpa), live))
			require.NotEmpty(c, live.Status.Conditions, "the HPA controller has not looked at it")
		}, func() string { return "" }, "the HPA controller on %s/qwen", ns)
	})
}

// modelReplicas reads the phase and desired replicas the status reporter
// wrote on a ModelDeployment.
func modelReplicas(c *assert.CollectT, key client.ObjectKey) (string, int64) {
	md := readModel(c, key)
	phase, _, _ := unstructured.NestedString(md.Object, "status", "phase")
	desired, _, _ := unstructured.NestedInt64(md.Object, "status", "replicas", "desired")
	return phase, desired
}

// readModel reads a ModelDeployment as the status reporter left it.
func readModel(c *assert.CollectT, key client.ObjectKey) *unstructured.Unstructured {
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("airunway.ai/v1alpha1")
	md.SetKind(hub.KindModelDeployment)
	require.NoError(c, cluster.Client.Get(context.Background(), key, md))
	return md
}
