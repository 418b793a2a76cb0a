package dynamo

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/internal/autoscale"
)

// Identity of the rendered object and upstream's constants.
const (
	APIVersion = "nvidia.com/v1alpha1"
	Kind       = "DynamoGraphDeployment"

	// LabelModelID carries the sanitised `spec.model.id`.
	LabelModelID = "airunway.ai/model-id"

	// Service names: upstream uses the Vllm* names for every engine.
	ServiceEpp = "Epp"
	// ScalingAdapterKind is the operator's per-service scaling adapter.
	ScalingAdapterKind   = "DynamoGraphDeploymentScalingAdapter"
	ServiceFrontend      = "Frontend"
	ServiceWorker        = "VllmWorker"
	ServicePrefillWorker = "VllmPrefillWorker"
	ServiceDecodeWorker  = "VllmDecodeWorker"

	imageRegistry = "nvcr.io/nvidia/ai-dynamo/"

	overridesField = "spec.provider.overrides"
)

// runtimeImages are the per-engine runtime repositories; the tag is the
// Dynamo release the capability file declares.
var runtimeImages = map[string]string{
	hub.EngineVLLM:   "vllm-runtime",
	hub.EngineSGLang: "sglang-runtime",
	hub.EngineTRTLLM: "tensorrtllm-runtime",
}

// Provider is the NVIDIA Dynamo provider.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name implements providers.Provider.
func (Provider) Name() string { return hub.ProviderDynamo }

// Detection implements providers.Detector: the CRD of the DynamoGraphDeployment and the operator's Deployment, whose image tag, `--operator-version` argument or chart label says the release.
func (Provider) Detection() providers.Detection {
	return providers.Detection{CRD: "dynamographdeployments.nvidia.com",
		Images: []string{"/ai-dynamo/kubernetes-operator"}, Chart: "dynamo-operator", VersionArg: "--operator-version="}
}

// Check implements providers.Provider with what upstream's compatibility
// rules (providers/dynamo/controller.go validateCompatibility) say beyond
// the engines, modes and GPUs of the capability catalogue, which the render
// engine checks, and the transform errors upstream only finds while
// rendering.
func (Provider) Check(req *providers.Request) diag.List {
	var l diag.List
	md := req.MD
	s := &md.Spec
	if hub.IsMocker(md) && req.Engine != hub.EngineVLLM {
		l.Errorf("spec.engine.type", "Dynamo mocker mode only supports the vllm engine (annotation %s: %s), got %q", hub.AnnotationDynamoTestBackend, hub.MockerBackend, req.Engine)
	}
	if s.Engine != nil {
		for _, err := range providers.CheckArgKeys(s.Engine) {
			l.Errorf("spec.engine.args", "%v", err)
		}
	}
	checkAdapters(req, &l)
	checkMultinodeArgs(md, &l)
	checkNodeCount(md, &l)
	checkMultinodeClaims(req, &l)
	checkParallelism(req, &l)
	autoscale.Check(req, &l)
	if s.Autoscaling() != nil && req.Engine != hub.EngineVLLM {
		l.Errorf("spec.scaling.autoscaling", "is rendered for Dynamo's vllm backend only: the autoscaler reads vLLM's own metrics, which the %q backend does not export", req.Engine)
	}
	return l
}

// Render implements providers.Provider: the DynamoGraphDeployment, then the
// managed PVCs and the model-download Job that upstream's controller
// creates imperatively before it (see storage.go).
func (Provider) Render(req *providers.Request) ([]providers.Object, diag.List) {
	var l diag.List
	md := req.MD
	var raw []byte
	if md.Spec.Provider != nil {
		raw = md.Spec.Provider.Overrides
	}
	typed, rest := splitOverrides(raw, &l)
	if typed.Intent.intent(&l) {
		if hub.IsMocker(md) {
			// As upstream: the mocker is always a graph of its own.
			l.Warnf(diag.IgnoredField, overridesField+"."+overrideDeploymentMode, "is ignored for the Dynamo mocker (annotation %s), which is rendered as a DynamoGraphDeployment", hub.AnnotationDynamoTestBackend)
		} else {
			return renderIntent(req, typed, rest, l)
		}
	}
	r := newRenderer(req, typed, &l)
	typed.warnInapplicable(r.gateway, &l)
	providers.WarnLiteralEnv(md, &l)

	dgd := r.graphDeployment()
	obj, err := providers.FromTyped(dgd)
	if err != nil {
		l.Errorf("", "internal error rendering the %s: %v", Kind, err)
		return nil, l
	}
	if err := providers.ApplyOverrides(obj, rest); err != nil {
		l.Errorf(overridesField, "%v", err)
	}
	out := []providers.Object{obj}
	for _, c := range r.claims {
		o, err := providers.ClaimTemplate(req, c.owner, c.devices, c.count)
		if err != nil {
			l.Errorf("", "internal error rendering the ResourceClaimTemplate: %v", err)
			return nil, l
		}
		out = append(out, o)
	}
	for _, m := range r.dynamoModels() {
		o, err := providers.FromTyped(m)
		if err != nil {
			l.Errorf("", "internal error rendering the %s: %v", ModelKind, err)
			return nil, l
		}
		out = append(out, o)
	}
	// The autoscaler scales the service's scaling adapter, which the
	// operator creates and owns: it is not rendered.
	if a := autoscale.Render(req, autoscale.Target{APIVersion: APIVersion, Kind: ScalingAdapterKind,
		Name: md.Name + "-" + strings.ToLower(r.autoscaledService()), ModelName: autoscale.ServedName(md)}); a != nil {
		out = append(out, a)
	}
	storage, err := storageObjects(md, req.Engine, req.Placement.ForCPU())
	if err != nil {
		l.Errorf("", "internal error rendering storage objects: %v", err)
		return nil, l
	}
	return append(out, storage...), l
}

// renderIntent renders intent mode: the DynamoGraphDeploymentRequest and
// the model's storage objects (its cache PVC and download Job), which the
// request's modelCache names. Overrides other than the intent keys are the
// graph's, and have no place in a request.
func renderIntent(req *providers.Request, typed typedOverrides, rest json.RawMessage, l diag.List) ([]providers.Object, diag.List) {
	checkIntent(req, typed, &l)
	if len(rest) > 0 {
		l.Errorf(overridesField, "sets fields of a DynamoGraphDeployment, which intent mode does not render: put fields of the request under `%s`, or use `%s: %s`", overrideSpec, overrideDeploymentMode, modeManual)
	}
	if l.HasErrors() {
		return nil, l
	}
	out := []providers.Object{graphRequest(req, typed.Intent)}
	storage, err := storageObjects(req.MD, req.Engine, req.Placement.ForCPU())
	if err != nil {
		l.Errorf("", "internal error rendering storage objects: %v", err)
		return nil, l
	}
	return append(out, storage...), l
}

// Workload implements providers.WorkloadChooser: the request in intent
// mode, "" for the graph.
func (Provider) Workload(req *providers.Request) string {
	var l diag.List
	var raw json.RawMessage
	if req.MD.Spec.Provider != nil {
		raw = req.MD.Spec.Provider.Overrides
	}
	if t, _ := splitOverrides(raw, &l); !hub.IsMocker(req.MD) && t.Intent.intent(&l) {
		return RequestKind
	}
	return ""
}

// renderer holds the decisions shared by every service of the graph.
type renderer struct {
	req     *providers.Request
	md      *hub.ModelDeployment
	engine  string
	version string
	mocker  bool
	// gateway selects the Epp topology (Gateway API Inference Extension)
	// instead of the standalone Frontend.
	gateway bool
	// adaptersDigest is the workers' AnnotationAdapters, computed once.
	adaptersDigest string
	overrides      typedOverrides
	image          string
	// claims are the workers whose pods claim their GPUs on a DRA pool.
	claims []workerClaim
	l      *diag.List
}

func newRenderer(req *providers.Request, typed typedOverrides, l *diag.List) *renderer {
	md := req.MD
	r := &renderer{req: req, md: md, engine: req.Engine, version: dynamoVersion(req.Provider), mocker: hub.IsMocker(md), overrides: typed, l: l}
	if !r.mocker && md.Annotations[hub.AnnotationDynamoTestBackend] != "" {
		l.Warnf(diag.IgnoredField, "metadata.annotations."+hub.AnnotationDynamoTestBackend, "is ignored: the mocker test backend needs the value %q and `spec.provider.name: dynamo`", hub.MockerBackend)
	}
	r.adaptersDigest = adaptersDigest(md)
	r.gateway = r.chooseGateway()
	r.image = r.workerImage()
	r.warnIgnored()
	return r
}

// chooseGateway renders the Epp topology only where the capability file
// declares the Gateway API Inference Extension; upstream chooses it unless
// `spec.gateway.enabled` is false, leaving clusters without GAIE with
// neither a Frontend nor a working route.
func (r *renderer) chooseGateway() bool {
	if g := r.md.Spec.Gateway; r.req.Caps.Gateway == nil && !r.mocker && g != nil && g.Enabled != nil && *g.Enabled {
		r.l.Warnf(diag.IgnoredField, "spec.gateway.enabled", "is true, but the capability file declares no Gateway API Inference Extension (`spec.gateway`); rendering the standalone Frontend instead of the Epp")
	}
	// The engine's decision, which the gateway objects follow too, so the
	// Epp topology and the route to its pool come together. Upstream's
	// mocker always runs behind a standalone Frontend.
	return r.req.GatewayEnabled
}

// dynamoVersion is the declared operator release, which tags the Dynamo
// images: written out in full, as the images are tagged ("1.1" is 1.1.0).
func dynamoVersion(p *hub.ResolvedProvider) string {
	if v, err := hub.ParseRelease(p.Version); err == nil {
		return v.String()
	}
	return p.Version
}

func (r *renderer) dynamoImage(repo string) string {
	return imageRegistry + repo + ":" + r.version
}

// workerImage: the mocker's planner image beats everything (the mocker
// module lives only there); then engine.image, the legacy spec.image, the
// capability file's pin for the engine, and the engine's runtime image at
// the declared Dynamo release.
func (r *renderer) workerImage() string {
	if r.mocker {
		return r.dynamoImage("dynamo-planner")
	}
	if img := r.md.Spec.EngineImage(); img != "" {
		return img
	}
	return r.defaultImage(r.engine)
}

// defaultImage is an engine's default image: the capability file's pin,
// else its runtime image (vllm-runtime for an unknown engine, as upstream).
func (r *renderer) defaultImage(engine string) string {
	if p := r.req.Provider; p != nil && p.Images[engine] != "" {
		return p.Images[engine]
	}
	repo, ok := runtimeImages[engine]
	if !ok {
		repo = runtimeImages[hub.EngineVLLM]
	}
	return r.dynamoImage(repo)
}

// labels are the labels of the graph and its DynamoModels: the common ones
// plus the sanitised model id.
func (r *renderer) labels() map[string]string {
	labels := providers.BaseLabels(r.md, r.engine)
	if id := SanitizeLabelValue(r.md.Spec.Model.ID); id != "" {
		labels[LabelModelID] = id
	}
	return labels
}

func (r *renderer) graphDeployment() *graphDeployment {
	md := r.md
	return &graphDeployment{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata: metav1.ObjectMeta{
			Name:        md.Name,
			Namespace:   md.Namespace,
			Labels:      r.labels(),
			Annotations: providers.GeneratedAnnotations(md, nil),
		},
		Spec: graphSpec{
			BackendFramework: r.engine,
			PVCs:             pvcRefs(md),
			Services:         r.services(),
		},
	}
}

func pvcRefs(md *hub.ModelDeployment) []pvcRef {
	if md.Spec.Model.Storage == nil {
		return nil
	}
	var refs []pvcRef
	for _, v := range md.Spec.Model.Storage.Volumes {
		refs = append(refs, pvcRef{Name: v.ResolvedClaimName(md.Name), Create: false})
	}
	return refs
}

// SanitizeLabelValue turns a model id into a label value as upstream does:
// truncated to 63 bytes, characters outside [A-Za-z0-9-_.] replaced by '-',
// leading and trailing '-', '_' and '.' trimmed.
func SanitizeLabelValue(value string) string {
	if len(value) > 63 {
		value = value[:63]
	}
	value = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, value)
	return strings.Trim(value, "-_.")
}

// warnIgnored reports what the DynamoGraphDeployment cannot express.
func (r *renderer) warnIgnored() {
	md := r.md
	s := &md.Spec
	if s.Replicas() == 0 && s.Mode() == hub.ModeAggregated {
		r.l.Warnf(diag.ScaleToZero, "spec.scaling.replicas", "is 0: the %s service is scaled to zero and serves nothing (upstream AI Runway would run 1 replica)", ServiceWorker)
	}
	if r.mocker && s.EngineImage() != "" {
		field := "spec.image"
		if s.Engine != nil && s.Engine.Image != "" {
			field = "spec.engine.image"
		}
		r.l.Warnf(diag.IgnoredField, field, "is ignored in Dynamo mocker mode: the mocker runs in %s", r.image)
	}
	if secret := r.hfSecret(); secret != "" {
		for i, e := range s.Env {
			if e.Name == providers.HFTokenEnv {
				r.l.Warnf(diag.IgnoredField, fmt.Sprintf("spec.env[%d]", i), "is dropped: HF_TOKEN comes from Secret %q (`spec.secrets.huggingFaceToken`)", secret)
			}
		}
	}
	if e := s.Engine; e != nil {
		if r.mocker && (len(e.Args) > 0 || len(e.ExtraArgs) > 0) {
			r.l.Warnf(diag.IgnoredField, "spec.engine", "args and extraArgs are ignored in Dynamo mocker mode: the mocker takes its own fixed arguments")
		}
		if _, ok := e.Args["connector"]; ok && r.engine == hub.EngineVLLM && !r.mocker {
			r.l.Warnf(diag.IgnoredField, "spec.engine.args.connector", "is dropped, as upstream does: vLLM rejects --connector (disaggregated workers get --kv-transfer-config with the NIXL connector)")
		}
		if r.engine == hub.EngineTRTLLM {
			if hub.Bool(e.TrustRemoteCode) {
				r.l.Warnf(diag.IgnoredField, "spec.engine.trustRemoteCode", "is ignored by the trtllm engine on Dynamo")
			}
			if hub.Bool(e.EnforceEager) {
				r.l.Warnf(diag.IgnoredField, "spec.engine.enforceEager", "is ignored by the trtllm engine on Dynamo")
			}
		}
	}
	if s.Model.Storage != nil {
		for i, v := range s.Model.Storage.Volumes {
			if hub.Bool(v.ReadOnly) {
				r.l.Warnf(diag.IgnoredField, fmt.Sprintf("spec.model.storage.volumes[%d].readOnly", i), "is not enforced: Dynamo volume mounts have no readOnly field, so PVC %q is mounted read-write (upstream's readOnly key is dropped by the API server)", v.ResolvedClaimName(md.Name))
			}
		}
	}
}
