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
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// TestDynamoLoRADiscovery runs two Dynamo models of the same model id in
// one namespace, each with its own LoRA adapters (one aggregated with two
// workers, one disaggregated), and checks what the operator's DynamoModel
// controller would load each adapter into. Real: the API server accepts
// the DynamoModels under the CRD derived from the operator's, and the
// scheduler places the pods. Stand-in: the operator's labelling of the
// pods and its headless Service per base model (dynamo_test.go), and its
// discovery, getEndpointCandidates, read here: the Ready endpoints, on the
// system port, of the Services labelled with the hash of the DynamoModel's
// baseModelName. Those endpoints are read from the Services' selection:
// the twin cannot run the EndpointSlice controller for them, as its pod
// addresses are loopback, which the API server refuses in an EndpointSlice
// (measured: "endpoints[0].addresses[0]: Invalid value"). So the test shows
// that the rendered modelRefs and baseModelNames select exactly each
// model's workers, prefill and decode both, by the operator's rule; not
// that the operator loads anything. Keyed by the model id, as the
// operator's examples are, each adapter would reach all four workers, and
// the test fails (measured).
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
		var err error
		require.Eventually(t, func() bool {
			got, err = loRAEndpoints(p.ns, base)
			return err == nil && slices.Equal(got, want)
		}, twin.HangBound, 250*time.Millisecond, "%s: the operator would load it into %v, want %v (the workers of %s)", a.GetName(), &got, want, model)
		require.NoError(t, err)
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
// It runs inside require.Eventually's goroutine, so it returns its error
// rather than failing the test there.
func loRAEndpoints(ns, baseModel string) ([]string, error) {
	ctx := context.Background()
	services := &corev1.ServiceList{}
	if err := cluster.Client.List(ctx, services, client.InNamespace(ns),
		client.MatchingLabels{baseModelHashLabel: baseModelHash(baseModel)}); err != nil {
		return nil, err
	}
	var names []string
	for _, svc := range services.Items {
		if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == dynamoSystemPort }) {
			continue
		}
		pods := &corev1.PodList{}
		if err := cluster.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(svc.Spec.Selector)); err != nil {
			return nil, err
		}
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				names = append(names, pods.Items[i].Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
