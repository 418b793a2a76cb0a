package kuberay

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// The subset of KubeRay's ray.io/v1 types this provider renders, with the
// same JSON names. KubeRay's Go module is not a dependency; the golden
// tests validate the output against the CRD schemas of each release.
type rayService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              rayServiceSpec `json:"spec"`
}

type rayServiceSpec struct {
	ServeConfigV2    string         `json:"serveConfigV2"`
	RayClusterConfig rayClusterSpec `json:"rayClusterConfig"`
}

type rayClusterSpec struct {
	// EnableInTreeAutoscaling runs Ray's autoscaler beside the head: it
	// sizes the worker groups for the Serve replicas autoscaling asks for.
	EnableInTreeAutoscaling *bool              `json:"enableInTreeAutoscaling,omitempty"`
	AutoscalerOptions       *autoscalerOptions `json:"autoscalerOptions,omitempty"`
	HeadGroupSpec           headGroupSpec      `json:"headGroupSpec"`
	WorkerGroupSpecs        []workerGroupSpec  `json:"workerGroupSpecs"`
}

// autoscalerOptions tunes Ray's autoscaler: how long a worker stays idle
// before it is removed.
type autoscalerOptions struct {
	IdleTimeoutSeconds *int32 `json:"idleTimeoutSeconds,omitempty"`
}

// RayStartParams has no omitempty and is never nil: KubeRay 1.3's schema
// requires it on every group, even when empty.
type headGroupSpec struct {
	RayStartParams map[string]string      `json:"rayStartParams"`
	Template       corev1.PodTemplateSpec `json:"template"`
}

// Replicas is left out of an autoscaled group: Ray's autoscaler sets it
// on the RayCluster, between MinReplicas and MaxReplicas.
type workerGroupSpec struct {
	GroupName      string                 `json:"groupName"`
	Replicas       *int32                 `json:"replicas,omitempty"`
	MinReplicas    int32                  `json:"minReplicas"`
	MaxReplicas    int32                  `json:"maxReplicas"`
	RayStartParams map[string]string      `json:"rayStartParams"`
	Template       corev1.PodTemplateSpec `json:"template"`
}

// ReplicaGPUs is the GPUs one Serve replica runs on: a worker pod's. In
// disaggregated mode the one LLM deployment's replicas may land in either
// worker group, so a replica gets the smaller group's GPUs.
func ReplicaGPUs(s *hub.ModelDeploymentSpec) int32 {
	if s.Mode() != hub.ModeDisaggregated {
		return s.GPUCount()
	}
	var n int32
	if s.Scaling != nil {
		for _, c := range []*hub.ComponentScalingSpec{s.Scaling.Prefill, s.Scaling.Decode} {
			if g := c.GPUCount(); g > 0 && (n == 0 || g < n) {
				n = g
			}
		}
	}
	return n
}

// buildRayService renders the RayService and the worker groups whose pods
// claim their GPUs from a ResourceClaimTemplate (a DRA pool).
func buildRayService(req *providers.Request) (*rayService, []groupClaim) {
	md := req.MD
	kwargs, _ := EngineKwargs(md) // Check has refused every problem
	serve := ServeConfig(md, kwargs)
	var claims []groupClaim
	cluster := rayClusterSpec{HeadGroupSpec: headGroup(req), WorkerGroupSpecs: workerGroups(req, &claims)}
	if a := md.Spec.Autoscaling(); a != nil {
		enabled := true
		cluster.EnableInTreeAutoscaling = &enabled
		cluster.AutoscalerOptions = &autoscalerOptions{IdleTimeoutSeconds: a.ScaleDownDelaySeconds}
	}
	// The labels the renderer owns win over podTemplate labels, so the
	// status reporter and re-rendering always find the object.
	return &rayService{
		TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        md.Name,
			Namespace:   md.Namespace,
			Labels:      providers.Merge(providers.PodTemplateLabels(md), providers.BaseLabels(md, req.Engine)),
			Annotations: providers.GeneratedAnnotations(md, providers.PodTemplateAnnotations(md)),
		},
		Spec: rayServiceSpec{ServeConfigV2: serve, RayClusterConfig: cluster},
	}, claims
}

// podMeta is the metadata of every Ray pod: the podTemplate labels and
// annotations (upstream puts them on the RayService only) and the
// model-deployment label the gateway's InferencePool selects on.
func podMeta(md *hub.ModelDeployment) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Labels:      providers.Merge(providers.PodTemplateLabels(md), map[string]string{hub.LabelModelDeployment: md.Name}),
		Annotations: providers.PodTemplateAnnotations(md),
	}
}

func headGroup(req *providers.Request) headGroupSpec {
	md := req.MD
	memory := defaultHeadMemory
	if md.Spec.Resources != nil && md.Spec.Resources.Memory != "" {
		memory = md.Spec.Resources.Memory
	}
	c := corev1.Container{
		Name:  HeadContainer,
		Image: image(req),
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(defaultHeadCPU),
			corev1.ResourceMemory: hub.MustParseQuantity(memory),
		}},
		Env: providers.ContainerEnv(md),
	}
	// The head runs no GPU work: the user's nodeSelector and tolerations
	// stay on the workers, and the head goes to the cluster's CPU pool when
	// the capability file declares one, so it takes no room on a GPU node.
	cpu := req.Placement.ForCPU()
	return headGroupSpec{
		RayStartParams: map[string]string{"dashboard-host": "0.0.0.0"},
		Template: corev1.PodTemplateSpec{ObjectMeta: podMeta(md), Spec: corev1.PodSpec{
			Containers: []corev1.Container{c}, NodeSelector: cpu.NodeSelector, Tolerations: cpu.Tolerations,
		}},
	}
}

func workerGroups(req *providers.Request, claims *[]groupClaim) []workerGroupSpec {
	md := req.MD
	s := &md.Spec
	if s.Mode() != hub.ModeDisaggregated {
		memory := defaultWorkerMemory
		if s.Resources != nil && s.Resources.Memory != "" {
			memory = s.Resources.Memory
		}
		gpuType := hub.DefaultGPUResource
		if s.Resources != nil && s.Resources.GPU != nil && s.Resources.GPU.Type != "" {
			gpuType = s.Resources.GPU.Type
		}
		group := workerGroup(req, AggregatedGroup, providers.ComponentMain, s.Replicas(), s.GPUCount(), gpuType, memory)
		if a := s.Autoscaling(); a != nil {
			// One worker per Serve replica, as without autoscaling.
			group.Replicas, group.MinReplicas, group.MaxReplicas = nil, *a.MinReplicas, *a.MaxReplicas
		}
		claimGPUs(req, providers.ComponentMain, &group, claims)
		return []workerGroupSpec{group}
	}
	var groups []workerGroupSpec
	if s.Scaling == nil {
		return groups
	}
	for _, c := range []struct {
		name, component string
		spec            *hub.ComponentScalingSpec
	}{{PrefillGroup, providers.ComponentPrefill, s.Scaling.Prefill}, {DecodeGroup, providers.ComponentDecode, s.Scaling.Decode}} {
		if c.spec == nil {
			continue
		}
		memory := defaultWorkerMemory
		if c.spec.Memory != "" {
			memory = c.spec.Memory
		}
		gpuType := hub.DefaultGPUResource
		if c.spec.GPU != nil && c.spec.GPU.Type != "" {
			gpuType = c.spec.GPU.Type
		}
		group := workerGroup(req, c.name, c.component, c.spec.ReplicaCount(), c.spec.GPUCount(), gpuType, memory)
		claimGPUs(req, c.component, &group, claims)
		groups = append(groups, group)
	}
	return groups
}

// workerGroup is one fixed-size group (autoscaling off: min = max =
// replicas). Unlike upstream, workers get the user's env and the HF token
// (vLLM downloads the weights in the worker), spec.nodeSelector and
// spec.tolerations (they need the GPU nodes), and with more than one GPU
// a memory-backed /dev/shm for NCCL (providers.SharedMemory).
func workerGroup(req *providers.Request, name, component string, replicas, gpus int32, gpuType, memory string) workerGroupSpec {
	md := req.MD
	placed := req.Placement.For(component)
	limits := corev1.ResourceList{corev1.ResourceMemory: hub.MustParseQuantity(memory)}
	if gpus > 0 {
		limits[corev1.ResourceName(gpuType)] = *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	}
	volumes, mounts := providers.SharedMemory(gpus)
	res := corev1.ResourceRequirements{Limits: limits}
	if component == providers.ComponentMain && md.Spec.Resources != nil && md.Spec.Resources.CPU != "" {
		// A request, not a limit: KubeRay tells Ray the worker's cpus from
		// it, and a limit would throttle tokenisation under load.
		res.Requests = corev1.ResourceList{corev1.ResourceCPU: hub.MustParseQuantity(md.Spec.Resources.CPU)}
	}
	req.Placement.FillRequests(component, &res)
	if cpu := res.Requests[corev1.ResourceCPU]; cpu.Value() < replicaActorCPUs {
		// KubeRay tells Ray the request, rounded up, as `ray start
		// --num-cpus`: a worker must offer the replica actor its CPU.
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		res.Requests[corev1.ResourceCPU] = *resource.NewQuantity(replicaActorCPUs, resource.DecimalSI)
	}
	c := corev1.Container{
		Name:         WorkerContainer,
		Image:        image(req),
		Resources:    res,
		Env:          providers.ContainerEnv(md),
		VolumeMounts: mounts,
	}
	return workerGroupSpec{
		GroupName:      name,
		Replicas:       &replicas,
		MinReplicas:    replicas,
		MaxReplicas:    replicas,
		RayStartParams: map[string]string{},
		Template: corev1.PodTemplateSpec{ObjectMeta: podMeta(md), Spec: corev1.PodSpec{
			Containers:   []corev1.Container{c},
			NodeSelector: placed.NodeSelector,
			Tolerations:  placed.Tolerations,
			Volumes:      volumes,
		}},
	}
}

// image picks engine.image, then the legacy spec.image, then the cluster's
// `images.vllm` pin from the capability file, then upstream's default.
func image(req *providers.Request) string {
	if img := req.MD.Spec.EngineImage(); img != "" {
		return img
	}
	if req.Provider != nil && req.Provider.Images[hub.EngineVLLM] != "" {
		return req.Provider.Images[hub.EngineVLLM]
	}
	return DefaultImage
}
