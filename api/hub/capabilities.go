package hub

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterCapabilities is the per-cluster capability file: the facts about a
// cluster that a pure renderer cannot ask the cluster for. It replaces
// upstream's InferenceProviderConfig listing, CRD discovery and health
// probes. kustomize and kpt read it as a local-config object and never
// apply it; applied to the cluster (deploy/base has its CRD), it is what
// the status reporter holds the live cluster against.
type ClusterCapabilities struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CapabilitiesSpec `json:"spec"`
}

// CapabilitiesSpec lists installed providers, the gateway and node pools.
type CapabilitiesSpec struct {
	// Providers installed in the cluster; a provider that is not listed is
	// not installed.
	Providers []ProviderCapability `json:"providers,omitempty"`
	// Gateway describes the Gateway API Inference Extension; nil means the
	// cluster has none.
	Gateway *GatewayCapability `json:"gateway,omitempty"`
	// NodePools are where workloads may land.
	NodePools []NodePool `json:"nodePools,omitempty"`
	// Autoscaling says what can autoscale a model server in this cluster:
	// KEDA, or a metrics API a HorizontalPodAutoscaler reads the engine's
	// metrics from. Nil means nothing can, and a model that asks for
	// `spec.scaling.autoscaling` is refused.
	Autoscaling *AutoscalingCapability `json:"autoscaling,omitempty"`
	// RequireVersions makes every operator provider's `version` mandatory;
	// without it an unset version renders for the newest supported release,
	// with a warning.
	RequireVersions bool `json:"requireVersions,omitempty"`
	// Warnings silences warning codes, or makes warnings fatal, for every
	// run with this capability file (kustomize, kpt, Argo CD, the CLI).
	Warnings *WarningPolicy `json:"warnings,omitempty"`
	// Fleet names every cluster of the fleet this cluster belongs to. With
	// it, a render for this cluster fails on a model assigned to a cluster
	// the fleet does not have (a typo would otherwise run nowhere), and on
	// a model assigned to none, unless UnassignedModels is Render.
	Fleet *FleetCapability `json:"fleet,omitempty"`
	// ModelDownload is how fast a model server fetches its weights in this
	// cluster; nil: DefaultDownloadMiBPerSecond. The renderer sizes the
	// model servers' startup probes from it.
	ModelDownload *ModelDownloadCapability `json:"modelDownload,omitempty"`
}

// ModelDownloadCapability is the download rate a model server sees.
type ModelDownloadCapability struct {
	// MiBPerSecond is the sustained rate, in MiB/s, at which one model
	// server downloads weights from their source (the Hugging Face Hub, a
	// mirror), 1 to 100000.
	MiBPerSecond int32 `json:"mibPerSecond"`
}

// DefaultDownloadMiBPerSecond is the download rate assumed when the
// capability file states none: 100 MiB/s, about 840 Mbit/s, what one
// client sustains from the Hugging Face Hub on a well-connected cloud node;
// state yours when it is slower.
const DefaultDownloadMiBPerSecond = 100

// FleetCapability is what every cluster of a fleet knows of the others.
type FleetCapability struct {
	// Clusters are the names of the fleet's clusters (each capability
	// file's `metadata.name`, the annotation airunway.ai/cluster's
	// values), this one included.
	Clusters []string `json:"clusters"`
	// UnassignedModels is what a render does with a model assigned to no
	// cluster: Refuse (the default: an error naming it, so that a model
	// nobody assigned runs nowhere by surprise rather than everywhere) or
	// Render (every cluster whose labels its selector matches runs it).
	UnassignedModels string `json:"unassignedModels,omitempty"`
}

// The values of FleetCapability.UnassignedModels.
const (
	UnassignedRefuse = "Refuse"
	UnassignedRender = "Render"
)

// WarningPolicy is what a cluster's team decided about warnings: codes it
// lives with, and whether the rest fail the run.
type WarningPolicy struct {
	Ignore   []string `json:"ignore,omitempty"`
	AsErrors bool     `json:"asErrors,omitempty"`
}

// ProviderCapability describes one installed provider.
type ProviderCapability struct {
	Name string `json:"name"`
	// Version is the operator release; it drives version-specific
	// rendering. Unset, the newest release the renderer supports is assumed
	// (with a warning), unless the file sets RequireVersions.
	Version string `json:"version,omitempty"`
	// Ready defaults to true; false means installed but not selectable.
	Ready *bool `json:"ready,omitempty"`
	// Engines overrides the provider's built-in engine capabilities.
	Engines []EngineCapability `json:"engines,omitempty"`
	// SelectionRules overrides the provider's built-in selection rules.
	// A non-nil empty list means "no rules".
	SelectionRules []SelectionRule `json:"selectionRules,omitempty"`
	// Images pins the default image per engine, e.g. {vllm: "repo:tag"}.
	Images map[string]string `json:"images,omitempty"`
	// NodeAutoProvisioning declares that the operator provisions GPU nodes
	// itself (KAITO's gpu-provisioner or Karpenter); only KAITO supports it.
	// It replaces upstream's AIRUNWAY_KAITO_* environment variables.
	NodeAutoProvisioning *NodeAutoProvisioning `json:"nodeAutoProvisioning,omitempty"`
	// Workload is the kind models are rendered as where the provider
	// offers a choice; only KAITO does: Workspace (upstream's, the
	// default) or InferenceSet (KAITO 0.11 and later: a set of Workspaces
	// with a scale subresource). Unset, KAITO renders an InferenceSet only
	// for a model that asks for what a Workspace cannot do (autoscaling,
	// zero replicas) on a release that serves it.
	Workload string `json:"workload,omitempty"`
}

// The values of ProviderCapability.Workload.
const (
	WorkloadWorkspace    = "Workspace"
	WorkloadInferenceSet = "InferenceSet"
)

// KAITOInferenceSetSince is the first KAITO release that serves the
// InferenceSet at kaito.sh/v1beta1 with its controller on by default (beta;
// alpha from 0.8.0 behind a feature gate).
var KAITOInferenceSetSince = MustParseRelease("0.11.0")

// NodeAutoProvisioning names the instance types auto-provisioned nodes use.
type NodeAutoProvisioning struct {
	GPUInstanceType string `json:"gpuInstanceType,omitempty"`
	CPUInstanceType string `json:"cpuInstanceType,omitempty"`
}

// EngineCapability says which engine a provider serves and how.
type EngineCapability struct {
	Name         string   `json:"name"`
	ServingModes []string `json:"servingModes,omitempty"`
	// APIFormats the engine answers through this provider: openai-chat,
	// openai-responses, anthropic-messages, within what the engine can
	// serve at all; none means openai-chat alone, as upstream. The
	// gateway routes each format only to models whose engine declares it.
	APIFormats []string             `json:"apiFormats,omitempty"`
	GPUSupport bool                 `json:"gpuSupport,omitempty"`
	CPUSupport bool                 `json:"cpuSupport,omitempty"`
	Gateway    *GatewayCapabilities `json:"gateway,omitempty"`
}

// GatewayCapabilities is the provider's gateway behaviour for an engine.
type GatewayCapabilities struct {
	ManagesInferencePool     bool            `json:"managesInferencePool,omitempty"`
	InferencePoolNamePattern string          `json:"inferencePoolNamePattern,omitempty"`
	InferencePoolNamespace   string          `json:"inferencePoolNamespace,omitempty"`
	EndpointPicker           *EndpointPicker `json:"endpointPicker,omitempty"`
	IgnoresServedName        bool            `json:"ignoresServedName,omitempty"`
}

// EndpointPicker overrides the endpoint-picker image and plugin config.
type EndpointPicker struct {
	Image      string `json:"image,omitempty"`
	ConfigData string `json:"configData,omitempty"`
}

// SelectionRule is a CEL condition over `spec`; a true condition gives the
// provider its priority.
type SelectionRule struct {
	Condition string `json:"condition"`
	Priority  int32  `json:"priority,omitempty"`
}

// GatewayCapability describes the cluster's Gateway API Inference Extension.
type GatewayCapability struct {
	InferencePoolVersion string `json:"inferencePoolVersion,omitempty"`
	// InferenceExtensionVersion is the Gateway API Inference Extension
	// release whose CRDs the cluster runs (their bundle-version, v1.5.0):
	// it decides which object names each LoRA adapter to the endpoint
	// picker (an InferenceModel before v1.0, an InferenceObjective from
	// v1.0 to v1.5, none from v1.6). Unset, none is rendered.
	InferenceExtensionVersion string      `json:"inferenceExtensionVersion,omitempty"`
	GatewayAPIVersion         string      `json:"gatewayAPIVersion,omitempty"`
	Channel                   string      `json:"channel,omitempty"`
	ParentRef                 *GatewayRef `json:"parentRef,omitempty"`
	// EndpointPicker is the cluster's default picker image and plugin
	// configuration; a provider's own (llm-d's scheduler) wins over it.
	EndpointPicker *EndpointPicker `json:"endpointPicker,omitempty"`
}

// AutoscalingCapability is the cluster's autoscaling: with KEDA, models are
// scaled by KEDA ScaledObjects whose prometheus trigger queries Prometheus;
// without, by HorizontalPodAutoscalers reading Pods metrics from
// MetricsAPI (a Prometheus adapter).
type AutoscalingCapability struct {
	// KEDA, when set, says KEDA is installed; it is the only way to scale a
	// model to zero.
	KEDA *KEDACapability `json:"keda,omitempty"`
	// Prometheus is where KEDA reads the engine's metrics.
	Prometheus *PrometheusServer `json:"prometheus,omitempty"`
	// MetricsAPI is the API serving the engine's metrics to
	// HorizontalPodAutoscalers when KEDA is absent: custom.metrics.k8s.io
	// (Pods metrics) or external.metrics.k8s.io (External metrics, which
	// an HPA may scale to zero on).
	MetricsAPI string `json:"metricsAPI,omitempty"`
	// HPAScaleToZero says the cluster's HorizontalPodAutoscalers may keep
	// zero replicas (feature HPAScaleToZero: beta and on by default from
	// Kubernetes 1.37, alpha and off before): a model autoscaled with
	// `minReplicas: 0` gets an HPA on External metrics then. Only with
	// MetricsAPI external.metrics.k8s.io, the kind of metric the API server
	// allows zero replicas on.
	HPAScaleToZero bool `json:"hpaScaleToZero,omitempty"`
}

// KEDACapability is an installed KEDA.
type KEDACapability struct {
	// Version is KEDA's release, for the record (`discover` reads it).
	Version string `json:"version,omitempty"`
}

// PrometheusServer is a Prometheus HTTP API.
type PrometheusServer struct {
	// ServerAddress is its URL, as KEDA's prometheus trigger takes it.
	ServerAddress string `json:"serverAddress"`
}

// MetricsAPICustom is the metrics API HorizontalPodAutoscalers read Pods
// metrics from.
const MetricsAPICustom = "custom.metrics.k8s.io"

// MetricsAPIExternal is the metrics API HorizontalPodAutoscalers read
// External metrics from (a Prometheus adapter's external rules).
const MetricsAPIExternal = "external.metrics.k8s.io"

// GatewayRef names the parent Gateway of generated HTTPRoutes.
type GatewayRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// NodePool is a group of identical nodes a workload can be placed on.
type NodePool struct {
	Name string `json:"name"`
	// Selector holds the node labels that pick this pool, e.g. NVIDIA GPU
	// Feature Discovery's nvidia.com/gpu.product.
	Selector map[string]string `json:"selector,omitempty"`
	// Taints of the pool's nodes; placed workloads tolerate them.
	Taints []Taint `json:"taints,omitempty"`
	// GPU is nil for a pool without GPUs.
	GPU *PoolGPU `json:"gpu,omitempty"`
	// Capacity optionally bounds what one pod may request on a node.
	Capacity *NodeCapacity `json:"capacity,omitempty"`
	// Nodes optionally says how many nodes the pool has: `airunway-render
	// plan` holds the models' demand against it, and the generated Nodes of
	// `capabilities nodes` (the cluster twin's) follow it.
	Nodes *PoolNodes `json:"nodes,omitempty"`
	// PricePerNodeHour optionally says what one node costs per hour, for
	// the monthly cost `airunway-render plan` reports.
	PricePerNodeHour *Price `json:"pricePerNodeHour,omitempty"`
}

// PoolNodes is the size of a node pool: a fixed Count, or Min and Max for
// a pool a cluster autoscaler (or Karpenter) sizes.
type PoolNodes struct {
	Count *int32 `json:"count,omitempty"`
	Min   *int32 `json:"min,omitempty"`
	Max   *int32 `json:"max,omitempty"`
}

// Autoscaled reports whether the pool is sized between Min and Max.
func (n *PoolNodes) Autoscaled() bool { return n != nil && n.Count == nil && n.Max != nil }

// Range returns the fewest and the most nodes the pool has (Count for
// both when it is fixed; Min defaults to 0); ok is false when the file
// does not say.
func (n *PoolNodes) Range() (lo, hi int32, ok bool) {
	switch {
	case n == nil:
		return 0, 0, false
	case n.Count != nil:
		return *n.Count, *n.Count, true
	case n.Max != nil:
		if n.Min != nil {
			lo = *n.Min
		}
		return lo, *n.Max, true
	}
	return 0, 0, false
}

// Price is an amount of money in an ISO 4217 currency.
type Price struct {
	// Amount is a decimal number, e.g. 98.32.
	Amount float64 `json:"amount"`
	// Currency is an ISO 4217 code, e.g. USD or EUR.
	Currency string `json:"currency"`
}

// NodeCapacity is the allocatable CPU and memory of one node of a pool.
type NodeCapacity struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// Taint is a node taint the pool's workloads must tolerate.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// PoolGPU describes the GPUs of every node in a pool.
type PoolGPU struct {
	// ResourceName is the extended resource, default nvidia.com/gpu.
	ResourceName string `json:"resourceName,omitempty"`
	Product      string `json:"product,omitempty"`
	MemoryMiB    int64  `json:"memoryMiB,omitempty"`
	// PerNode is the number of GPUs per node; 0 means unknown (any request
	// is assumed to fit, and such a pool is chosen last).
	PerNode int32 `json:"perNode,omitempty"`
	// DeviceClassName makes the pool's GPUs Dynamic Resource Allocation
	// devices of this DeviceClass (NVIDIA's DRA driver: gpu.nvidia.com):
	// pods claim them through a ResourceClaimTemplate instead of
	// requesting ResourceName, which then only says which
	// `spec.resources.gpu.type` the pool serves.
	DeviceClassName string `json:"deviceClassName,omitempty"`
	// Selectors are CEL expressions every claimed device must satisfy
	// (`device.attributes["gpu.nvidia.com"].productName == "…"`); only
	// with DeviceClassName.
	Selectors []string `json:"selectors,omitempty"`
	// Attributes are the attributes each device of the pool publishes in
	// its driver's ResourceSlices (productName, architecture,
	// cudaComputeCapability…), values written as text; only with
	// DeviceClassName. The renderer holds Selectors to them, and the
	// cluster twin publishes them.
	Attributes map[string]string `json:"attributes,omitempty"`
	// ExtendedResource says the DeviceClass serves ResourceName as an
	// extended resource (its `spec.extendedResourceName`; Kubernetes 1.36
	// and later, GA in 1.37): pods request ResourceName as on a device
	// plugin's nodes, and the scheduler allocates them devices of the
	// class, which the nodes do not list as allocatable. Only with
	// DeviceClassName, and without Selectors (that path takes any device
	// of the class).
	ExtendedResource bool `json:"extendedResource,omitempty"`
}

// ClaimsDevices reports whether the pool's pods claim their GPUs through
// Dynamic Resource Allocation (ResourceClaimTemplates).
func (p *NodePool) ClaimsDevices() bool { return p.HasDevices() && !p.GPU.ExtendedResource }

// HasDevices reports whether the pool's GPUs are DRA devices in
// ResourceSlices, claimed or served as an extended resource.
func (p *NodePool) HasDevices() bool { return p.GPU != nil && p.GPU.DeviceClassName != "" }

// GPUResource returns the pool's GPU resource name, "" for a CPU pool.
func (p *NodePool) GPUResource() string {
	if p.GPU == nil {
		return ""
	}
	if p.GPU.ResourceName == "" {
		return DefaultGPUResource
	}
	return p.GPU.ResourceName
}

// IsReady reports the provider's readiness, true when unset.
func (p *ProviderCapability) IsReady() bool { return p.Ready == nil || *p.Ready }
