package kaito

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/internal/autoscale"
)

// KAITO's InferenceSet (kaito.sh/v1beta1 from 0.11.0, beta and on by
// default; kaito-project/kaito api/v1beta1/inferenceset_types.go and
// pkg/inferenceset at v0.11.0 and v0.12.0): `spec.replicas` Workspaces made
// from `spec.template`, each named `<name>-<random>` and labelled
// `inferenceset.kaito.sh/created-by: <name>`, a label KAITO also puts on
// their pods (pkg/workspace/manifests). Its scale subresource
// (.spec.replicas, .status.replicas, .status.selector) is what KEDA or a
// HorizontalPodAutoscaler scales, and it allows 0 replicas. Each Workspace
// still gets its node count per replica from KAITO's node estimator.
const (
	InferenceSetKind = "InferenceSet"
	// LabelCreatedBy is the label KAITO puts on an InferenceSet's
	// Workspaces, their StatefulSets' selectors and their pods.
	LabelCreatedBy = "inferenceset.kaito.sh/created-by"
	// labelPodIndex is the StatefulSet controller's pod index label
	// (Kubernetes 1.28 and later): index 0 is the pod KAITO's own
	// Workspace Service selects, the one that serves.
	labelPodIndex = "apps.kubernetes.io/pod-index"
)

// inferenceSetReason says why a model is rendered as an InferenceSet, ""
// when it is a Workspace: the capability file chose it, or the model asks
// for what only an InferenceSet does (autoscaling, zero replicas) on a
// release that serves one, unless the file pins Workspace.
func inferenceSetReason(req *providers.Request, rel release) string {
	workload := ""
	if req.Provider != nil {
		workload = req.Provider.Workload
	}
	s := &req.MD.Spec
	switch {
	case workload == hub.WorkloadInferenceSet:
		return "the capability file's `workload: InferenceSet`"
	case workload == hub.WorkloadWorkspace || !rel.inferenceSet:
		return ""
	case s.Autoscaling() != nil:
		return "autoscaling: a Workspace has no scale subresource"
	case s.Mode() == hub.ModeAggregated && s.Replicas() == 0:
		return "zero replicas: a Workspace runs at least one"
	}
	return ""
}

// Workload implements providers.WorkloadChooser: InferenceSet, or "" for
// the Workspace upstream renders.
func (Provider) Workload(req *providers.Request) string {
	rel, err := releaseOf(req)
	if err != nil || inferenceSetReason(req, rel) == "" {
		return ""
	}
	return InferenceSetKind
}

// inferenceSet wraps a rendered Workspace (after overrides, which keep the
// Workspace's shape) into the InferenceSet that makes replicas of it:
// `resource.labelSelector` becomes the set's, the rest of `resource` and
// `inference` its template's. The replica count comes from the model, and
// none is written when an autoscaler owns it. `resource.count` (deprecated;
// KAITO leaves it unset on the Workspaces it makes) is dropped with a
// warning when overrides set it; a root field of a Workspace the
// InferenceSet has no place for is an error.
func inferenceSet(ws providers.Object, req *providers.Request, l *diag.List) providers.Object {
	res, _ := ws["resource"].(map[string]any)
	templateResource := map[string]any{}
	for k, v := range res {
		switch k {
		case "labelSelector":
		case "count":
			if overrideSet(&req.MD.Spec, "resource", "count") {
				l.Warnf(diag.IgnoredField, "spec.provider.overrides.resource.count", "is not rendered: an InferenceSet's Workspaces each run one replica, and `spec.scaling` sets how many there are")
			}
		default:
			templateResource[k] = v
		}
	}
	template := map[string]any{"inference": ws["inference"]}
	if len(templateResource) > 0 {
		template["resource"] = templateResource
	}
	spec := map[string]any{"labelSelector": res["labelSelector"], "template": template}
	if req.MD.Spec.Autoscaling() == nil {
		spec["replicas"] = int64(req.MD.Spec.Replicas())
		if req.MD.Spec.Replicas() == 0 {
			l.Warnf(diag.ScaleToZero, "spec.scaling.replicas", "is 0: the InferenceSet runs no Workspace and serves nothing (upstream AI Runway would run a Workspace of 1 replica)")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ws)) {
		switch k {
		case "apiVersion", "kind", "metadata", "resource", "inference":
		default:
			l.Errorf("spec.provider.overrides."+k, "has no place in an InferenceSet, whose template holds only a Workspace's `resource` and `inference`")
		}
	}
	return providers.Object{"apiVersion": APIVersion, "kind": InferenceSetKind, "metadata": ws["metadata"], "spec": spec}
}

// inferenceSetService is the Service clients call, as they call a
// Workspace's: `<name>:80` to the pod KAITO serves from (index 0) of every
// replica. KAITO makes a Service per Workspace only, under its generated
// name, which no client or route can know.
func inferenceSetService(req *providers.Request) providers.Object {
	md := req.MD
	return providers.Object{
		"apiVersion": "v1", "kind": "Service", "metadata": providers.GeneratedMeta(md, req.Engine, md.Name),
		"spec": map[string]any{
			"selector": map[string]any{LabelCreatedBy: md.Name, labelPodIndex: "0"},
			"ports":    []any{map[string]any{"name": "http", "protocol": "TCP", "port": int64(servicePort), "targetPort": int64(Port)}},
		},
	}
}

// inferenceSetAutoscaler is the ScaledObject or HorizontalPodAutoscaler
// that scales the InferenceSet, nil when the model is not autoscaled. The
// engine's metrics carry KAITO's served name for the model.
func inferenceSetAutoscaler(req *providers.Request) providers.Object {
	return autoscale.Render(req, autoscale.Target{APIVersion: APIVersion, Kind: InferenceSetKind, Name: req.MD.Name, ModelName: metricsName(req)})
}

// metricsName is the `model_name` of the engine's metrics: KAITO's name
// for a preset, the model id for llama.cpp.
func metricsName(req *providers.Request) string {
	if req.Engine == hub.EngineVLLM {
		return presetServedName(req.MD.Spec.Model.ID)
	}
	return req.MD.Spec.Model.ID
}

// inferenceSetHealth translates an InferenceSet's status as its
// controller writes it: `InferenceSetReady` True once every desired
// replica's Workspace succeeded, False with reason inferencesetFailed when
// its gateway reconcile failed, False otherwise while replicas come up.
// `status.replicas` is the desired count (the controller writes
// spec.replicas there), `status.readyReplicas` the ready ones.
func inferenceSetHealth(obj *unstructured.Unstructured) providers.Health {
	f := providers.Read(obj)
	ready := f.Conditions()["InferenceSetReady"]
	var h providers.Health
	switch {
	case ready.Status == "True":
		h.Phase = providers.PhaseRunning
	case ready.Status == "False" && ready.Reason == "inferencesetFailed":
		h.Phase, h.Message = providers.PhaseFailed, ready.Message
	case ready.Status == "False":
		h.Phase, h.Message = providers.PhaseDeploying, ready.Message
	default:
		h.Phase = providers.PhasePending
	}
	if ready.Status != "" {
		desired, ok := f.Int32("spec", "replicas")
		if !ok {
			desired = 1 // the CRD's default
		}
		readyReplicas, _ := f.Int32("status", "readyReplicas")
		h.Replicas = &providers.Replicas{Desired: desired, Ready: readyReplicas, Available: readyReplicas}
		e := endpoint(obj.GetName())
		h.Endpoint = &e
	}
	h.Unreadable = f.Problems()
	return h
}
