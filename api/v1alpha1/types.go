package v1alpha1

import (
	"encoding/json"

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

// The spec types of v1alpha1 are the hub's: the hub holds every field a
// served version can say, and today v1alpha1 is the only one. A later
// version that differs declares its own types here and in its conversion.
type (
	ModelDeploymentSpec  = hub.ModelDeploymentSpec
	ModelSpec            = hub.ModelSpec
	StorageSpec          = hub.StorageSpec
	StorageVolume        = hub.StorageVolume
	ProviderSpec         = hub.ProviderSpec
	EngineSpec           = hub.EngineSpec
	ServingSpec          = hub.ServingSpec
	ScalingSpec          = hub.ScalingSpec
	ComponentScalingSpec = hub.ComponentScalingSpec
	GPUSpec              = hub.GPUSpec
	ResourceSpec         = hub.ResourceSpec
	PodTemplateSpec      = hub.PodTemplateSpec
	PodTemplateMetadata  = hub.PodTemplateMetadata
	SecretsSpec          = hub.SecretsSpec
	GatewaySpec          = hub.GatewaySpec

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
)
