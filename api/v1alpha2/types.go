package v1alpha2

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

// Version and apiVersion of this served version.
const (
	Version    = "v1alpha2"
	APIVersion = hub.Group + "/" + Version
)

// ModelDeployment is a ModelDeployment as airunway.ai/v1alpha2 serves it.
type ModelDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ModelDeploymentSpec `json:"spec"`
	// Status is accepted (objects exported from a cluster carry it) and
	// ignored: the renderer never reads status.
	Status json.RawMessage `json:"status,omitempty"`
}

// The spec types of v1alpha2 are the hub's: the hub holds every field a
// served version can say, and v1alpha2 is the version with all of them. A
// later version that drops or changes one declares its own type here, as
// v1alpha1 does for the three types v1alpha2 extended.
type (
	ModelDeploymentSpec  = hub.ModelDeploymentSpec
	ModelSpec            = hub.ModelSpec
	StorageSpec          = hub.StorageSpec
	StorageVolume        = hub.StorageVolume
	ProviderSpec         = hub.ProviderSpec
	EngineSpec           = hub.EngineSpec
	ServingSpec          = hub.ServingSpec
	ScalingSpec          = hub.ScalingSpec
	AutoscalingSpec      = hub.AutoscalingSpec
	ComponentScalingSpec = hub.ComponentScalingSpec
	GPUSpec              = hub.GPUSpec
	ResourceSpec         = hub.ResourceSpec
	PodTemplateSpec      = hub.PodTemplateSpec
	PodTemplateMetadata  = hub.PodTemplateMetadata
	SecretsSpec          = hub.SecretsSpec
	GatewaySpec          = hub.GatewaySpec
	GatewayRef           = hub.GatewayRef
	Adapter              = hub.Adapter
	PlacementSpec        = hub.PlacementSpec
)
