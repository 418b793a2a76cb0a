package twin_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/internal/testing/twin"
	"github.com/airunway-render/airunway-render/providers/kaito"
)

// The stand-in for KAITO's InferenceSet controller (kaito-project/kaito
// pkg/inferenceset/inferenceset_controller.go and pkg/utils/inferenceset at
// v0.12.0), the part that decides what runs:
//
//   - it keeps `spec.replicas` Workspaces (default 1) labelled
//     `inferenceset.kaito.sh/created-by: <name>`, each named
//     `<name>-<random>` (GenerateName), owned by the set, with the set's
//     `labelSelector` as `resource.labelSelector`, the template's
//     `resource` fields and `inference` (NewWorkspaceForInferenceSet
//     l.133-180); it deletes the surplus, not-ready ones first
//     (selectWorkspacesToDelete l.225-300; here: the newest);
//   - its status: `replicas` the desired count (l.432-436), `readyReplicas`
//     the Workspaces whose WorkspaceSucceeded is True, `selector` its
//     created-by label, and `InferenceSetReady` True once every desired
//     replica is ready, else False with "inferenceset is not ready, X/Y
//     replicas are ready" (l.485-497).
//
// The Workspace stand-in (kaito_test.go) then runs each Workspace. What
// rests on it: that an InferenceSet the renderer writes is scaled through
// its scale subresource (by the real API server) into Workspaces whose pods
// land on the chosen pool and answer behind the rendered Service and
// InferencePool selectors; not that KAITO accepts the InferenceSet.
func inferenceSetStatus(ctx context.Context, set *unstructured.Unstructured) (map[string]any, error) {
	name := set.GetName()
	desired, found, _ := unstructured.NestedInt64(set.Object, "spec", "replicas")
	if !found {
		desired = 1
	}
	children := &unstructured.UnstructuredList{}
	children.SetAPIVersion(kaito.APIVersion)
	children.SetKind("WorkspaceList")
	if err := cluster.Client.List(ctx, children, client.InNamespace(set.GetNamespace()), client.MatchingLabels{kaito.LabelCreatedBy: name}); err != nil {
		return nil, err
	}
	var live []unstructured.Unstructured
	for _, w := range children.Items {
		if w.GetDeletionTimestamp() == nil {
			live = append(live, w)
		}
	}
	slices.SortFunc(live, func(a, b unstructured.Unstructured) int {
		return a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time)
	})
	for n := int64(len(live)); n < desired; n++ {
		if err := cluster.Client.Create(ctx, workspaceOf(set)); err != nil {
			return nil, err
		}
	}
	for n := int64(len(live)); n > desired; n-- {
		if err := client.IgnoreNotFound(cluster.Client.Delete(ctx, &live[n-1])); err != nil {
			return nil, err
		}
		live = live[:n-1]
	}
	var ready int64
	for _, w := range live {
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "WorkspaceSucceeded" && m["status"] == "True" {
				ready++
			}
		}
	}
	cond := metav1.Condition{Type: "InferenceSetReady", Status: metav1.ConditionTrue, Reason: "inferencesetReady", Message: "inferenceset is ready"}
	if ready != desired {
		cond = metav1.Condition{Type: "InferenceSetReady", Status: metav1.ConditionFalse, Reason: "inferencesetNotReady",
			Message: fmt.Sprintf("inferenceset is not ready, %d/%d replicas are ready", ready, desired)}
	}
	conds, err := withConditions(set, cond)
	if err != nil {
		return nil, err
	}
	return map[string]any{"replicas": desired, "readyReplicas": ready, "selector": kaito.LabelCreatedBy + "=" + name, "conditions": conds}, nil
}

// workspaceOf is one replica of an InferenceSet, as NewWorkspaceForInferenceSet
// makes it (no `resource.count`: the CRD's default of 1).
func workspaceOf(set *unstructured.Unstructured) *unstructured.Unstructured {
	template, _, _ := unstructured.NestedMap(set.Object, "spec", "template")
	selector, _, _ := unstructured.NestedMap(set.Object, "spec", "labelSelector")
	res, _, _ := unstructured.NestedMap(template, "resource")
	if res == nil {
		res = map[string]any{}
	}
	res["labelSelector"] = selector
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kaito.APIVersion, "kind": kaito.Kind,
		"resource": res, "inference": template["inference"],
	}}
	w.SetGenerateName(set.GetName() + "-")
	w.SetNamespace(set.GetNamespace())
	w.SetLabels(map[string]string{kaito.LabelCreatedBy: set.GetName()})
	w.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(set, set.GroupVersionKind())})
	return w
}

var inferenceSetStandIn = standIn{apiVersion: kaito.APIVersion, listKind: "InferenceSetList",
	objects: func(*unstructured.Unstructured) ([]client.Object, error) { return nil, nil }, status: inferenceSetStatus}

// inferenceSetPods is how many pods each InferenceSet gets: one
// Workspace of one pod per replica.
func inferenceSetPods(objs []*unstructured.Unstructured) map[string]int {
	want := map[string]int{}
	for _, o := range objs {
		if o.GetKind() == kaito.InferenceSetKind {
			n, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
			if !found {
				n = 1
			}
			want[o.GetName()] = int(n)
		}
	}
	return want
}

// TestKAITOInferenceSet runs the kaito-inferenceset golden's model on the
// twin: two Workspaces on the L4 pool, the rendered Service and
// InferencePool selecting the serving pod of each, then scaled through the
// InferenceSet's scale subresource (as KEDA and an HPA scale it) to three
// and to zero; the status reporter follows each step.
func TestKAITOInferenceSet(t *testing.T) {
	const dir = "golden/testdata/kaito-inferenceset"
	caps := dir + "/functionConfig/capabilities.yaml"
	nodes := useCluster(t, caps)
	objs := render(t, caps, dir+"/modeldeployment.yaml")
	p := place(t, "InferenceSet", caps, caps, objs, nodes)
	ctx := context.Background()

	var set []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kaito.InferenceSetKind {
			set = append(set, o)
		}
	}
	require.Len(t, set, 1)
	key := client.ObjectKey{Namespace: p.ns, Name: set[0].GetName()}
	l4 := map[string]bool{}
	for _, n := range nodes {
		if n.Labels["nvidia.com/gpu.product"] == "NVIDIA-L4" {
			l4[n.Name] = true
		}
	}
	// The Service clients call and the InferencePool the gateway routes
	// to, as rendered: each must select the serving pod of every replica.
	// (Their endpoints are read from the selection, as in
	// TestDynamoLoRADiscovery: the twin cannot run the EndpointSlice
	// controller on its loopback pod addresses.)
	selectors := map[string]labels.Selector{}
	for _, o := range objs {
		switch o.GetKind() {
		case "Service":
			if o.GetName() == key.Name {
				sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
				selectors["Service "+o.GetName()] = labels.SelectorFromSet(sel)
			}
		case "InferencePool":
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
			selectors["InferencePool "+o.GetName()] = labels.SelectorFromSet(sel)
		}
	}
	require.Len(t, selectors, 2, "the rendered Service and InferencePool")
	servedBy := func(c *assert.CollectT, pods []corev1.Pod, want int) {
		for what, sel := range selectors {
			var serving []string
			for _, pod := range pods {
				if sel.Matches(labels.Set(pod.Labels)) && podReady(&pod) {
					serving = append(serving, pod.Name)
				}
			}
			require.Len(c, serving, want, "%s selects %v", what, serving)
		}
	}
	startReporter(t, p.ns)
	// reported waits until the status reporter says the model runs want
	// replicas, all ready, from the InferenceSet's status.
	reported := func(c *assert.CollectT, want int64) {
		md := readModel(c, key)
		phase, _, _ := unstructured.NestedString(md.Object, "status", "phase")
		desired, _, _ := unstructured.NestedInt64(md.Object, "status", "replicas", "desired")
		ready, _, _ := unstructured.NestedInt64(md.Object, "status", "replicas", "ready")
		kind, _, _ := unstructured.NestedString(md.Object, "status", "provider", "resourceKind")
		require.Equal(c, []any{"Running", want, want, kaito.InferenceSetKind}, []any{phase, desired, ready, kind}, "the model's status: phase, replicas desired and ready, primary kind")
	}
	requirePods := func(want int) {
		t.Helper()
		waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
			pods := &corev1.PodList{}
			require.NoError(c, cluster.Client.List(ctx, pods, client.InNamespace(p.ns), client.MatchingLabels{kaito.LabelCreatedBy: key.Name}))
			running := 0
			for _, pod := range pods.Items {
				if pod.DeletionTimestamp != nil {
					continue
				}
				require.True(c, l4[pod.Spec.NodeName], "pod %s on %q, not the l4 pool", pod.Name, pod.Spec.NodeName)
				if podReady(&pod) {
					running++
				}
			}
			require.Equal(c, want, running, "running pods of InferenceSet %s", key.Name)
			servedBy(c, pods.Items, want)
			reported(c, int64(want))
		}, func() string { return nodeSummary(t) }, "InferenceSet %s at %d replicas", key.Name, want)
	}
	requirePods(2)

	// Scaled as KEDA and an HPA scale it: through /scale, whose selector
	// the HPA reads from the set's status.
	for _, replicas := range []int64{3, 0} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(set[0].GroupVersionKind())
		u.SetNamespace(key.Namespace)
		u.SetName(key.Name)
		scale := &unstructured.Unstructured{}
		scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
		require.NoError(t, cluster.Client.SubResource("scale").Get(ctx, u, scale))
		selector, _, _ := unstructured.NestedString(scale.Object, "status", "selector")
		require.Equal(t, kaito.LabelCreatedBy+"="+key.Name, selector, "the selector an HPA reads")
		require.NoError(t, unstructured.SetNestedField(scale.Object, replicas, "spec", "replicas"))
		require.NoError(t, cluster.Client.SubResource("scale").Update(ctx, u, client.WithSubResourceBody(scale)))
		requirePods(int(replicas))
	}
}
