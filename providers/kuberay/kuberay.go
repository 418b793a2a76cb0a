package kuberay

import (
	"fmt"
	"strings"
	"unicode"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// Upstream constants of the KubeRay provider.
const (
	APIVersion   = "ray.io/v1"
	Kind         = "RayService"
	DefaultImage = "rayproject/ray-llm:2.55.0-py311-cu128"

	HeadContainer   = "ray-head"
	WorkerContainer = "ray-worker"
	AggregatedGroup = "gpu-workers"
	PrefillGroup    = "prefill-workers"
	DecodeGroup     = "decode-workers"

	defaultHeadCPU      = "4"
	defaultHeadMemory   = "16Gi"
	defaultWorkerMemory = "32Gi"

	// ServePort is Ray Serve's HTTP proxy port, on every Ray node (the
	// serve config's default proxy location).
	ServePort = 8000
)

// Name limits KubeRay puts on a RayService (see checkName). From 1.4.0 the
// operator rejects RayService names that are longer than 47 characters or
// not DNS-1035 labels (ValidateRayServiceMetadata).
var nameValidationSince = hub.MustParseRelease("1.4.0")

const (
	maxNameSince14 = 47
	// KubeRay 1.3 names the RayCluster <name>-raycluster-<5 random> and
	// labels every Ray pod `ray.io/cluster` with it; a label value holds
	// at most 63 characters.
	maxName13 = 63 - len("-raycluster-") - 5
	// KubeRay 1.3 cuts Service names longer than 50 characters from the
	// front (utils.CheckName), so `<name>-serve-svc` survives only up to 40.
	maxServeName13 = 50 - len("-serve-svc")
)

// Provider is the KubeRay provider.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name implements providers.Provider.
func (Provider) Name() string { return hub.ProviderKubeRay }

// Detection implements providers.Detector: the CRD of the RayService and the KubeRay operator's Deployment, whose image tag has a leading v.
func (Provider) Detection() providers.Detection {
	return providers.Detection{CRD: "rayservices.ray.io",
		Images: []string{"/kuberay/operator"}, Names: []string{"kuberay-operator"}, Chart: "kuberay-operator"}
}

// Check implements providers.Provider: the name limits of the declared
// KubeRay release, and the engine arguments Ray Serve LLM cannot take as
// engine_kwargs (EngineKwargs). Upstream's engine and GPU rules are the
// capability catalogue's, checked by the render engine.
func (Provider) Check(req *providers.Request) diag.List {
	var l diag.List
	s := &req.MD.Spec
	checkName(req, &l)
	checkEngineKwargs(req.MD, &l)
	checkParallelism(s, &l)
	checkAutoscaling(s, &l)
	if s.Model.ID == "" {
		l.Errorf("spec.model.id", "must be set for the kuberay provider: Ray Serve LLM loads the model from model_loading_config.model_source, a Hugging Face id or a path")
	}
	if len(s.Adapters) > 0 {
		l.Errorf("spec.adapters", "cannot be served by the kuberay provider: Ray Serve LLM loads LoRA adapters only from object storage (`lora_config.dynamic_lora_loading_path`, s3:// or gs://), not from Hugging Face; mirror the adapters there and replace `spec.serveConfigV2` through spec.provider.overrides with a Serve config whose LLMConfig sets `lora_config`, or serve them with a provider that loads them from Hugging Face (docs/providers.md#lora-adapters-specadapters-v1alpha2)")
	}
	return l
}

// checkAutoscaling refuses what Ray Serve's own autoscaling cannot do. A
// RayService has no scale subresource, so neither KEDA nor an HPA can
// scale it; Ray Serve scales a deployment on its ongoing requests per
// replica, and Ray's in-tree autoscaler adds the workers. Nothing in the
// capability file is needed.
func checkAutoscaling(s *hub.ModelDeploymentSpec, l *diag.List) {
	a := s.Autoscaling()
	if a == nil {
		return
	}
	if s.Mode() == hub.ModeDisaggregated {
		l.Errorf("spec.scaling.autoscaling", "is rendered for aggregated serving only on the kuberay provider: Ray Serve's autoscaling sizes the one LLM deployment of the serve config")
	}
	if a.Metric != hub.MetricRunningRequests {
		l.Errorf("spec.scaling.autoscaling.metric", "%q cannot be used on the kuberay provider: Ray Serve autoscales only on the requests each replica serves (`target_ongoing_requests`), so set %q; a RayService has no scale subresource for KEDA or a HorizontalPodAutoscaler to act on %s", a.Metric, hub.MetricRunningRequests, a.Metric)
	}
}

// operatorVersion is the KubeRay release the capability file declares,
// checked against the supported range when the file was resolved.
func operatorVersion(req *providers.Request) (*version.Version, error) {
	v, err := hub.ParseRelease(req.Provider.Version)
	if err != nil {
		return nil, fmt.Errorf("kuberay version: %w", err)
	}
	return v, nil
}

// checkName reports names the declared KubeRay release cannot run, before
// a cluster does: the RayService would be accepted by the API server and
// then fail in the operator.
func checkName(req *providers.Request, l *diag.List) {
	name := req.MD.Name
	v, err := operatorVersion(req)
	if err != nil {
		l.Errorf("", "%v", err)
		return
	}
	checkClaims(req, v, l)
	if v.AtLeast(nameValidationSince) {
		if len(name) > maxNameSince14 {
			l.Errorf("metadata.name", "%q has %d characters: KubeRay %s rejects RayService names longer than %d characters", name, len(name), v, maxNameSince14)
		}
		if msgs := utilvalidation.IsDNS1035Label(name); len(msgs) > 0 {
			l.Errorf("metadata.name", "%q: KubeRay %s rejects RayService names that are not DNS-1035 labels: %s", name, v, strings.Join(msgs, "; "))
		}
		return
	}
	switch {
	case len(name) > maxName13:
		l.Errorf("metadata.name", "%q has %d characters: KubeRay %s labels the Ray pods with `ray.io/cluster: <name>-raycluster-<5 characters>`, which must fit in 63 characters, so the name must have at most %d", name, len(name), v, maxName13)
	case len(name) > maxServeName13 || unicode.IsDigit(rune(name[0])):
		l.Warnf(diag.ServiceName, "metadata.name", "KubeRay %s shortens or renames the Services it derives from %q, so the serve Service will not be %s-serve-svc; a name of at most %d characters that starts with a letter avoids that", v, name, name, maxServeName13)
	}
}

// checkParallelism refuses a parallelism flag that contradicts the GPUs
// of a Serve replica (ReplicaGPUs): the one LLMConfig serves every worker
// group, so in disaggregated mode it must fit each group's pods.
func checkParallelism(s *hub.ModelDeploymentSpec, l *diag.List) {
	pod := ""
	if s.Mode() == hub.ModeDisaggregated {
		pod = "worker"
	}
	providers.CheckParallelism(s.Engine, providers.VLLMParallelFlags, providers.OnePod(ReplicaGPUs(s), pod), l)
}

// Render implements providers.Provider.
func (Provider) Render(req *providers.Request) ([]providers.Object, diag.List) {
	var l diag.List
	md := req.MD
	warnings(md, &l)
	providers.WarnLiteralEnv(md, &l)
	rs, claims := buildRayService(req)
	obj, err := providers.FromTyped(rs)
	if err != nil {
		l.Errorf("", "internal error rendering the RayService: %v", err)
		return nil, l
	}
	// Upstream KubeRay applies no overrides; here they merge into the
	// RayService as for every other provider.
	if md.Spec.Provider != nil {
		if err := providers.ApplyOverrides(obj, md.Spec.Provider.Overrides); err != nil {
			l.Errorf("spec.provider.overrides", "%v", err)
		}
	}
	if err := setNumGPUs(obj, claims); err != nil {
		l.Errorf("spec.provider.overrides", "%v", err)
	}
	templates, err := claimObjects(req, claims)
	if err != nil {
		l.Errorf("", "internal error rendering the ResourceClaimTemplate: %v", err)
		return nil, l
	}
	return append([]providers.Object{obj}, templates...), l
}

// warnings names every field this provider does not honour, and the
// scale-to-zero it renders on purpose.
func warnings(md *hub.ModelDeployment, l *diag.List) {
	s := &md.Spec
	if s.Replicas() == 0 {
		l.Warnf(diag.ScaleToZero, "spec.scaling.replicas", "is 0: the Serve application runs num_replicas: 0 and serves nothing; the Ray head pod keeps running (upstream AI Runway would run 1 replica)")
	}
	if s.Mode() == hub.ModeDisaggregated && s.Scaling != nil {
		l.Warnf(diag.IgnoredField, "spec.serving.mode", "disaggregated: the kuberay provider runs separate prefill-workers and decode-workers groups, but the Serve application does not split prefill from decode (as upstream)")
		for _, c := range []struct {
			field string
			spec  *hub.ComponentScalingSpec
		}{{"spec.scaling.prefill.replicas", s.Scaling.Prefill}, {"spec.scaling.decode.replicas", s.Scaling.Decode}} {
			if c.spec != nil && c.spec.ReplicaCount() == 0 {
				l.Warnf(diag.ScaleToZero, c.field, "is 0: this worker group runs no pods")
			}
		}
	}
	for i, e := range s.Env {
		if e.Name == "MODEL_ID" || e.Name == "VLLM_ENGINE_ARGS" {
			l.Warnf(diag.IgnoredField, fmt.Sprintf("spec.env[%d]", i), "%s reaches the Ray pods but nothing reads it: Ray Serve LLM takes the model from the Serve config's model_loading_config (spec.model.id, spec.model.servedName) and the engine arguments from its engine_kwargs (spec.engine.args, spec.engine.extraArgs); upstream AI Runway's serve config read this variable", e.Name)
		}
	}
	if s.Model.Storage != nil && len(s.Model.Storage.Volumes) > 0 {
		var names []string
		for _, v := range s.Model.Storage.Volumes {
			names = append(names, v.Name)
		}
		l.Warnf(diag.IgnoredField, "spec.model.storage.volumes", "is ignored by the kuberay provider, as upstream: no volume (%s) is mounted into the Ray pods and no PVC is created", strings.Join(names, ", "))
	}
}

// Backend implements providers.Routable: every Ray pod carries the
// model-deployment label and runs a Serve proxy on 8000.
func (Provider) Backend(req *providers.Request) providers.Backend {
	return providers.Backend{PodSelector: providers.ModelPodSelector(req), Port: ServePort}
}
