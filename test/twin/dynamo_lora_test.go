package twin_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
)

// TestDynamoLoRADiscovery runs two Dynamo models of the same model id in
// one namespace, each with its own LoRA adapters (one aggregated with two
// workers, one disaggregated), and checks what the operator's DynamoModel
// controller would load each adapter into. The DynamoModels are accepted
// by the real API server under the CRD derived from the operator's; the
// pods are placed by the real scheduler. Discovery follows the operator's
// getEndpointCandidates: the endpoints of the namespace's headless Services
// labelled with the hash of the DynamoModel's baseModelName, ready, on the
// system port. The twin cannot run the EndpointSlice controller for it:
// its pod addresses are loopback, which the API server refuses in an
// EndpointSlice (measured: "endpoints[0].addresses[0]: Invalid value"), so
// the endpoints are the Ready pods each such Service selects, which is what
// that controller would publish. Each adapter must reach exactly its own
// model's workers, prefill and decode both; keyed by the model id, as the
// operator's examples are, each would reach all four workers of both
// models.
func TestDynamoLoRADiscovery(t *testing.T) {
	dir := filepath.Join("test", "twin", "testdata", "dynamo-lora")
	caps := filepath.Join(dir, "capabilities.yaml")
	nodes := useCluster(t, caps)
	objs := render(t, caps, filepath.Join(dir, "models.yaml"))
	p := place(t, "LoRA adapters", "dynamo-lora", caps, objs, nodes)

	ctx := context.Background()
	adapters := &unstructured.UnstructuredList{}
	adapters.SetAPIVersion("nvidia.com/v1alpha1")
	adapters.SetKind("DynamoModelList")
	require.NoError(t, cluster.Client.List(ctx, adapters, client.InNamespace(p.ns)))
	require.Len(t, adapters.Items, 3, "one DynamoModel per adapter")

	for _, a := range adapters.Items {
		base, _, _ := unstructured.NestedString(a.Object, "spec", "baseModelName")
		model := a.GetLabels()[hub.LabelModelDeployment]
		want := workerPods(p.got[model])
		require.NotEmpty(t, want, "%s: its model %q has no workers", a.GetName(), model)
		var got []string
		require.Eventually(t, func() bool {
			got = loRAEndpoints(t, p.ns, base)
			return slices.Equal(got, want)
		}, time.Minute, 250*time.Millisecond, "%s: the operator would load it into %v, want %v (the workers of %s)", a.GetName(), &got, want, model)
		addRow("dynamo (stand-in) | DynamoModel %s | dynamo-lora | - | loaded into the %d workers of %s | - | -", a.GetName(), len(got), model)
	}
}

// workerPods are the names of a model's pods that run its model server
// (the worker, or prefill and decode), sorted.
func workerPods(p *placed) []string {
	if p == nil {
		return nil
	}
	var names []string
	for _, pod := range p.pods {
		if pod.Labels["nvidia.com/dynamo-component-type"] == "worker" {
			names = append(names, pod.Name)
		}
	}
	slices.Sort(names)
	return names
}

// loRAEndpoints are the pods the operator's DynamoModel controller would
// POST an adapter of baseModel to (internal/controller/
// dynamo_model_controller.go getEndpointCandidates, internal/modelendpoint/
// discovery.go ExtractCandidates): the Ready pods selected by the
// namespace's Services that carry the base model's hash label and expose
// the system port. Sorted pod names.
func loRAEndpoints(t *testing.T, ns, baseModel string) []string {
	t.Helper()
	ctx := context.Background()
	services := &corev1.ServiceList{}
	require.NoError(t, cluster.Client.List(ctx, services, client.InNamespace(ns),
		client.MatchingLabels{baseModelHashLabel: baseModelHash(baseModel)}))
	var names []string
	for _, svc := range services.Items {
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == dynamoSystemPort }) {
			continue
		}
		pods := &corev1.PodList{}
		require.NoError(t, cluster.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(svc.Spec.Selector)))
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				names = append(names, pods.Items[i].Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
