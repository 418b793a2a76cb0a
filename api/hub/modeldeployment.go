package hub

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Group and kinds of the airunway.ai API; each served version has its own
// package and apiVersion.
const (
	Group                   = "airunway.ai"
	KindModelDeployment     = "ModelDeployment"
	KindClusterCapabilities = "ClusterCapabilities"
	// KindInferenceProviderConfig is upstream's registration of a
	// provider; the renderer passes it through untouched.
	KindInferenceProviderConfig = "InferenceProviderConfig"
	// KindModelCatalog is a model catalog kept in Git: model facts for the
	// memory fit, read by the renderer and never applied to a cluster.
	KindModelCatalog = "ModelCatalog"
)

// Kinds are the kinds of the airunway.ai group; any other kind in the group
// is a typo, and an error, not an object to pass through.
var Kinds = []string{KindClusterCapabilities, KindInferenceProviderConfig, KindModelCatalog, KindModelDeployment}

// Enumerations of the upstream CRD.
const (
	SourceHuggingFace = "huggingface"
	SourceCustom      = "custom"

	EngineVLLM     = "vllm"
	EngineSGLang   = "sglang"
	EngineTRTLLM   = "trtllm"
	EngineLlamaCpp = "llamacpp"

	ModeAggregated    = "aggregated"
	ModeDisaggregated = "disaggregated"

	PurposeModelCache       = "modelCache"
	PurposeCompilationCache = "compilationCache"
	PurposeCustom           = "custom"

	DefaultGPUResource = "nvidia.com/gpu"

	// Upstream's default mount paths and access mode of storage volumes.
	DefaultModelCacheMountPath       = "/model-cache"
	DefaultCompilationCacheMountPath = "/compilation-cache"
	DefaultAccessMode                = "ReadWriteMany"

	// The autoscaling metrics of v1alpha2.
	MetricQueueDepth      = "queueDepth"
	MetricRunningRequests = "runningRequests"
	MetricKVCacheUsage    = "kvCacheUsage"

	// AdapterSourceScheme is the one adapter source scheme upstream's LoRA
	// branch accepts.
	AdapterSourceScheme = "hf://"
)

// AutoscalingMetrics lists the metrics `spec.scaling.autoscaling.metric`
// accepts.
var AutoscalingMetrics = []string{MetricQueueDepth, MetricRunningRequests, MetricKVCacheUsage}

// Engines lists the engine types in upstream's auto-selection preference
// order: vllm > sglang > trtllm > llamacpp.
var Engines = []string{EngineVLLM, EngineSGLang, EngineTRTLLM, EngineLlamaCpp}

// ModelDeployment is the provider-neutral description of one served model,
// converted from whichever served version it was written in. TypeMeta keeps
// that version, so problems name the object as its author wrote it.
type ModelDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ModelDeploymentSpec `json:"spec"`
}

// ModelDeploymentSpec holds every field any served version can say:
// upstream's v1alpha1 spec, field for field, including the legacy `image`
// that v1alpha1 still serves, and the fields v1alpha2 adds (`adapters`,
// `scaling.autoscaling`, `gateway.parentRef`, `placement`).
type ModelDeploymentSpec struct {
	Model        ModelSpec           `json:"model"`
	Provider     *ProviderSpec       `json:"provider,omitempty"`
	Engine       *EngineSpec         `json:"engine,omitempty"`
	Serving      *ServingSpec        `json:"serving,omitempty"`
	Scaling      *ScalingSpec        `json:"scaling,omitempty"`
	Resources    *ResourceSpec       `json:"resources,omitempty"`
	Image        string              `json:"image,omitempty"`
	Env          []corev1.EnvVar     `json:"env,omitempty"`
	PodTemplate  *PodTemplateSpec    `json:"podTemplate,omitempty"`
	Secrets      *SecretsSpec        `json:"secrets,omitempty"`
	Gateway      *GatewaySpec        `json:"gateway,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	// Adapters are LoRA adapters served beside the base model, each under
	// its own model name (v1alpha2).
	Adapters []Adapter `json:"adapters,omitempty"`
	// Placement says which clusters of a fleet may run the model
	// (v1alpha2).
	Placement *PlacementSpec `json:"placement,omitempty"`
}

// Adapter is one LoRA adapter, in the shape of upstream's LoRA branch:
// clients ask for Name as their request's model; Source is where its
// weights are, `hf://<org>/<repo>`.
type Adapter struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// HFRepo returns the Hugging Face repository ID of the adapter's source,
// "org/repo"; validation has checked the scheme.
func (a *Adapter) HFRepo() string { return strings.TrimPrefix(a.Source, AdapterSourceScheme) }

// ModelSpec names the model and where its weights live.
type ModelSpec struct {
	ID         string       `json:"id,omitempty"`
	ServedName string       `json:"servedName,omitempty"`
	Source     string       `json:"source,omitempty"`
	Storage    *StorageSpec `json:"storage,omitempty"`
}

// StorageSpec lists persistent volumes for model data.
type StorageSpec struct {
	Volumes []StorageVolume `json:"volumes,omitempty"`
}

// StorageVolume is one PVC mounted into the model server. A volume with
// Size is "managed": a PVC named ClaimName is created for it.
type StorageVolume struct {
	Name             string              `json:"name"`
	ClaimName        string              `json:"claimName,omitempty"`
	MountPath        string              `json:"mountPath,omitempty"`
	Purpose          string              `json:"purpose,omitempty"`
	ReadOnly         *bool               `json:"readOnly,omitempty"`
	Size             *intstr.IntOrString `json:"size,omitempty"`
	StorageClassName *string             `json:"storageClassName,omitempty"`
	AccessMode       string              `json:"accessMode,omitempty"`
}

// ProviderSpec names a provider explicitly and carries its escape hatch.
type ProviderSpec struct {
	Name string `json:"name,omitempty"`
	// Overrides is free JSON deep-merged into the rendered provider object.
	Overrides json.RawMessage `json:"overrides,omitempty"`
}

// EngineSpec configures the inference engine.
type EngineSpec struct {
	Type                string            `json:"type,omitempty"`
	Image               string            `json:"image,omitempty"`
	ContextLength       *int32            `json:"contextLength,omitempty"`
	TrustRemoteCode     *bool             `json:"trustRemoteCode,omitempty"`
	EnablePrefixCaching *bool             `json:"enablePrefixCaching,omitempty"`
	EnforceEager        *bool             `json:"enforceEager,omitempty"`
	Args                map[string]string `json:"args,omitempty"`
	ExtraArgs           []string          `json:"extraArgs,omitempty"`
}

// ServingSpec selects aggregated or disaggregated (prefill/decode) serving.
type ServingSpec struct {
	Mode string `json:"mode,omitempty"`
}

// ScalingSpec sizes the deployment.
type ScalingSpec struct {
	Replicas *int32                `json:"replicas,omitempty"`
	Prefill  *ComponentScalingSpec `json:"prefill,omitempty"`
	Decode   *ComponentScalingSpec `json:"decode,omitempty"`
	// Autoscaling hands the replica count to an autoscaler (v1alpha2); it
	// scales the model server, or the decode workers when disaggregated.
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`
}

// AutoscalingSpec sizes the model server by its load: between MinReplicas
// and MaxReplicas, keeping Metric per replica near Target, and waiting
// ScaleDownDelaySeconds of lower load before removing a replica.
type AutoscalingSpec struct {
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// Metric is the engine's load signal: queueDepth (requests waiting),
	// runningRequests (requests being served) or kvCacheUsage (percent of
	// the KV cache in use).
	Metric string `json:"metric,omitempty"`
	// Target is the value of Metric per replica the autoscaler keeps to:
	// requests for queueDepth and runningRequests, percent (1–100) for
	// kvCacheUsage.
	Target                *int32 `json:"target,omitempty"`
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`
}

// ComponentScalingSpec sizes the prefill or decode component.
type ComponentScalingSpec struct {
	Replicas *int32   `json:"replicas,omitempty"`
	GPU      *GPUSpec `json:"gpu,omitempty"`
	Memory   string   `json:"memory,omitempty"`
}

// GPUSpec requests GPUs; Type is the extended resource name.
type GPUSpec struct {
	Count *int32 `json:"count,omitempty"`
	Type  string `json:"type,omitempty"`
}

// ResourceSpec requests resources for the aggregated model server.
type ResourceSpec struct {
	GPU    *GPUSpec `json:"gpu,omitempty"`
	Memory string   `json:"memory,omitempty"`
	CPU    string   `json:"cpu,omitempty"`
}

// PodTemplateSpec carries metadata for the pods the provider creates.
type PodTemplateSpec struct {
	Metadata *PodTemplateMetadata `json:"metadata,omitempty"`
}

// PodTemplateMetadata holds extra pod labels and annotations.
type PodTemplateMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SecretsSpec references Secrets; HuggingFaceToken names a Secret whose key
// `HF_TOKEN` holds the token.
type SecretsSpec struct {
	HuggingFaceToken string `json:"huggingFaceToken,omitempty"`
}

// GatewaySpec configures Gateway API Inference Extension routing.
type GatewaySpec struct {
	Enabled      *bool  `json:"enabled,omitempty"`
	ModelName    string `json:"modelName,omitempty"`
	HTTPRouteRef string `json:"httpRouteRef,omitempty"`
	// ParentRef is the model's own Gateway, overriding the capability
	// file's `spec.gateway.parentRef` (v1alpha2).
	ParentRef *GatewayRef `json:"parentRef,omitempty"`
}

// GPUCount returns the aggregated GPU count, 0 when unset.
func (s *ModelDeploymentSpec) GPUCount() int32 {
	if s.Resources == nil {
		return 0
	}
	return s.Resources.GPU.count()
}

func (g *GPUSpec) count() int32 {
	if g == nil || g.Count == nil {
		return 0
	}
	return *g.Count
}

// GPUCount returns the component's GPU count, 0 when unset.
func (c *ComponentScalingSpec) GPUCount() int32 {
	if c == nil {
		return 0
	}
	return c.GPU.count()
}

// Mode returns the serving mode, aggregated when unset.
func (s *ModelDeploymentSpec) Mode() string {
	if s.Serving == nil || s.Serving.Mode == "" {
		return ModeAggregated
	}
	return s.Serving.Mode
}

// EngineType returns the explicitly requested engine, "" when unset.
func (s *ModelDeploymentSpec) EngineType() string {
	if s.Engine == nil {
		return ""
	}
	return s.Engine.Type
}

// ProviderName returns the explicitly requested provider, "" when unset.
func (s *ModelDeploymentSpec) ProviderName() string {
	if s.Provider == nil {
		return ""
	}
	return s.Provider.Name
}

// EngineImage returns the image override: engine.image, else the legacy
// spec.image (the served version's conversion has checked that the two
// agree).
func (s *ModelDeploymentSpec) EngineImage() string {
	if s.Engine != nil && s.Engine.Image != "" {
		return s.Engine.Image
	}
	return s.Image
}

// Replicas returns scaling.replicas, 1 when unset.
func (s *ModelDeploymentSpec) Replicas() int32 {
	if s.Scaling == nil || s.Scaling.Replicas == nil {
		return 1
	}
	return *s.Scaling.Replicas
}

// Autoscaling returns the autoscaling spec, nil when the replica count is
// fixed.
func (s *ModelDeploymentSpec) Autoscaling() *AutoscalingSpec {
	if s.Scaling == nil {
		return nil
	}
	return s.Scaling.Autoscaling
}

// GatewayParentRef returns the model's own Gateway, nil when it uses the
// capability file's.
func (s *ModelDeploymentSpec) GatewayParentRef() *GatewayRef {
	if s.Gateway == nil {
		return nil
	}
	return s.Gateway.ParentRef
}

// ReplicaCount returns a component's replicas, 1 when unset.
func (c *ComponentScalingSpec) ReplicaCount() int32 {
	if c == nil || c.Replicas == nil {
		return 1
	}
	return *c.Replicas
}

// Bool dereferences an optional bool, false when unset.
func Bool(b *bool) bool { return b != nil && *b }

// ResolvedClaimName is the PVC a volume mounts: claimName, else the managed
// name <md>-<volume>.
func (v *StorageVolume) ResolvedClaimName(mdName string) string {
	if v.ClaimName != "" {
		return v.ClaimName
	}
	return mdName + "-" + v.Name
}

// IsManaged reports whether the renderer must create the volume's PVC.
func (v *StorageVolume) IsManaged() bool { return v.Size != nil }

// SizeString returns the size quantity as written, "" when unset.
func (v *StorageVolume) SizeString() string {
	if v.Size == nil {
		return ""
	}
	if v.Size.Type == intstr.Int {
		return v.Size.String()
	}
	return v.Size.StrVal
}
