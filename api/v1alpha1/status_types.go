package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ModelDeploymentStatus is the part of upstream's status the status
// reporter writes (upstream's controller/api/v1alpha1/
// modeldeployment_types.go), field names as upstream's
// CRD declares them.
type ModelDeploymentStatus struct {
	Phase              string             `json:"phase,omitempty"`
	Message            string             `json:"message,omitempty"`
	Provider           *ProviderStatus    `json:"provider,omitempty"`
	Engine             *EngineStatus      `json:"engine,omitempty"`
	Replicas           *ReplicaStatus     `json:"replicas,omitempty"`
	Endpoint           *EndpointStatus    `json:"endpoint,omitempty"`
	Gateway            *GatewayStatus     `json:"gateway,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
}

// ProviderStatus names the selected provider and its primary object.
type ProviderStatus struct {
	Name           string `json:"name,omitempty"`
	SelectedReason string `json:"selectedReason,omitempty"`
	ResourceName   string `json:"resourceName,omitempty"`
	ResourceKind   string `json:"resourceKind,omitempty"`
}

// EngineStatus names the selected engine.
type EngineStatus struct {
	Type           string `json:"type,omitempty"`
	SelectedReason string `json:"selectedReason,omitempty"`
}

// ReplicaStatus counts the model server's replicas.
type ReplicaStatus struct {
	Desired   int32 `json:"desired"`
	Ready     int32 `json:"ready"`
	Available int32 `json:"available"`
}

// EndpointStatus is the in-cluster Service of the model server.
type EndpointStatus struct {
	Service string `json:"service,omitempty"`
	Port    int32  `json:"port,omitempty"`
}

// GatewayStatus says where the model is reachable through the gateway.
type GatewayStatus struct {
	Endpoint         string `json:"endpoint,omitempty"`
	ModelName        string `json:"modelName,omitempty"`
	GatewayNamespace string `json:"gatewayNamespace,omitempty"`
	// APIFormats are the request formats the route sends to the model
	// (upstream main's field, #317): openai-chat, openai-responses,
	// anthropic-messages.
	APIFormats []string `json:"apiFormats,omitempty"`
}

// ConditionCapabilitiesCurrent is the condition the status reporter writes
// on an applied ClusterCapabilities (and on the ModelDeployments rendered
// for it): whether the live cluster still is what the file says.
const ConditionCapabilitiesCurrent = "CapabilitiesCurrent"

// ClusterCapabilitiesStatus is what the status reporter writes to an
// applied ClusterCapabilities: whether the cluster still is what the file
// says, and each difference it found.
type ClusterCapabilitiesStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions holds CapabilitiesCurrent: True while the live cluster
	// matches the file, False with the differences counted otherwise.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Differences are the declared facts the live cluster contradicts,
	// sorted by field.
	Differences []CapabilityDifference `json:"differences,omitempty"`
}

// CapabilityDifference is one declared fact the live cluster contradicts.
type CapabilityDifference struct {
	// Field is the path of the fact in the file, with list items named by
	// their name, e.g. spec.nodePools[l4].taints.
	Field string `json:"field"`
	// Declared is what the file says, Live what the cluster has; either is
	// empty when there is nothing to show (a pool without nodes).
	Declared string `json:"declared,omitempty"`
	Live     string `json:"live,omitempty"`
	// Message says it in a sentence, naming nodes and objects.
	Message string `json:"message"`
}
