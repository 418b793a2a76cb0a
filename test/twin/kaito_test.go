package twin_test

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/providers/kaito"
)

// The KAITO workspace controller does not build from the Go module proxy
// either. This stand-in does the part of its work that decides placement,
// following kaito-project/kaito at v0.10.0 (the placement golden's
// release), bring-your-own nodes (node auto-provisioning off):
//
//   - one StatefulSet named like the Workspace, pods labelled
//     `kaito.sh/workspace: <name>` (pkg/workspace/manifests/manifests.go
//     GenerateStatefulSetManifest l.113-157; GenerateManifestWithPodTemplate
//     l.248-311 for templates);
//   - required node affinity: one `In` requirement per
//     `resource.labelSelector.matchLabels` entry (preset_inferences.go
//     l.410-417 and l.469-481; manifests.go l.249-256 and l.280-290);
//   - tolerations: KAITO's defaults, `nvidia.com/gpu` Exists NoSchedule and
//     `sku=gpu` NoSchedule (preset_inferences.go defaultTolerations
//     l.84-109; appended to a template's own, manifests.go l.293-297);
//   - a preset's container requests and limits `nvidia.com/gpu` equal to
//     the GPU count of the first Ready node the label selector matches
//     (getGPUConfig l.207-229 reads it from the node's
//     `nvidia.com/gpu.count` label; preset_inferences.go l.420-426), so a
//     preset takes whole nodes; a template keeps its own resources;
//   - replicas: Status.TargetNodeCount (workspace_controller.go
//     l.979-1029), which for a template is `resource.count` and for a
//     vLLM preset comes from KAITO's node estimator (model size against GPU
//     memory); the stand-in takes `resource.count` for both, a
//     simplification that changes how many pods there are, not where they
//     go;
//   - the Workspace's status from the nodes and the StatefulSet
//     (kaitoStatus below);
//   - the StatefulSet owned by its Workspace (manifests.go l.164-166 at
//     v0.12.0), so deleting a Workspace deletes its pods (the
//     controller-manager's garbage collector).
//
// What rests on it: that the label selector, tolerations and GPU requests
// the renderer writes into a Workspace put its pods on the chosen pool
// with KAITO's own tolerations, and that the status reporter reads a
// Workspace status of KAITO's shape; not that KAITO accepts the Workspace.

// kaitoTolerations are KAITO v0.10.0's default tolerations (outside Azure).
var kaitoTolerations = []corev1.Toleration{
	{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: "sku", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
}

// kaitoObjects is what the workspace controller makes of a Workspace.
func kaitoObjects(ws *unstructured.Unstructured) ([]client.Object, error) {
	ss, err := kaitoStatefulSet(context.Background(), ws)
	if err != nil {
		return nil, err
	}
	return []client.Object{ss}, nil
}

func kaitoStatefulSet(ctx context.Context, ws *unstructured.Unstructured) (*appsv1.StatefulSet, error) {
	name := ws.GetName()
	match, _, _ := unstructured.NestedStringMap(ws.Object, "resource", "labelSelector", "matchLabels")
	keys := make([]string, 0, len(match))
	for k := range match {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var reqs []corev1.NodeSelectorRequirement
	for _, k := range keys {
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{match[k]}})
	}
	affinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}}}}
	count, found, _ := unstructured.NestedInt64(ws.Object, "resource", "count")
	if !found {
		count = 1
	}
	replicas := int32(count)
	selector := map[string]string{"kaito.sh/workspace": name}

	var tmpl corev1.PodTemplateSpec
	if raw, ok, _ := unstructured.NestedMap(ws.Object, "inference", "template"); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &tmpl); err != nil {
			return nil, err
		}
		tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, kaitoTolerations...)
	} else {
		gpus, err := nodeGPUCount(ctx, match)
		if err != nil {
			return nil, err
		}
		q := *resource.NewQuantity(gpus, resource.DecimalSI)
		tmpl.Spec = corev1.PodSpec{
			Containers: []corev1.Container{{Name: name, Image: "kaito-base",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": q}, Limits: corev1.ResourceList{"nvidia.com/gpu": q}}}},
			Tolerations: kaitoTolerations,
		}
	}
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	// A Workspace of an InferenceSet: its StatefulSet selects, and its pods
	// carry, the set's created-by label too (manifests.go
	// GenerateStatefulSetManifest l.139-146 at v0.12.0).
	if createdBy := ws.GetLabels()[kaito.LabelCreatedBy]; createdBy != "" {
		selector[kaito.LabelCreatedBy] = createdBy
	}
	maps.Copy(tmpl.Labels, selector)
	tmpl.Spec.Affinity = affinity
	owner := metav1.NewControllerRef(ws, ws.GroupVersionKind())
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ws.GetNamespace(), OwnerReferences: []metav1.OwnerReference{*owner}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas, PodManagementPolicy: appsv1.ParallelPodManagement, ServiceName: name + "-headless",
			Selector: &metav1.LabelSelector{MatchLabels: selector}, Template: tmpl,
		},
	}, nil
}

// kaitoStatus is the Workspace status the workspace controller writes for
// an inference Workspace on bring-your-own nodes
// (pkg/workspace/controllers/workspace_controller.go at v0.10.0):
// NodesReady and ResourceReady when enough Ready nodes match the label
// selector (collectNodeStatusSnapshot l.589-700, no NodeClaims without
// node auto-provisioning), InferenceReady when the StatefulSet has every
// replica Ready (collectInferenceReadyStatus l.702-721), WorkspaceSucceeded
// and `state` from both (applyInferenceWorkspaceStatus l.809-850: Ready;
// NotReady once it had been Ready; Pending before). targetNodeCount is the
// stand-in's replica count (see above).
func kaitoStatus(ctx context.Context, ws *unstructured.Unstructured) (map[string]any, error) {
	match, _, _ := unstructured.NestedStringMap(ws.Object, "resource", "labelSelector", "matchLabels")
	target, found, _ := unstructured.NestedInt64(ws.Object, "resource", "count")
	if !found {
		target = 1
	}
	nodes := &corev1.NodeList{}
	if err := cluster.Client.List(ctx, nodes, client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(match)}); err != nil {
		return nil, err
	}
	workers := []any{}
	var ready int64
	for _, n := range nodes.Items {
		workers = append(workers, n.Name)
		if n.DeletionTimestamp == nil && nodeReady(&n) {
			ready++
		}
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i].(string) < workers[j].(string) })
	nodesCond := metav1.Condition{Type: "NodesReady", Status: metav1.ConditionTrue, Reason: "NodesReady", Message: "Enough Nodes are ready"}
	resourceCond := metav1.Condition{Type: "ResourceReady", Status: metav1.ConditionTrue, Reason: "workspaceResourceStatusSuccess", Message: "workspace resource is ready"}
	if ready < target {
		nodesCond = metav1.Condition{Type: "NodesReady", Status: metav1.ConditionFalse, Reason: "NodeNotReady", Message: "Not enough Nodes are ready"}
		resourceCond = metav1.Condition{Type: "ResourceReady", Status: metav1.ConditionFalse, Reason: "NodeNotReady", Message: "Not enough Nodes are ready"}
	}
	ss := &appsv1.StatefulSet{}
	inferenceReady := false
	switch err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(ws), ss); {
	case err == nil:
		want := int32(1)
		if ss.Spec.Replicas != nil {
			want = *ss.Spec.Replicas
		}
		inferenceReady = ss.Status.ReadyReplicas == want
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	inferenceCond := metav1.Condition{Type: "InferenceReady", Status: metav1.ConditionTrue, Reason: "WorkspaceInferenceStatusSuccess", Message: "Inference has been deployed successfully"}
	succeededCond := metav1.Condition{Type: "WorkspaceSucceeded", Status: metav1.ConditionTrue, Reason: "workspaceSucceeded", Message: "workspace succeeds"}
	state := "Ready"
	if !inferenceReady || resourceCond.Status != metav1.ConditionTrue {
		inferenceCond = metav1.Condition{Type: "InferenceReady", Status: metav1.ConditionFalse, Reason: "WorkspaceInferenceStatusPending", Message: "Inference workload is not ready"}
		succeededCond = metav1.Condition{Type: "WorkspaceSucceeded", Status: metav1.ConditionFalse, Reason: "workspacePending", Message: "workspace is waiting for inference workload readiness"}
		state = "Pending"
		if was, _, _ := unstructured.NestedString(ws.Object, "status", "state"); was == "Ready" || was == "NotReady" {
			state = "NotReady"
		}
	}
	conds, err := withConditions(ws, nodesCond, resourceCond, inferenceCond, succeededCond)
	if err != nil {
		return nil, err
	}
	return map[string]any{"state": state, "conditions": conds, "workerNodes": workers, "targetNodeCount": target}, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeGPUCount reads `nvidia.com/gpu.count` off the first Ready node the
// Workspace's label selector matches, as KAITO does without node
// auto-provisioning.
func nodeGPUCount(ctx context.Context, match map[string]string) (int64, error) {
	nodes := &corev1.NodeList{}
	if err := cluster.Client.List(ctx, nodes, client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(match)}); err != nil {
		return 0, err
	}
	for _, n := range nodes.Items {
		if nodeReady(&n) {
			return strconv.ParseInt(n.Labels["nvidia.com/gpu.count"], 10, 64)
		}
	}
	return 0, fmt.Errorf("no ready nodes found matching the workspace's label selector %v (KAITO's own words)", match)
}

// installKAITOCRD installs the Workspace CRD schemas/ holds, once.
func installKAITOCRD(t *testing.T) { installCRD(t, "kaito.sh", "Workspace") }

// kaitoStandIn is the stand-in for KAITO's workspace controller.
var kaitoStandIn = standIn{apiVersion: "kaito.sh/v1beta1", listKind: "WorkspaceList", objects: kaitoObjects, status: kaitoStatus}

// kaitoPods is how many pods each Workspace gets: resource.count (see
// the stand-in's replicas above).
func kaitoPods(objs []*unstructured.Unstructured) map[string]int {
	want := map[string]int{}
	for _, o := range objs {
		if o.GetKind() == "Workspace" {
			count, found, _ := unstructured.NestedInt64(o.Object, "resource", "count")
			if !found {
				count = 1
			}
			want[o.GetName()] = int(count)
		}
	}
	return want
}
