package twin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// The Dynamo operator does not build from the Go module proxy (its module
// has no tags the proxy resolves), so a stand-in does, for the twin, the
// smallest part of its work that decides where pods land. It follows the
// operator's source (ai-dynamo/dynamo, deploy/operator, 1.1.0 development
// line; line numbers from that tree), on its component path — the path
// without Grove, which the twin does not run:
//
//   - one Deployment per service of the DynamoGraphDeployment, named
//     `{dgd}-{lower(service)}` (internal/dynamo/graph.go
//     GenerateDynamoComponentsDeployments l.280 and GetDCDResourceName
//     l.500; the operator goes through a DynamoComponentDeployment, whose
//     controller creates the Deployment, l.209-213, and adds a hash suffix
//     for workers, left out here), with the service's `replicas` (l.387,
//     DCD controller l.993);
//   - the pod spec is the service's `extraPodSpec` (nodeSelector,
//     tolerations, affinity as written; graph.go l.1145 merges it over a
//     base with mergo), plus a container named `main` (component_common.go
//     l.89) from `extraPodSpec.mainContainer` (graph.go l.1019);
//   - `resources.limits.gpu` and `resources.requests.gpu` become the
//     extended resource `nvidia.com/gpu`, or the `gpuType` beside them
//     (internal/controller_common/resource.go l.525-634); cpu and memory as
//     given; `resources.claims` (a DRA pool's GPUs) are appended to the
//     main container's claims (GetResourcesConfig, same file), and the
//     pod's own `extraPodSpec.resourceClaims` come with the extra PodSpec
//     (providers/dynamo/dra.go cites both; from 1.2 the v1beta1
//     conversion, resourcesToNative, does the same);
//   - pod labels: `extraPodMetadata.labels`, then the operator's own
//     nvidia.com/dynamo-component, -graph-deployment-name,
//     -component-type and nvidia.com/selector (graph.go l.1026-1158);
//   - the operator adds no nodeSelector or toleration of its own for such
//     services (only for GPU memory service and profiling jobs);
//   - the graph's status from those Deployments (dynamoStatus below);
//   - for a service with a `modelRef` (LoRA adapters), the pod label
//     nvidia.com/dynamo-base-model-hash, the first 8 hex digits of the
//     sha256 of its name, and one headless Service per base model,
//     `dynamo-model-<hash>`, carrying the same label, selecting it, with
//     the system port 9090 (operator at the commit schemas/ pins,
//     internal/dynamo/model_service.go ReconcileModelServicesForComponents,
//     generateHeadlessServiceForModel, HashModelName, AddBaseModelLabel,
//     called from graph.go for every component with a modelRef).
//
// Multinode services (Grove or LeaderWorkerSets) are not stood in for: a
// test that renders one fails. What rests on this stand-in: the Dynamo rows
// of the twin's table, that is, that the nodeSelector, tolerations and GPU
// resource the renderer writes into a graph put its pods on the chosen
// pool, and that the status reporter reads a graph status of the operator's
// shape; and that a DynamoModel's baseModelName selects exactly its model's
// workers by the operator's rule (dynamo_lora_test.go); not that the
// operator accepts the graph or loads an adapter.

// dynamoDeployments are the Deployments the operator's component path
// makes of a graph.
func dynamoDeployments(t *testing.T, g *unstructured.Unstructured) []client.Object {
	services, _, _ := unstructured.NestedMap(g.Object, "spec", "services")
	var out []client.Object
	baseModels := map[string]bool{}
	for name, raw := range services {
		svc := raw.(map[string]any)
		if _, multinode := svc["multinode"]; multinode {
			t.Errorf("stand-in: service %s of %s is multinode, which the Dynamo stand-in does not do", name, g.GetName())
			continue
		}
		spec := corev1.PodSpec{}
		extra, _, _ := unstructured.NestedMap(svc, "extraPodSpec")
		main := corev1.Container{}
		if m, ok := extra["mainContainer"].(map[string]any); ok {
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(m, &main))
			delete(extra, "mainContainer")
		}
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(extra, &spec))
		main.Name = "main"
		main.Resources = dynamoResources(svc)
		spec.Containers = []corev1.Container{main}

		deployName := g.GetName() + "-" + strings.ToLower(name)
		labels := map[string]string{}
		if l, ok, _ := unstructured.NestedStringMap(svc, "extraPodMetadata", "labels"); ok {
			for k, v := range l {
				labels[k] = v
			}
		}
		componentType, _, _ := unstructured.NestedString(svc, "componentType")
		if sub, _, _ := unstructured.NestedString(svc, "subComponentType"); sub != "" {
			labels[subComponentTypeLabel] = sub // graph.go l.2889
		}
		if ref, found, _ := unstructured.NestedString(svc, "modelRef", "name"); found && ref != "" {
			labels[baseModelHashLabel] = baseModelHash(ref)
			if !baseModels[ref] {
				baseModels[ref] = true
				out = append(out, baseModelService(g.GetNamespace(), ref))
			}
		}
		for k, v := range map[string]string{
			"nvidia.com/dynamo-component":             name,
			"nvidia.com/dynamo-graph-deployment-name": g.GetName(),
			"nvidia.com/dynamo-component-type":        componentType,
			"nvidia.com/selector":                     deployName,
		} {
			labels[k] = v
		}
		replicas, found, _ := unstructured.NestedInt64(svc, "replicas")
		if !found {
			replicas = 1
		}
		r := int32(replicas)
		out = append(out, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: deployName, Namespace: g.GetNamespace()},
			Spec: appsv1.DeploymentSpec{
				Replicas: &r,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"nvidia.com/selector": deployName}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
			},
		})
	}
	return out
}

// subComponentTypeLabel names a disaggregated worker's role on its pods.
const subComponentTypeLabel = "nvidia.com/dynamo-sub-component-type"

// baseModelHashLabel is the label by which the operator's DynamoModel
// controller finds the pods serving a base model.
const baseModelHashLabel = "nvidia.com/dynamo-base-model-hash"

// baseModelHash is the operator's HashModelName.
func baseModelHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:8]
}

// baseModelService is the operator's headless Service for one base model.
func baseModelService(ns, baseModel string) *corev1.Service {
	hash := baseModelHash(baseModel)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "dynamo-model-" + hash, Namespace: ns,
			Labels:      map[string]string{baseModelHashLabel: hash, "nvidia.com/managed-by": "dynamo-operator"},
			Annotations: map[string]string{"nvidia.com/dynamo-base-model": baseModel}},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  map[string]string{baseModelHashLabel: hash},
			Ports:     []corev1.ServicePort{{Name: "system", Port: dynamoSystemPort, TargetPort: intstr.FromInt32(dynamoSystemPort), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// dynamoSystemPort is the workers' system port, on which the operator
// loads adapters.
const dynamoSystemPort = 9090

// dynamoStandIn is the stand-in for the Dynamo operator.
func dynamoStandIn(t *testing.T) standIn {
	return standIn{
		apiVersion: "nvidia.com/v1alpha1", listKind: "DynamoGraphDeploymentList",
		objects: func(g *unstructured.Unstructured) ([]client.Object, error) { return dynamoDeployments(t, g), nil },
		status:  dynamoStatus,
	}
}

// dynamoPods is how many pods each graph's services ask for.
func dynamoPods(objs []*unstructured.Unstructured) map[string]int {
	want := map[string]int{}
	for _, o := range objs {
		if o.GetKind() != "DynamoGraphDeployment" {
			continue
		}
		services, _, _ := unstructured.NestedMap(o.Object, "spec", "services")
		for _, s := range services {
			r, found, _ := unstructured.NestedInt64(s.(map[string]any), "replicas")
			if !found {
				r = 1
			}
			want[o.GetName()] += int(r)
		}
	}
	return want
}

// dynamoStatus is the graph status the operator writes on its component
// path (internal/controller/dynamographdeployment_controller.go:
// checkResourcesReadiness l.1078-1114, the deferred status write
// l.123-150): per service the replica counts of its Deployment
// (ServiceReplicaStatus, api/v1alpha1/dynamographdeployment_types.go
// l.221-262); `state: successful` and condition Ready=True when every
// Deployment is ready as IsDeploymentReady judges it
// (dynamocomponentdeployment_controller.go l.742-777), else `pending`
// with the resources not ready in the message.
func dynamoStatus(ctx context.Context, g *unstructured.Unstructured) (map[string]any, error) {
	services, _, _ := unstructured.NestedMap(g.Object, "spec", "services")
	names := slices.Sorted(maps.Keys(services))
	statuses := map[string]any{}
	var notReady []string
	for _, name := range names {
		d := &appsv1.Deployment{}
		key := client.ObjectKey{Namespace: g.GetNamespace(), Name: g.GetName() + "-" + strings.ToLower(name)}
		if err := cluster.Client.Get(ctx, key, d); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, err
			}
			notReady = append(notReady, key.Name+": not found")
			continue
		}
		statuses[name] = map[string]any{
			"componentKind": "Deployment", "componentName": d.Name, "componentNames": []any{d.Name},
			"replicas": int64(d.Status.Replicas), "updatedReplicas": int64(d.Status.UpdatedReplicas),
			"readyReplicas": int64(d.Status.ReadyReplicas), "availableReplicas": int64(d.Status.AvailableReplicas),
		}
		if !deploymentReady(d) {
			notReady = append(notReady, key.Name+": Deployment not ready")
		}
	}
	state, ready := "successful", metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "all_resources_are_ready", Message: "All resources are ready"}
	if len(notReady) > 0 {
		state = "pending"
		ready = metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "some_resources_are_not_ready", Message: "Resources not ready: " + strings.Join(notReady, "; ")}
	}
	conds, err := withConditions(g, ready)
	if err != nil {
		return nil, err
	}
	return map[string]any{"state": state, "services": statuses, "conditions": conds, "observedGeneration": g.GetGeneration()}, nil
}

// deploymentReady is the operator's IsDeploymentReady: the latest spec
// observed, every desired replica updated and available, no surge left,
// and the Available condition true.
func deploymentReady(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Spec.Paused {
		return false
	}
	if want == 0 {
		return true
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation || s.UpdatedReplicas < want || s.AvailableReplicas < want || s.Replicas != want {
		return false
	}
	for _, c := range s.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// dynamoResources maps a service's resources as the operator does: gpu
// under nvidia.com/gpu or the gpuType beside it, limits and requests each
// on their own, and the claims by name.
func dynamoResources(svc map[string]any) corev1.ResourceRequirements {
	var r corev1.ResourceRequirements
	claims, _, _ := unstructured.NestedSlice(svc, "resources", "claims")
	for _, c := range claims {
		if m, ok := c.(map[string]any); ok {
			name, _ := m["name"].(string)
			request, _ := m["request"].(string)
			r.Claims = append(r.Claims, corev1.ResourceClaim{Name: name, Request: request})
		}
	}
	for side, into := range map[string]*corev1.ResourceList{"limits": &r.Limits, "requests": &r.Requests} {
		items, ok, _ := unstructured.NestedStringMap(svc, "resources", side)
		if !ok {
			continue
		}
		list := corev1.ResourceList{}
		gpuName := "nvidia.com/gpu"
		if items["gpuType"] != "" {
			gpuName = items["gpuType"]
		}
		for k, v := range items {
			switch k {
			case "gpu":
				list[corev1.ResourceName(gpuName)] = resource.MustParse(v)
			case "cpu", "memory":
				list[corev1.ResourceName(k)] = resource.MustParse(v)
			}
		}
		*into = list
	}
	return r
}

var (
	dynamoCRDMu   sync.Mutex
	dynamoCRDOnce sync.Once
	dynamoCRDErr  error
)

// uninstallDynamoCRD deletes the graph CRD and waits until it is gone;
// installDynamoCRD puts it back.
func uninstallDynamoCRD(t *testing.T) {
	t.Helper()
	crd, err := schemacheck.CRD("nvidia.com", "DynamoGraphDeployment", "")
	require.NoError(t, err)
	require.NoError(t, cluster.Client.Delete(context.Background(), crd))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(crd), crd))
	}, twin.HangBound, 250*time.Millisecond, "the DynamoGraphDeployment CRD was not deleted")
	dynamoCRDMu.Lock()
	dynamoCRDOnce = sync.Once{}
	dynamoCRDMu.Unlock()
}

// installDynamoCRD installs the graph CRD schemas/ holds, once.
func installDynamoCRD(t *testing.T) {
	t.Helper()
	dynamoCRDMu.Lock()
	defer dynamoCRDMu.Unlock()
	dynamoCRDOnce.Do(func() {
		crd, err := schemacheck.CRD("nvidia.com", "DynamoGraphDeployment", "")
		if err == nil {
			err = schemacheck.SetStorageVersion(crd, "v1alpha1")
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), twin.HangBound)
			defer cancel()
			err = createCRD(ctx, crd)
		}
		dynamoCRDErr = err
	})
	require.NoError(t, dynamoCRDErr)
}
