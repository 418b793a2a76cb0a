package v1alpha1

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

// Version and apiVersion of this served version.
const (
	Version    = "v1alpha1"
	APIVersion = hub.Group + "/" + Version
)

// ModelDeployment is a ModelDeployment as airunway.ai/v1alpha1 serves it.
type ModelDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ModelDeploymentSpec `json:"spec"`
	// Status is accepted (objects exported from a cluster carry it) and
	// ignored: the renderer never reads status.
	Status json.RawMessage `json:"status,omitempty"`
}

// ClusterCapabilities is the capability file as airunway.ai/v1alpha1
// serves it. Its status is accepted and ignored: a file exported from a
// cluster carries the ClusterCapabilitiesStatus the status reporter wrote.
type ClusterCapabilities struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CapabilitiesSpec `json:"spec"`
	Status            json.RawMessage  `json:"status,omitempty"`
}

// ModelCatalog is a model catalog as airunway.ai/v1alpha1 serves it: local
// configuration only, never applied, so it has no status.
type ModelCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ModelCatalogSpec `json:"spec"`
}

// ModelDeploymentSpec is upstream's v1alpha1 spec, field for field. It
// lacks the `adapters` and `placement` of v1alpha2, which conversion
// carries in the AnnotationV1alpha2Fields annotation (a v1alpha1 author
// writes a cluster selector as the annotation
// hub.AnnotationClusterSelector instead).
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
}

// ScalingSpec sizes the deployment; it lacks v1alpha2's `autoscaling`.
type ScalingSpec struct {
	Replicas *int32                `json:"replicas,omitempty"`
	Prefill  *ComponentScalingSpec `json:"prefill,omitempty"`
	Decode   *ComponentScalingSpec `json:"decode,omitempty"`
}

// GatewaySpec configures Gateway API Inference Extension routing; it lacks
// v1alpha2's `parentRef`.
type GatewaySpec struct {
	Enabled      *bool  `json:"enabled,omitempty"`
	ModelName    string `json:"modelName,omitempty"`
	HTTPRouteRef string `json:"httpRouteRef,omitempty"`
}

// The other spec types of v1alpha1 are the hub's: no served version
// changes them. A type a later version changes gets its own declaration
// here, as the three above did for v1alpha2.
type (
	ModelSpec            = hub.ModelSpec
	StorageSpec          = hub.StorageSpec
	StorageVolume        = hub.StorageVolume
	ProviderSpec         = hub.ProviderSpec
	EngineSpec           = hub.EngineSpec
	ServingSpec          = hub.ServingSpec
	ComponentScalingSpec = hub.ComponentScalingSpec
	GPUSpec              = hub.GPUSpec
	ResourceSpec         = hub.ResourceSpec
	PodTemplateSpec      = hub.PodTemplateSpec
	PodTemplateMetadata  = hub.PodTemplateMetadata
	SecretsSpec          = hub.SecretsSpec

	CapabilitiesSpec     = hub.CapabilitiesSpec
	ProviderCapability   = hub.ProviderCapability
	NodeAutoProvisioning = hub.NodeAutoProvisioning
	EngineCapability     = hub.EngineCapability
	GatewayCapabilities  = hub.GatewayCapabilities
	EndpointPicker       = hub.EndpointPicker
	SelectionRule        = hub.SelectionRule
	GatewayCapability    = hub.GatewayCapability
	GatewayRef           = hub.GatewayRef
	NodePool             = hub.NodePool
	NodeCapacity         = hub.NodeCapacity
	Taint                = hub.Taint
	PoolGPU              = hub.PoolGPU

	ModelCatalogSpec = hub.ModelCatalogSpec
	CatalogModel     = hub.CatalogModel
)
