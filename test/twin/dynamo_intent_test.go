package twin_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
	"github.com/airunway-render/airunway-render/providers/dynamo"
)

// requestStandIn stands in for Dynamo's DynamoGraphDeploymentRequest
// controller, as far as the renderer's objects reach: it takes the graph
// named in the request's `overrides.dgd` (its name and labels, as the
// operator's profiler merges them into the graph it generates), creates
// it, and writes the request's status through the phases the operator's
// types name (api/v1beta1 DGDRPhase at the schemas' commit): Profiling
// until the graph exists, Deploying while it is not ready, Deployed with
// `dgdName` and `deploymentInfo` once it is. What the profiler would
// generate is not repeated: the stand-in's graph is `profiled`, the graph
// the manual mode renders for the same model. What rests on it: that the
// request the renderer writes is accepted under Dynamo's CRD, that the
// graph it names gets the model's name (so its Frontend is the endpoint
// the model records), and that the status reporter follows the request;
// not that Dynamo's profiler finds a graph.
func requestStandIn(profiled *unstructured.Unstructured) standIn {
	return standIn{apiVersion: dynamo.RequestAPIVersion, listKind: dynamo.RequestKind + "List",
		objects: func(*unstructured.Unstructured) ([]client.Object, error) { return nil, nil },
		status: func(ctx context.Context, req *unstructured.Unstructured) (map[string]any, error) {
			name, _, _ := unstructured.NestedString(req.Object, "spec", "overrides", "dgd", "metadata", "name")
			labels, _, _ := unstructured.NestedStringMap(req.Object, "spec", "overrides", "dgd", "metadata", "labels")
			graph := &unstructured.Unstructured{}
			graph.SetGroupVersionKind(profiled.GroupVersionKind())
			err := cluster.Client.Get(ctx, client.ObjectKey{Namespace: req.GetNamespace(), Name: name}, graph)
			switch {
			case client.IgnoreNotFound(err) != nil:
				return nil, err
			case err != nil:
				graph = profiled.DeepCopy()
				graph.SetName(name)
				graph.SetNamespace(req.GetNamespace())
				graph.SetLabels(labels)
				graph.SetAnnotations(nil)
				graph.SetResourceVersion("")
				if err := cluster.Client.Create(ctx, graph); err != nil {
					return nil, err
				}
				return map[string]any{"phase": "Profiling", "observedGeneration": req.GetGeneration()}, nil
			}
			services, _, _ := unstructured.NestedMap(graph.Object, "status", "services")
			var replicas, available int64
			for _, s := range services {
				r, _, _ := unstructured.NestedInt64(s.(map[string]any), "replicas")
				a, _, _ := unstructured.NestedInt64(s.(map[string]any), "availableReplicas")
				replicas, available = replicas+r, available+a
			}
			status := map[string]any{"phase": "Deploying", "dgdName": name, "observedGeneration": req.GetGeneration(),
				"deploymentInfo": map[string]any{"replicas": replicas, "availableReplicas": available}}
			if state, _, _ := unstructured.NestedString(graph.Object, "status", "state"); state == "successful" {
				status["phase"] = "Deployed"
			}
			return status, nil
		},
	}
}

// TestDynamoIntent runs the dynamo-intent golden on the twin: the request
// under Dynamo's CRD, the graph the stand-in makes of it under the model's
// name run by the Dynamo stand-in on the H100 pool, and the status
// reporter following the request to Running at the graph's Frontend.
func TestDynamoIntent(t *testing.T) {
	const dir = "golden/testdata/dynamo-intent"
	caps := dir + "/functionConfig/capabilities.yaml"
	useCluster(t, caps)
	objs := render(t, caps, dir+"/modeldeployment.yaml")
	var profiled *unstructured.Unstructured
	for _, o := range render(t, caps, "test/twin/testdata/dynamo-intent/manual.yaml") {
		if o.GetKind() == dynamo.Kind {
			profiled = o
		}
	}
	require.NotNil(t, profiled, "the manual mode renders a graph")
	installDynamoCRD(t)
	installCRD(t, "nvidia.com", dynamo.RequestKind)
	ns, models := deploy(t, objs)
	runStandIn(t, ns, requestStandIn(profiled))
	runStandIn(t, ns, dynamoStandIn(t))
	startReporter(t, ns)
	require.Len(t, models, 1)
	key := client.ObjectKeyFromObject(models[0])
	want := dynamoPods([]*unstructured.Unstructured{profiled})[profiled.GetName()]
	got := waitPlaced(t, ns, models, map[string]int{key.Name: want}, time.Now(), twin.HangBound)
	waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
		md := readModel(c, key)
		phase, _, _ := unstructured.NestedString(md.Object, "status", "phase")
		kind, _, _ := unstructured.NestedString(md.Object, "status", "provider", "resourceKind")
		service, _, _ := unstructured.NestedString(md.Object, "status", "endpoint", "service")
		require.Equal(c, []any{"Running", dynamo.RequestKind, key.Name + "-frontend"}, []any{phase, kind, service}, "the model's phase, primary kind and endpoint")
		require.Equal(c, md.GetAnnotations()[hub.AnnotationEndpoint], fmt.Sprintf("%s:8000", service), "the endpoint the model records is the one reported")
	}, func() string { return "" }, "model %s Running through its request", key.Name)
	addRow("dynamo intent (stand-ins) | DynamoGraphDeploymentRequest %s | %s | %s | %d/%d | - | %s", key.Name, caps, got[key.Name].pool, len(got[key.Name].pods), want, got[key.Name].readyAfter.Round(100*time.Millisecond))
}
