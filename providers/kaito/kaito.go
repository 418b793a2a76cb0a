package kaito

import (
	"encoding/json"
	"maps"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/internal/autoscale"
)

// Upstream constants of the KAITO provider.
const (
	APIVersion = "kaito.sh/v1beta1"
	Kind       = "Workspace"
	// ContainerName and Port are the llama.cpp template's container; KAITO's
	// Service maps port 80 to 5000 for presets and templates alike.
	ContainerName = "model"
	Port          = 5000
	// ArgGGUFURL is the one `engine.args` key the llama.cpp template reads.
	ArgGGUFURL = "ggufUrl"

	LabelOS         = "kubernetes.io/os"
	LabelGPUPresent = "nvidia.com/gpu.present"
	// PresetGPUResource is the only GPU resource KAITO presets request.
	PresetGPUResource = "nvidia.com/gpu"
	// LegacyDefaultInstanceType is what KAITO < 0.8 defaults
	// `resource.instanceType` to in its CRD.
	LegacyDefaultInstanceType = "Standard_NC24ads_A100_v4"
)

// presetNameRe is what a KAITO preset name or a Hugging Face repository ID
// (KAITO 0.9 and later) is made of.
var presetNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

// Provider is the KAITO provider.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name implements providers.Provider.
func (Provider) Name() string { return hub.ProviderKAITO }

// Detection implements providers.Detector: the CRD of the Workspace and the workspace controller's Deployment (AKS's managed add-on names it ai-toolchain-operator), whose image tag has no leading v.
func (Provider) Detection() providers.Detection {
	return providers.Detection{CRD: "workspaces.kaito.sh",
		Images: []string{"/aks/kaito/workspace"}, Names: []string{"workspace", "ai-toolchain-operator"}, Chart: "workspace"}
}

// Check implements providers.Provider: upstream's compatibility rules
// beyond the engines, modes and GPUs of the capability catalogue, which the
// render engine checks (with the llama.cpp image rule fixed to accept
// `engine.image`), plus what the declared KAITO release refuses.
func (Provider) Check(req *providers.Request) diag.List {
	var l diag.List
	s := &req.MD.Spec
	rel, err := releaseOf(req)
	if err != nil {
		l.Errorf("", "%v", err)
		return l
	}
	switch req.Engine {
	case hub.EngineVLLM:
		if s.Model.ID == "" {
			l.Errorf("spec.model.id", "is required by the kaito provider for the vllm engine: it names the KAITO preset (`inference.preset.name`)")
		} else if !presetNameRe.MatchString(s.Model.ID) {
			l.Errorf("spec.model.id", "%q cannot name a KAITO preset: KAITO writes the preset's name into the pods it creates itself, where the renderer cannot keep `$(...)` or shell characters literal, and a preset name or Hugging Face repository ID has only letters, digits, '.', '_', '-' and '/'", s.Model.ID)
		}
		if s.GPUCount() > 0 && s.Resources.GPU.Type != PresetGPUResource {
			l.Errorf("spec.resources.gpu.type", "%q cannot be honoured: KAITO presets always request %s; use the llamacpp engine with your own image, or another provider", s.Resources.GPU.Type, PresetGPUResource)
		}
	case hub.EngineLlamaCpp:
		if image(req) == "" {
			l.Errorf("spec.engine.image", "llamacpp engine requires an image on KAITO: set `spec.engine.image` (or the legacy `spec.image`), or pin `images.llamacpp` for kaito in the capability file")
		}
	}
	asSet := inferenceSetReason(req, rel) != ""
	switch {
	case asSet:
		autoscale.CheckFor(req, metricsName(req), &l)
	case s.Autoscaling() != nil && rel.inferenceSet:
		l.Errorf("spec.scaling.autoscaling", "cannot be rendered as a KAITO Workspace, which has no scale subresource for KEDA or a HorizontalPodAutoscaler to scale, and the capability file pins `workload: Workspace` for kaito; remove that pin to render an InferenceSet, set a fixed `spec.scaling.replicas`, or serve the model with another provider (docs/providers.md#inferenceset)")
	case s.Autoscaling() != nil:
		l.Errorf("spec.scaling.autoscaling", "cannot be rendered for %s: a Workspace has no scale subresource for KEDA or a HorizontalPodAutoscaler to scale, and the InferenceSet that has one is served from KAITO %s; declare that release or later, set a fixed `spec.scaling.replicas`, or serve the model with a provider that renders a scalable workload (docs/providers.md#inferenceset)", rel, hub.KAITOInferenceSetSince)
	}
	if len(s.Adapters) > 0 {
		l.Errorf("spec.adapters", "%s cannot load adapters from Hugging Face: a Workspace takes `inference.adapters` only as container images (KAITO 0.6 and later) or volumes (0.10 and later) and refuses URLs; package each adapter as an image and set `inference.adapters` through spec.provider.overrides, or serve the adapters with a provider that loads them from Hugging Face (docs/providers.md#lora-adapters-specadapters-v1alpha2)", rel)
	}
	// Other engines and disaggregated serving are refused by the render
	// engine from the capability catalogue.
	if s.Mode() == hub.ModeAggregated && s.Replicas() == 0 && !asSet {
		l.Errorf("spec.scaling.replicas", "is 0, but a KAITO Workspace cannot be scaled to zero (`resource.count` is at least 1; upstream AI Runway would silently run 1 replica); set 1 or more, remove the ModelDeployment, or declare KAITO %s or later, whose InferenceSet scales to zero", hub.KAITOInferenceSetSince)
	}
	// KAITO names its Services `<name>` and `<name>-headless`; an invalid
	// Service name would only fail inside the cluster.
	if msgs := utilvalidation.IsDNS1035Label(req.MD.Name + "-headless"); len(msgs) > 0 {
		l.Errorf("metadata.name", "%q cannot name the Services KAITO creates for the Workspace (%q, %q): %s", req.MD.Name, req.MD.Name, req.MD.Name+"-headless", strings.Join(msgs, "; "))
	}
	checkDevices(req, rel, &l)
	if rel.labelBYO && overrideSet(s, "resource", "preferredNodes") {
		// Deprecated, not removed: the CRD still accepts it, so it renders
		// as given, but the Workspace controller of these releases reads
		// only the label selector (checked in KAITO v0.8.1 and v0.10.0).
		l.Warnf(diag.DeprecatedField, "spec.provider.overrides.resource.preferredNodes", "is deprecated since KAITO 0.8.0 and %s's Workspace controller ignores it: bring-your-own nodes are chosen by `resource.labelSelector`, which is rendered from `spec.nodeSelector` (the nodes must carry the GPU Feature Discovery labels); remove it and put the labels of those nodes in `spec.nodeSelector`", rel)
	}
	return l
}

// Render implements providers.Provider.
func (Provider) Render(req *providers.Request) ([]providers.Object, diag.List) {
	var l diag.List
	md := req.MD
	rel, err := releaseOf(req)
	if err != nil {
		l.Errorf("", "%v", err)
		return nil, l
	}
	ws := workspace{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata: metav1.ObjectMeta{
			Name:      md.Name,
			Namespace: md.Namespace,
			// Upstream lets podTemplate labels override its own; the
			// model-deployment label is re-asserted because the status
			// reporter and the gateway find the Workspace by it.
			Labels:      providers.Merge(providers.BaseLabels(md, req.Engine), providers.PodTemplateLabels(md), map[string]string{hub.LabelModelDeployment: md.Name}),
			Annotations: providers.GeneratedAnnotations(md, providers.PodTemplateAnnotations(md)),
		},
		Resource: resourceSpec(req, rel),
	}
	switch req.Engine {
	case hub.EngineVLLM:
		ws.Inference.Preset = presetSpec(req, rel, &l)
		if ws.Inference.Preset == nil {
			return nil, l
		}
		warnPresetIgnored(req, rel, &l)
	case hub.EngineLlamaCpp:
		img := image(req)
		if img == "" {
			l.Errorf("spec.engine.image", "llamacpp engine requires an image on KAITO")
			return nil, l
		}
		ws.Inference.Template = podTemplate(req, img)
		warnTemplateIgnored(req, &l)
		providers.WarnLiteralEnv(md, &l)
	default:
		l.Errorf("spec.engine.type", "unsupported engine type for KAITO: %s", req.Engine)
		return nil, l
	}
	warnCommonIgnored(req, &l)
	claims, err := claimTemplate(req, &ws)
	if err != nil {
		l.Errorf("", "internal error rendering the ResourceClaimTemplate: %v", err)
		return nil, l
	}

	obj, err := providers.FromTyped(ws)
	if err != nil {
		l.Errorf("", "internal error rendering the Workspace: %v", err)
		return nil, l
	}
	if md.Spec.Provider != nil {
		if err := providers.ApplyOverrides(obj, md.Spec.Provider.Overrides); err != nil {
			l.Errorf("spec.provider.overrides", "%v", err)
			return nil, l
		}
	}
	checkRendered(obj, req, rel, &l)
	out := []providers.Object{obj}
	if why := inferenceSetReason(req, rel); why != "" {
		l.Infof("", "rendered as a KAITO InferenceSet, not a Workspace: %s", why)
		out = []providers.Object{inferenceSet(obj, req, &l), inferenceSetService(req)}
		if scaler := inferenceSetAutoscaler(req); scaler != nil {
			out = append(out, scaler)
		}
	}
	if claims != nil {
		out = append(out, claims)
	}
	return out, l
}

// workspace is the part of KAITO's v1beta1 Workspace this provider renders.
// `resource` and `inference` sit at the root: the kind has no `spec`.
type workspace struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Resource   wsResource        `json:"resource"`
	Inference  wsInference       `json:"inference"`
}

type wsResource struct {
	Count         *int64                `json:"count,omitempty"`
	InstanceType  string                `json:"instanceType,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector"`
}

type wsInference struct {
	Preset   *wsPreset               `json:"preset,omitempty"`
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

type wsPreset struct {
	Name          string           `json:"name"`
	PresetOptions *wsPresetOptions `json:"presetOptions,omitempty"`
}

type wsPresetOptions struct {
	ModelAccessSecret string `json:"modelAccessSecret,omitempty"`
}

// resourceSpec renders `resource`: the replica count, the node label
// selector and, where the cluster auto-provisions nodes, the instance type.
func resourceSpec(req *providers.Request, rel release) wsResource {
	md := req.MD
	count := int64(md.Spec.Replicas())
	if count < 1 {
		count = 1 // Check refuses 0; this is upstream's floor for direct callers
	}
	match := map[string]string{LabelOS: "linux"}
	// The node pool's labels merged with spec.nodeSelector (placement).
	maps.Copy(match, req.Placement.For(providers.ComponentMain).NodeSelector)
	gpu := md.Spec.GPUCount() > 0
	if gpu && rel.labelBYO {
		// After the user's nodeSelector, so "false" there cannot point a GPU
		// workload at CPU nodes (KAITO's BYO webhook would reject them).
		match[LabelGPUPresent] = "true"
	}
	r := wsResource{Count: &count, LabelSelector: &metav1.LabelSelector{MatchLabels: match}}
	if req.Provider != nil && req.Provider.NodeAutoProvisioning != nil {
		if gpu {
			r.InstanceType = req.Provider.NodeAutoProvisioning.GPUInstanceType
		} else {
			r.InstanceType = req.Provider.NodeAutoProvisioning.CPUInstanceType
		}
	}
	return r
}

// presetSpec names the preset after the model and hands KAITO the Hugging
// Face token Secret (upstream passes none, so gated presets fail), except
// where KAITO refuses it: before 0.11, for a preset whose weights are in
// its image (weightsInImage), which a warning then names. Before
// KAITO 0.9 a preset must be one of the release's registered names: a
// Hugging Face id is mapped to the preset KAITO registers for that
// repository (presets.go), or refused with the closest presets; nil then.
func presetSpec(req *providers.Request, rel release, l *diag.List) *wsPreset {
	name := req.MD.Spec.Model.ID
	if !rel.hfPresetNames && strings.Contains(name, "/") && overridesPresetName(req.MD) == "" {
		preset, ok, closest, err := presetName(rel, name)
		switch {
		case err != nil:
			l.Errorf("spec.model.id", "%v", err)
			return nil
		case !ok:
			l.Errorf("spec.model.id", "%q has no KAITO preset in %s, which accepts only its registered preset names (Hugging Face ids from KAITO 0.9.0); closest presets: %s; set one of them as `spec.model.id`, or declare KAITO 0.9.0 or later", name, rel, strings.Join(closest, ", "))
			return nil
		}
		l.Infof("spec.model.id", "%q is rendered as %s's preset %q, which KAITO registers for that Hugging Face repository", name, rel, preset)
		name = preset
	}
	p := &wsPreset{Name: name}
	if sec := req.MD.Spec.Secrets; sec != nil && sec.HuggingFaceToken != "" {
		kaitoName := name
		if o := overridesPresetName(req.MD); o != "" {
			kaitoName = o
		}
		switch preset, inImage, err := weightsInImage(rel, kaitoName); {
		case err != nil:
			l.Errorf("spec.model.id", "%v", err)
			return nil
		case inImage:
			ignored(l, "spec.secrets.huggingFaceToken", "%s's preset %q has its weights in its image (downloadAtRuntime false in KAITO's supported_models.yaml), and KAITO's webhook refuses a Workspace that names a modelAccessSecret for it (%q): the Secret %q is not passed as `inference.preset.presetOptions.modelAccessSecret`",
				rel, preset, secretRefused, sec.HuggingFaceToken)
		default:
			p.PresetOptions = &wsPresetOptions{ModelAccessSecret: sec.HuggingFaceToken}
		}
	}
	return p
}

// secretRefused is KAITO's webhook refusal of a modelAccessSecret for a
// preset whose weights are in its image (api/v1beta1/
// workspace_validation.go, v0.6.0 to v0.10.0).
const secretRefused = "This preset does not require a modelAccessSecret with HF_TOKEN key under presetOptions"

// overridesPresetName is the preset name spec.provider.overrides sets
// (it replaces the one derived from the model), "" when it sets none.
func overridesPresetName(md *hub.ModelDeployment) string {
	if md.Spec.Provider == nil || len(md.Spec.Provider.Overrides) == 0 {
		return ""
	}
	var o struct {
		Inference struct {
			Preset struct {
				Name string `json:"name"`
			} `json:"preset"`
		} `json:"inference"`
	}
	_ = json.Unmarshal(md.Spec.Provider.Overrides, &o) // validated JSON; a mistyped name is not ours to report
	return o.Inference.Preset.Name
}

// image picks engine.image, then the legacy spec.image, then the cluster's
// llama.cpp pin from the capability file.
func image(req *providers.Request) string {
	if img := req.MD.Spec.EngineImage(); img != "" {
		return img
	}
	if req.Provider != nil {
		return req.Provider.Images[hub.EngineLlamaCpp]
	}
	return ""
}

// podTemplate renders the llama.cpp pod. KAITO adds its own node affinity
// (from `resource.labelSelector`) and tolerations to it, keeping ours.
func podTemplate(req *providers.Request, img string) *corev1.PodTemplateSpec {
	md := req.MD
	res := templateResources(md)
	req.Placement.FillRequests(providers.ComponentMain, &res)
	c := corev1.Container{
		Name:      ContainerName,
		Image:     img,
		Args:      LlamaCppArgs(md),
		Ports:     []corev1.ContainerPort{{ContainerPort: Port}},
		Resources: res,
		Env:       providers.ContainerEnv(md),
	}
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      providers.Merge(providers.PodTemplateLabels(md), map[string]string{hub.LabelModelDeployment: md.Name}),
			Annotations: providers.PodTemplateAnnotations(md),
		},
		Spec: corev1.PodSpec{
			Containers:  []corev1.Container{c},
			Tolerations: req.Placement.For(providers.ComponentMain).Tolerations,
		},
	}
}

// LlamaCppArgs is the runner's command line: the model (the GGUF URL from
// `engine.args.ggufUrl`, else `huggingface://<id>`; none for a custom
// source, whose image carries the model) and the listen address. The model
// is the user's string, escaped for the kubelet (EscapeExpansion).
func LlamaCppArgs(md *hub.ModelDeployment) []string {
	args := []string{"--address=:" + strconv.Itoa(Port)}
	if m := &md.Spec.Model; m.Source != hub.SourceCustom && m.ID != "" {
		model := "huggingface://" + m.ID
		if e := md.Spec.Engine; e != nil && e.Args[ArgGGUFURL] != "" {
			model = e.Args[ArgGGUFURL]
		}
		args = append([]string{providers.EscapeExpansion(model)}, args...)
	}
	return args
}

// templateResources requests memory and CPU as upstream does, and limits
// the GPUs under `resources.gpu.type` (upstream renders no GPU at all, so a
// GPU llama.cpp pod could land on a GPU node without getting a GPU).
func templateResources(md *hub.ModelDeployment) corev1.ResourceRequirements {
	var rr corev1.ResourceRequirements
	r := md.Spec.Resources
	if r == nil {
		return rr
	}
	if r.Memory != "" || r.CPU != "" {
		rr.Requests = corev1.ResourceList{}
		if r.Memory != "" {
			rr.Requests[corev1.ResourceMemory] = hub.MustParseQuantity(r.Memory)
		}
		if r.CPU != "" {
			rr.Requests[corev1.ResourceCPU] = hub.MustParseQuantity(r.CPU)
		}
	}
	if n := md.Spec.GPUCount(); n > 0 {
		rr.Limits = corev1.ResourceList{corev1.ResourceName(r.GPU.Type): *resource.NewQuantity(int64(n), resource.DecimalSI)}
	}
	return rr
}

// overrideSet reports whether `spec.provider.overrides` sets the field at
// path to something other than null.
func overrideSet(s *hub.ModelDeploymentSpec, path ...string) bool {
	v, ok := overrideValue(s, path...)
	return ok && v != nil
}

// overrideValue returns the value of overrides at path and whether the
// key is present (a present null deletes).
func overrideValue(s *hub.ModelDeploymentSpec, path ...string) (any, bool) {
	if s.Provider == nil || len(s.Provider.Overrides) == 0 {
		return nil, false
	}
	var cur any
	if json.Unmarshal(s.Provider.Overrides, &cur) != nil {
		return nil, false
	}
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// LabelWorkspace is the label KAITO puts on every pod of a Workspace
// (kaito.sh/v1beta1 LabelWorkspaceName), whatever the workload.
const LabelWorkspace = "kaito.sh/workspace"

// Backend implements providers.Routable. KAITO creates the preset pods
// itself and labels them `kaito.sh/workspace: <name>`; the llama.cpp
// template is ours and KAITO keeps its labels, so it is selected like every
// other rendered template. Both listen on 5000. KAITO passes no
// `servedName` to either server: a preset serves under KAITO's own name for
// the model (see presetServedName), llama.cpp under the model id.
func (Provider) Backend(req *providers.Request) providers.Backend {
	if req.Engine == hub.EngineLlamaCpp {
		return providers.Backend{PodSelector: providers.ModelPodSelector(req), Port: Port, IgnoresServedName: true}
	}
	selector := map[string]string{LabelWorkspace: req.MD.Name}
	if rel, err := releaseOf(req); err == nil && inferenceSetReason(req, rel) != "" {
		// The InferenceSet's Workspaces have generated names; their pods
		// carry the set's name in KAITO's created-by label.
		selector = map[string]string{LabelCreatedBy: req.MD.Name}
	}
	return providers.Backend{
		PodSelector:       selector,
		Port:              Port,
		ServedName:        presetServedName(req.MD.Spec.Model.ID),
		IgnoresServedName: true,
	}
}

// presetServedName is the `--served-model-name` KAITO gives a vLLM preset:
// a built-in preset name as is, a Hugging Face id as the lower-cased last
// path segment (KAITO 0.9 and later generate the preset from the id that
// way; `Qwen/Qwen3-0.6B` serves as `qwen3-0.6b`).
func presetServedName(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return strings.ToLower(id[i+1:])
	}
	return id
}
