package kaito

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// checkRendered checks the Workspace after overrides against what the
// declared KAITO release's admission webhook accepts, so an object KAITO
// would refuse is never emitted.
func checkRendered(obj providers.Object, req *providers.Request, rel release, l *diag.List) {
	s := &req.MD.Spec
	res, _ := obj["resource"].(map[string]any)
	if res == nil || res["labelSelector"] == nil {
		l.Errorf("spec.provider.overrides.resource", "must not remove `resource.labelSelector`: every KAITO Workspace requires it")
	}
	instanceType, _ := res["instanceType"].(string)
	nap := req.Provider != nil && req.Provider.NodeAutoProvisioning != nil
	kind := "CPU"
	if s.GPUCount() > 0 {
		kind = "GPU"
	}
	switch {
	case rel.labelBYO && nap && instanceType == "" && resourceSpec(req, rel).InstanceType != "":
		l.Errorf("spec.provider.overrides.resource.instanceType", "must not be removed: %s with node auto-provisioning requires `resource.instanceType`", rel)
	case rel.labelBYO && nap && instanceType == "":
		l.Errorf("", "%s with node auto-provisioning requires `resource.instanceType`, and the capability file names no %sInstanceType for this %s workload: add `nodeAutoProvisioning.%sInstanceType` to the kaito entry, or set `resource.instanceType` in spec.provider.overrides", rel, strings.ToLower(kind), kind, strings.ToLower(kind))
	case rel.labelBYO && !nap && instanceType != "":
		l.Errorf("spec.provider.overrides.resource.instanceType", "must be empty on %s with bring-your-own nodes (KAITO refuses an instance type when node auto-provisioning is off); declare `nodeAutoProvisioning` for kaito in the capability file if KAITO provisions nodes", rel)
	case !rel.labelBYO && instanceType == "" && res["preferredNodes"] == nil:
		l.Warnf(diag.KAITOInstanceType, "", "%s has no label-only bring-your-own-node mode: without `resource.preferredNodes` (set it in spec.provider.overrides) it uses only nodes whose instance type is `resource.instanceType`, which its CRD defaults to %s, and auto-provisions the rest; declare `nodeAutoProvisioning` in the capability file to choose the instance type", rel, LegacyDefaultInstanceType)
	}
	inf, _ := obj["inference"].(map[string]any)
	preset, _ := inf["preset"].(map[string]any)
	if name, _ := preset["name"].(string); name != "" {
		options, _ := preset["presetOptions"].(map[string]any)
		if secret, _ := options["modelAccessSecret"].(string); secret != "" {
			if p, inImage, err := weightsInImage(rel, name); err == nil && inImage {
				l.Errorf("spec.provider.overrides.inference.preset.presetOptions.modelAccessSecret", "names the Secret %q, but %s's preset %q has its weights in its image (downloadAtRuntime false in KAITO's supported_models.yaml), and KAITO's webhook refuses the Workspace: %q; remove it", secret, rel, p, secretRefused)
			}
		}
	}
	if !rel.hfPresetNames {
		if name, _ := preset["name"].(string); strings.Contains(name, "/") {
			field := "spec.model.id"
			if name != s.Model.ID {
				field = "spec.provider.overrides.inference.preset.name"
			}
			l.Errorf(field, "%q is not a KAITO preset name: %s accepts only its registered preset names (for example `phi-3.5-mini-instruct`), Hugging Face ids only from KAITO 0.9.0; use the preset name as `spec.model.id`", name, rel)
		}
	}
}

// ignored reports a ModelDeployment field this provider does not render.
func ignored(l *diag.List, field, why string, args ...any) {
	l.Warnf(diag.IgnoredField, field, "is ignored by the kaito provider: "+why, args...)
}

const configHint = "tune vLLM through a ConfigMap named in `inference.config`, set with spec.provider.overrides"

// warnPresetIgnored names every field the preset path drops: a KAITO
// preset runs KAITO's own vLLM container with KAITO's settings.
func warnPresetIgnored(req *providers.Request, rel release, l *diag.List) {
	s := &req.MD.Spec
	if e := s.Engine; e != nil {
		if e.ContextLength != nil {
			ignored(l, "spec.engine.contextLength", "KAITO presets set vLLM's context length themselves (%s)", configHint)
		}
		if hub.Bool(e.TrustRemoteCode) {
			ignored(l, "spec.engine.trustRemoteCode", "KAITO presets decide whether vLLM trusts remote code")
		}
		if hub.Bool(e.EnforceEager) {
			ignored(l, "spec.engine.enforceEager", "KAITO presets configure vLLM themselves (%s)", configHint)
		}
		if e.EnablePrefixCaching != nil && !*e.EnablePrefixCaching {
			ignored(l, "spec.engine.enablePrefixCaching", "KAITO presets configure vLLM themselves (%s)", configHint)
		}
		if len(e.Args) > 0 {
			ignored(l, "spec.engine.args", "KAITO presets take no engine arguments (%s); keys: %s", configHint, strings.Join(slices.Sorted(maps.Keys(e.Args)), ", "))
		}
		if len(e.ExtraArgs) > 0 {
			ignored(l, "spec.engine.extraArgs", "KAITO presets take no engine arguments (%s)", configHint)
		}
		if e.Image != "" {
			ignored(l, "spec.engine.image", "KAITO presets run KAITO's own image")
		}
	}
	if s.Image != "" {
		ignored(l, "spec.image", "KAITO presets run KAITO's own image")
	}
	if len(s.Env) > 0 {
		ignored(l, "spec.env", "KAITO presets run KAITO's own container; only the Hugging Face token Secret is passed (as `inference.preset.presetOptions.modelAccessSecret`)")
	}
	if r := s.Resources; r != nil {
		if r.Memory != "" {
			ignored(l, "spec.resources.memory", "KAITO presets size their pods from the preset")
		}
		if r.CPU != "" {
			ignored(l, "spec.resources.cpu", "KAITO presets size their pods from the preset")
		}
	}
	if n := s.GPUCount(); n > 1 {
		sel := "only decides which nodes are selected (`" + LabelGPUPresent + ": \"true\"` and the node pool that fits it)"
		if !rel.labelBYO {
			sel = "has no effect on " + rel.String()
		}
		l.Warnf(diag.IgnoredField, "spec.resources.gpu.count", "is %d, but KAITO presets size GPUs themselves from the preset and the selected nodes; the count %s", n, sel)
	}
	if len(s.Tolerations) > 0 {
		ignored(l, "spec.tolerations", "a Workspace has no toleration field for presets; KAITO adds its own GPU tolerations (nvidia.com/gpu, sku=gpu)")
	}
	warnUntoleratedPoolTaints(req, l)
}

// kaitoTolerated are the taint keys KAITO's preset pods tolerate by
// themselves: nvidia.com/gpu (Exists) and sku (gpu).
var kaitoTolerated = map[string]bool{"nvidia.com/gpu": true, "sku": true}

// warnUntoleratedPoolTaints warns when the chosen node pool has a taint a
// preset pod cannot tolerate: presets have no toleration field, so such a
// pool would leave the pods Pending.
func warnUntoleratedPoolTaints(req *providers.Request, l *diag.List) {
	placed := req.Placement.For(providers.ComponentMain)
	if placed.Pool == "" {
		return
	}
	for _, t := range req.Caps.NodePools {
		if t.Name != placed.Pool {
			continue
		}
		for _, taint := range t.Taints {
			if !kaitoTolerated[taint.Key] {
				l.Warnf(diag.UntoleratedTaint, "spec.resources", "node pool %q has taint %s:%s, which KAITO preset pods do not tolerate (a Workspace preset has no toleration field); they will stay Pending unless KAITO's own tolerations cover it", placed.Pool, taint.Key, taint.Effect)
			}
		}
	}
}

// warnTemplateIgnored names the engine settings the llama.cpp runner is
// not given: upstream passes it only the model and the listen address.
func warnTemplateIgnored(req *providers.Request, l *diag.List) {
	e := req.MD.Spec.Engine
	if e == nil {
		return
	}
	const why = "the llama.cpp template passes the runner only the model and its listen address"
	if e.ContextLength != nil {
		ignored(l, "spec.engine.contextLength", why)
	}
	if hub.Bool(e.TrustRemoteCode) {
		ignored(l, "spec.engine.trustRemoteCode", why)
	}
	if hub.Bool(e.EnforceEager) {
		ignored(l, "spec.engine.enforceEager", why)
	}
	if e.EnablePrefixCaching != nil && !*e.EnablePrefixCaching {
		ignored(l, "spec.engine.enablePrefixCaching", why)
	}
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		switch {
		case k != ArgGGUFURL:
			ignored(l, "spec.engine.args."+k, "the llama.cpp template reads only `%s`", ArgGGUFURL)
		case req.MD.Spec.Model.Source == hub.SourceCustom:
			ignored(l, "spec.engine.args."+k, "with `spec.model.source: custom` the image carries the model, so no model argument is passed")
		}
	}
	if len(e.ExtraArgs) > 0 {
		ignored(l, "spec.engine.extraArgs", why)
	}
}

// warnCommonIgnored names what neither path renders.
func warnCommonIgnored(req *providers.Request, l *diag.List) {
	s := &req.MD.Spec
	if s.Model.ServedName != "" {
		ignored(l, "spec.model.servedName", "KAITO passes no served model name to the model server")
	}
	if s.Model.Storage != nil {
		for i, v := range s.Model.Storage.Volumes {
			ignored(l, fmt.Sprintf("spec.model.storage.volumes[%d]", i), "a Workspace mounts no user volumes (KAITO manages its own model cache); PVC %q is neither created nor mounted", v.ResolvedClaimName(req.MD.Name))
		}
	}
}
