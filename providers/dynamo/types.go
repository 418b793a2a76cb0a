package dynamo

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The nvidia.com/v1alpha1 DynamoGraphDeployment fields this provider
// renders. The Dynamo operator's Go module is not a dependency, so these
// structs mirror just what is needed; the golden tests validate the result
// against the real CRD schema. Every field is omitempty unless the value
// must be rendered even when zero (replicas 0, create: false).

type graphDeployment struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       graphSpec         `json:"spec"`
}

type graphSpec struct {
	BackendFramework string              `json:"backendFramework"`
	PVCs             []pvcRef            `json:"pvcs,omitempty"`
	Services         map[string]*service `json:"services"`
}

// pvcRef points the graph at an existing PVC: the renderer (managed volumes)
// or the user (pre-existing claims) provides it, never the Dynamo operator.
type pvcRef struct {
	Name   string `json:"name"`
	Create bool   `json:"create"`
}

type service struct {
	ComponentType    string          `json:"componentType"`
	SubComponentType string          `json:"subComponentType,omitempty"`
	Replicas         *int32          `json:"replicas,omitempty"`
	ScalingAdapter   *scalingAdapter `json:"scalingAdapter,omitempty"`
	ModelRef         *modelReference `json:"modelRef,omitempty"`
	Resources        *resources      `json:"resources,omitempty"`
	ExtraPodMetadata *podMetadata    `json:"extraPodMetadata,omitempty"`
	ExtraPodSpec     *extraPodSpec   `json:"extraPodSpec,omitempty"`
	EnvFromSecret    string          `json:"envFromSecret,omitempty"`
	VolumeMounts     []volumeMount   `json:"volumeMounts,omitempty"`
	FrontendSidecar  *sidecar        `json:"frontendSidecar,omitempty"`
	EppConfig        *eppConfig      `json:"eppConfig,omitempty"`
}

// scalingAdapter opts a service into the DynamoGraphDeploymentScalingAdapter
// the operator creates for it (`<graph>-<service, lowercased>`): autoscalers
// scale the adapter through its scale subresource, and the operator copies
// the count into the service, whose `replicas` Git then leaves alone.
type scalingAdapter struct {
	Enabled bool `json:"enabled"`
}

// resources is Dynamo's Resources: `claims` are the main container's
// resource claims, which the operator appends to it (GetResourcesConfig).
type resources struct {
	Requests *resourceItem          `json:"requests,omitempty"`
	Limits   *resourceItem          `json:"limits,omitempty"`
	Claims   []corev1.ResourceClaim `json:"claims,omitempty"`
}

// resourceItem is Dynamo's own resource block: `gpu` is a count that the
// operator turns into the extended resource named by `gpuType`
// (nvidia.com/gpu when unset).
type resourceItem struct {
	CPU     string `json:"cpu,omitempty"`
	Memory  string `json:"memory,omitempty"`
	GPU     string `json:"gpu,omitempty"`
	GPUType string `json:"gpuType,omitempty"`
}

func (r *resourceItem) empty() bool { return r == nil || *r == resourceItem{} }

type podMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type extraPodSpec struct {
	MainContainer  *container                `json:"mainContainer,omitempty"`
	NodeSelector   map[string]string         `json:"nodeSelector,omitempty"`
	ResourceClaims []corev1.PodResourceClaim `json:"resourceClaims,omitempty"`
	Tolerations    []corev1.Toleration       `json:"tolerations,omitempty"`
}

// container is the subset of corev1.Container rendered into mainContainer;
// corev1.Container itself would emit `name: ""`, which the operator owns.
type container struct {
	Image   string          `json:"image,omitempty"`
	Command []string        `json:"command,omitempty"`
	Args    []string        `json:"args,omitempty"`
	Env     []corev1.EnvVar `json:"env,omitempty"`
}

type volumeMount struct {
	Name                  string `json:"name"`
	MountPoint            string `json:"mountPoint,omitempty"`
	UseAsCompilationCache bool   `json:"useAsCompilationCache,omitempty"`
}

type sidecar struct {
	Image         string   `json:"image"`
	Args          []string `json:"args,omitempty"`
	EnvFromSecret string   `json:"envFromSecret,omitempty"`
}

type eppConfig struct {
	Config eppPluginConfig `json:"config"`
}

type eppPluginConfig struct {
	Plugins            []eppPlugin  `json:"plugins"`
	SchedulingProfiles []eppProfile `json:"schedulingProfiles"`
}

type eppPlugin struct {
	Name       string         `json:"name,omitempty"`
	Type       string         `json:"type"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

type eppProfile struct {
	Name    string         `json:"name"`
	Plugins []eppPluginRef `json:"plugins"`
}

type eppPluginRef struct {
	PluginRef string `json:"pluginRef"`
	Weight    int    `json:"weight"`
}

// modelReference names the model a worker serves, for the operator's
// DynamoModel endpoint discovery (adapters.go).
type modelReference struct {
	Name string `json:"name"`
}

// dynamoModel is the nvidia.com/v1alpha1 DynamoModel: one LoRA adapter the
// operator loads into every pod whose modelRef is its baseModelName.
type dynamoModel struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       dynamoModelSpec   `json:"spec"`
}

type dynamoModelSpec struct {
	ModelName     string       `json:"modelName"`
	BaseModelName string       `json:"baseModelName"`
	ModelType     string       `json:"modelType"`
	Source        *modelSource `json:"source"`
}

type modelSource struct {
	URI string `json:"uri"`
}
