package dynamo

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// Intent mode: instead of a DynamoGraphDeployment the renderer writes, a
// DynamoGraphDeploymentRequest (nvidia.com/v1beta1, the version Dynamo's
// operator stores from the 1.5 line; CRD at the commit schemas/dynamo
// derives) that names the model, the backend and a GPU budget; Dynamo's
// profiler then chooses the topology and, with autoApply, creates the
// graph itself. Upstream AI Runway's open PR #428 selects it with
// `spec.provider.overrides.deploymentMode: intent` (default manual), fills
// the same fields and takes every other request field from
// `overrides.spec`; this follows it, with the GitOps differences
// docs/providers.md lists.
const (
	RequestAPIVersion = "nvidia.com/v1beta1"
	RequestKind       = "DynamoGraphDeploymentRequest"

	overrideDeploymentMode = "deploymentMode"
	overrideSearchStrategy = "searchStrategy"
	overrideAutoApply      = "autoApply"
	overridePlannerImage   = "plannerImage"
	overrideSpec           = "spec"

	modeIntent = "intent"
	modeManual = "manual"

	// intentSecret is the Secret the profiler's generated deployment reads
	// the Hugging Face token from (PR #428's HuggingFaceTokenSecretName).
	intentSecret = "hf-token-secret"
	// defaultCacheMount is where PR #428 mounts a model-cache volume that
	// names no mountPath.
	defaultCacheMount = "/model-cache"
)

// requestSince is the first Dynamo release whose operator serves the
// request at v1beta1 (and stores it there).
var requestSince = hub.MustParseRelease("1.5.0")

var intentOverrideKeys = []string{overrideAutoApply, overrideDeploymentMode, overridePlannerImage, overrideSearchStrategy, overrideSpec}

// intentOverrides are the intent-mode keys of the overrides.
type intentOverrides struct {
	Mode           string
	SearchStrategy string
	AutoApply      *bool
	PlannerImage   string
	// Spec is a partial DynamoGraphDeploymentRequest spec, merged first.
	Spec map[string]any
}

// splitIntent takes the intent-mode keys out of the overrides' JSON object
// and reads them; what remains is returned for the manual mode's
// handling. Wrong shapes are errors naming the key.
func splitIntent(all map[string]json.RawMessage, l *diag.List) intentOverrides {
	var o intentOverrides
	read := func(key string, into any, want string) {
		if v, ok := all[key]; ok {
			if err := json.Unmarshal(v, into); err != nil {
				l.Errorf(overridesField+"."+key, "must be %s", want)
			}
		}
	}
	read(overrideDeploymentMode, &o.Mode, "a string, \"intent\" or \"manual\"")
	read(overrideSearchStrategy, &o.SearchStrategy, "a string, \"rapid\" or \"thorough\"")
	read(overrideAutoApply, &o.AutoApply, "true or false")
	read(overridePlannerImage, &o.PlannerImage, "an image reference")
	keys := intentOverrideKeys
	if o.Mode == modeIntent {
		read(overrideSpec, &o.Spec, "an object: a partial DynamoGraphDeploymentRequest spec")
	} else {
		// In the manual mode `spec` is the graph's, deep-merged as ever.
		keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == overrideSpec })
	}
	for _, k := range keys {
		delete(all, k)
	}
	return o
}

// intent reports whether the overrides ask for intent mode, checking the
// mode and the keys that need it.
func (o intentOverrides) intent(l *diag.List) bool {
	switch o.Mode {
	case "", modeManual:
		var set []string
		if o.SearchStrategy != "" {
			set = append(set, overrideSearchStrategy)
		}
		if o.AutoApply != nil {
			set = append(set, overrideAutoApply)
		}
		if o.PlannerImage != "" {
			set = append(set, overridePlannerImage)
		}
		for _, k := range set {
			l.Errorf(overridesField+"."+k, "requires `%s: %s`: it sets the DynamoGraphDeploymentRequest that mode renders, and the manual mode renders a DynamoGraphDeployment", overrideDeploymentMode, modeIntent)
		}
		return false
	case modeIntent:
		return true
	}
	l.Errorf(overridesField+"."+overrideDeploymentMode, "%q is not supported: must be %q (a DynamoGraphDeploymentRequest; Dynamo's profiler chooses the deployment) or %q (the default: a DynamoGraphDeployment as rendered)", o.Mode, modeIntent, modeManual)
	return false
}

// checkIntent refuses what a request cannot carry or the profiler decides
// itself, and warns where the model's own settings are not honoured.
func checkIntent(req *providers.Request, typed typedOverrides, l *diag.List) {
	s := &req.MD.Spec
	if v, err := hub.ParseRelease(req.Provider.Version); err == nil && !v.AtLeast(requestSince) {
		l.Errorf(overridesField+"."+overrideDeploymentMode, "is %q, but Dynamo %s serves no DynamoGraphDeploymentRequest at %s (from %s, where v1alpha1 is deprecated); declare Dynamo %s or later in the capability file, or use `%s: %s`", modeIntent, v, RequestAPIVersion, requestSince, requestSince, overrideDeploymentMode, modeManual)
	}
	if typed.RouterMode != "" || typed.Frontend != nil || typed.Epp != nil {
		l.Errorf(overridesField, "sets `routerMode`, `frontend` or `epp`, which shape the DynamoGraphDeployment the manual mode renders; in intent mode Dynamo's profiler generates the graph: remove them, or set `%s: %s`", overrideDeploymentMode, modeManual)
	}
	if req.GatewayEnabled {
		l.Errorf("spec.gateway.enabled", "must be false in Dynamo's intent mode: the profiler decides the graph, and the Epp and InferencePool the gateway routes through are not part of the request (upstream's intent mode turns the gateway off too); set `spec.gateway.enabled: false`, or `%s: %s`", overrideDeploymentMode, modeManual)
	}
	if secret := hfSecret(req.MD); secret != "" && secret != intentSecret {
		l.Errorf("spec.secrets.huggingFaceToken", "is %q, but the deployment Dynamo's profiler generates reads the token from Secret %q: name that Secret, or use `%s: %s` for another name", secret, intentSecret, overrideDeploymentMode, modeManual)
	}
	if s.Autoscaling() != nil {
		l.Errorf("spec.scaling.autoscaling", "is not rendered in Dynamo's intent mode: the services the profiler generates, and their scaling adapters, are not known before it runs; let Dynamo's planner scale (`%s.%s.features.planner`), or use `%s: %s`", overridesField, overrideSpec, overrideDeploymentMode, modeManual)
	}
	if len(s.Adapters) > 0 {
		l.Errorf("spec.adapters", "is not rendered in Dynamo's intent mode: a DynamoModel names the graph's workers, which the profiler generates; use `%s: %s`", overrideDeploymentMode, modeManual)
	}
	if pl := req.Placement.For(providers.ComponentMain); pl.Devices != nil {
		l.Errorf("spec.resources.gpu.count", "cannot be served on node pool %q, which claims its GPUs as DRA devices: the graph Dynamo's profiler generates requests nvidia.com/gpu; use `%s: %s`", pl.Pool, overrideDeploymentMode, modeManual)
	}
	if s.Mode() == hub.ModeDisaggregated || s.Replicas() != 1 {
		l.Warnf(diag.IgnoredField, "spec.scaling", "is not honoured in Dynamo's intent mode: the profiler chooses aggregated or disaggregated serving and the replicas within the GPU budget (`hardware.totalGpus`)")
	}
	pool := req.Placement.For(providers.ComponentMain).Pool
	switch {
	case len(s.NodeSelector) > 0 || len(s.Tolerations) > 0:
		l.Warnf(diag.IgnoredField, "spec.nodeSelector", "and `spec.tolerations` are not applied in Dynamo's intent mode: the profiler generates the graph's pods and Dynamo places them, not on node pool %q as rendered; `plan` does not count them", pool)
	case pool != "":
		l.Warnf(diag.IgnoredField, overridesField+"."+overrideDeploymentMode, "is %q: the profiler generates the graph's pods and Dynamo places them, not on node pool %q as rendered; `plan` does not count them", modeIntent, pool)
	}
}

func hfSecret(md *hub.ModelDeployment) string {
	if s := md.Spec.Secrets; s != nil {
		return s.HuggingFaceToken
	}
	return ""
}

// graphRequest renders the DynamoGraphDeploymentRequest: overrides.spec
// first, then what the model decides, as PR #428's transformDGDR: the
// model, the backend (the engine, or auto), the search strategy (rapid)
// and autoApply (true) unless overridden, the planner image, the GPU
// budget, the model cache, and the graph's name pinned to the model's, so
// its Frontend is `<name>-frontend` as in the manual mode.
func graphRequest(req *providers.Request, o intentOverrides) providers.Object {
	md := req.MD
	spec := map[string]any{}
	for k, v := range o.Spec {
		spec[k] = v
	}
	spec["model"] = md.Spec.Model.ID
	spec["backend"] = "auto"
	if slices.Contains([]string{hub.EngineVLLM, hub.EngineSGLang, hub.EngineTRTLLM}, req.Engine) {
		spec["backend"] = req.Engine
	}
	spec["searchStrategy"] = "rapid"
	if o.SearchStrategy != "" {
		spec["searchStrategy"] = o.SearchStrategy
	}
	spec["autoApply"] = o.AutoApply == nil || *o.AutoApply
	if o.PlannerImage != "" {
		spec["image"] = o.PlannerImage
	}
	if n := md.Spec.GPUCount(); n > 0 {
		hardware, _ := spec["hardware"].(map[string]any)
		if hardware == nil {
			hardware = map[string]any{}
		}
		hardware["totalGpus"] = int64(n)
		spec["hardware"] = hardware
	}
	if v := modelCacheVolume(md); v != nil {
		mount := v.MountPath
		if mount == "" {
			mount = defaultCacheMount
		}
		spec["modelCache"] = map[string]any{"pvcName": v.ClaimName, "pvcMountPath": mount}
	}
	labels := providers.StringMap(providers.BaseLabels(md, req.Engine))
	overrides, _ := spec["overrides"].(map[string]any)
	if overrides == nil {
		overrides = map[string]any{}
	}
	overrides["dgd"] = map[string]any{"apiVersion": APIVersion, "kind": Kind, "metadata": map[string]any{"name": md.Name, "labels": labels}}
	spec["overrides"] = overrides
	return providers.Object{"apiVersion": RequestAPIVersion, "kind": RequestKind, "metadata": providers.GeneratedMeta(md, req.Engine, md.Name), "spec": spec}
}

// requestHealth translates a request's status as PR #428's
// translateDGDRStatus: Deployed is Running, Failed is Failed, Profiling,
// Ready and Deploying are Deploying (Ready with autoApply false says the
// plan waits to be applied), anything else Pending; the message is the
// first condition message, up to the first False condition; replicas from
// `status.deploymentInfo`; the endpoint, once deployed, is the graph's
// Frontend (`status.dgdName`, else the request's name, `-frontend:8000`).
func requestHealth(obj *unstructured.Unstructured) providers.Health {
	f := providers.Read(obj)
	var h providers.Health
	switch phase := f.String("status", "phase"); phase {
	case "Deployed":
		h.Phase = providers.PhaseRunning
	case "Failed":
		h.Phase = providers.PhaseFailed
	case "Profiling", "Ready", "Deploying":
		h.Phase = providers.PhaseDeploying
		if phase == "Ready" {
			if apply, ok := f.Map("spec")["autoApply"].(bool); ok && !apply {
				h.Message = "DGDR plan is ready; autoApply is false"
			}
		}
	default:
		h.Phase = providers.PhasePending
	}
	if m := conditionMessage(f); m != "" {
		h.Message = m
	}
	if desired, ok := f.Int32("status", "deploymentInfo", "replicas"); ok {
		available, _ := f.Int32("status", "deploymentInfo", "availableReplicas")
		h.Replicas = &providers.Replicas{Desired: desired, Ready: available, Available: available}
	}
	if h.Phase == providers.PhaseRunning {
		name := f.String("status", "dgdName")
		if name == "" {
			name = obj.GetName()
		}
		h.Endpoint = &providers.Endpoint{Service: fmt.Sprintf("%s-frontend", name), Port: defaultServePort}
	}
	h.Unreadable = f.Problems()
	return h
}

// conditionMessage is the first condition message, or the message of the
// first condition that is False when one comes before any other message.
func conditionMessage(f *providers.Fields) string {
	msg, stop := "", false
	f.EachItem([]string{"status", "conditions"}, func(c *providers.Fields) {
		if stop {
			return
		}
		if m := c.String("message"); m != "" && msg == "" {
			msg = m
		}
		stop = c.String("status") == "False" || msg != ""
	})
	return msg
}
