// Package podserver builds what the direct vLLM and llm-d providers have in
// common: a Deployment running one OpenAI-compatible vLLM container and a
// ClusterIP Service in front of it, with upstream AI Runway's labels,
// selector protection, resources and environment. The providers decide the
// names, replicas, image, args, probes and volumes; this package decides
// how those become Kubernetes objects, so both render them identically.
package podserver

import (
	"encoding/json"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/internal/autoscale"
)

// The container both providers run, as upstream names it.
const (
	ContainerName = "vllm"
	PortName      = "http"
	Port          = 8000
	// LabelApp is the selector label that tells the Deployments of one
	// ModelDeployment apart (prefill and decode).
	LabelApp = "app"
)

// Server is one Deployment of the model server.
type Server struct {
	// Name names the Deployment and its Service and is the value of the
	// `app` selector label.
	Name     string
	Replicas int32
	// Autoscaled leaves the replica count out: an autoscaler owns it, and
	// a count in Git would be written back over the autoscaler's.
	Autoscaled bool
	// Component is the placement component the pods belong to
	// (providers.ComponentMain, ComponentPrefill or ComponentDecode).
	Component string
	// Routable puts `airunway.ai/model-deployment` on the pods: the label
	// the gateway's InferencePool selects, so only pods that should receive
	// user requests carry it.
	Routable  bool
	Container corev1.Container
	Volumes   []corev1.Volume
}

// SelectorLabels are the Deployment's selector and the Service's selector.
func SelectorLabels(md *hub.ModelDeployment, name string) map[string]string {
	return map[string]string{hub.LabelDeployment: md.Name, LabelApp: name}
}

// Container returns the model-server container: name, image, args, the
// http port, resources and environment.
func Container(image string, args []string, res corev1.ResourceRequirements, env []corev1.EnvVar) corev1.Container {
	return corev1.Container{
		Name:      ContainerName,
		Image:     image,
		Args:      args,
		Ports:     []corev1.ContainerPort{{Name: PortName, ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
		Resources: res,
		Env:       env,
	}
}

// HealthProbe is an HTTP GET of vLLM's `/health` on the model-server
// port. vLLM's OpenAI-compatible server answers it with 200 once the
// engine runs (vllm/entrypoints/openai/api_server.py, route `/health`);
// the server answers HTTP only once the engine is built, so the model is
// loaded by then.
func HealthProbe(initialDelay, period, failureThreshold int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(Port)}},
		InitialDelaySeconds: initialDelay,
		PeriodSeconds:       period,
		FailureThreshold:    failureThreshold,
	}
}

// StartupThreshold is the startup probe's failureThreshold that gives a
// server at least least failures, and at least startup seconds in all
// (the engine's budget for the download, load and engine start,
// providers.Request.StartupSeconds) after initialDelay, probing every
// period seconds.
func StartupThreshold(startup, initialDelay, period, least int32) int32 {
	need := (startup - initialDelay + period - 1) / period
	return max(least, need)
}

// Deployment builds the Deployment of one Server. Deployment labels are the
// base labels overlaid by podTemplate labels; pod labels are the podTemplate
// labels overlaid by the selector labels, so a user label can never detach
// the pods from their Deployment and Service.
func Deployment(req *providers.Request, s Server) *appsv1.Deployment {
	md := req.MD
	modelLabel := map[string]string{hub.LabelModelDeployment: md.Name}
	podLabels := providers.Merge(providers.PodTemplateLabels(md), SelectorLabels(md, s.Name))
	if s.Routable {
		podLabels[hub.LabelModelDeployment] = md.Name
	} else {
		// The key is the InferencePool's selector: pods that must not
		// receive user requests never carry it, even from podTemplate.
		delete(podLabels, hub.LabelModelDeployment)
	}
	var replicas *int32
	if !s.Autoscaled {
		replicas = &s.Replicas
	}
	placed := req.Placement.For(s.Component)
	pod := corev1.PodSpec{
		Containers:   []corev1.Container{*s.Container.DeepCopy()},
		NodeSelector: placed.NodeSelector,
		Tolerations:  placed.Tolerations,
		Volumes:      s.Volumes,
	}
	placed.ClaimGPUs(&pod, 0, s.Name)
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        s.Name,
			Namespace:   md.Namespace,
			Labels:      providers.Merge(providers.BaseLabels(md, req.Engine), providers.PodTemplateLabels(md), modelLabel),
			Annotations: providers.GeneratedAnnotations(md, providers.PodTemplateAnnotations(md)),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: SelectorLabels(md, s.Name)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: providers.PodTemplateAnnotations(md)},
				Spec:       pod,
			},
		},
	}
}

// Service builds the ClusterIP Service for the Server named name: base
// labels only (podTemplate labels are for pods), port http 8000 → 8000.
func Service(req *providers.Request, name string) *corev1.Service {
	md := req.MD
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   md.Namespace,
			Labels:      providers.BaseLabels(md, req.Engine),
			Annotations: providers.GeneratedAnnotations(md, nil),
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: SelectorLabels(md, name),
			Ports:    []corev1.ServicePort{{Name: PortName, Port: Port, TargetPort: intstr.FromInt32(Port), Protocol: corev1.ProtocolTCP}},
		},
	}
}

// Image picks engine.image, then the legacy spec.image, then the cluster's
// pin from the capability file (`images.vllm`), then the provider default.
func Image(req *providers.Request, defaultImage string) string {
	if img := req.MD.Spec.EngineImage(); img != "" {
		return img
	}
	if req.Provider != nil && req.Provider.Images[hub.EngineVLLM] != "" {
		return req.Provider.Images[hub.EngineVLLM]
	}
	return defaultImage
}

// WarnFloatingDefault warns when the model server runs the provider's
// default image and that image's tag floats (a nightly or latest build):
// the same commit would deploy a different server tomorrow. It names a
// pinned image to use instead.
func WarnFloatingDefault(req *providers.Request, provider, defaultImage, pinned string, l *diag.List) {
	if Image(req, defaultImage) != defaultImage || !floating(defaultImage) {
		return
	}
	l.Warnf(diag.FloatingImage, "spec.engine.image", "is unset and the capability file pins no `images.vllm` for the %s provider, so its default %q runs: a floating tag that changes under you; pin a release, e.g. `images: {vllm: %q}` on the provider in the capability file, or set `spec.engine.image`", provider, defaultImage, pinned)
}

// floating reports an image reference whose tag names no release.
func floating(image string) bool {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return true // no tag: latest
	}
	tag := image[i+1:]
	return tag == "latest" || strings.Contains(tag, "nightly")
}

// Resources returns the container resources: GPUs as limits and requests
// under gpuType (the extended resource name), memory as limits and
// requests, cpu as a request only. Quantities were validated upstream of
// the provider, so parsing cannot fail here.
func Resources(gpuCount int32, gpuType, memory, cpu string) corev1.ResourceRequirements {
	var rr corev1.ResourceRequirements
	set := func(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
	}
	if gpuCount > 0 {
		if gpuType == "" {
			gpuType = hub.DefaultGPUResource
		}
		gpu := corev1.ResourceName(gpuType)
		set(&rr.Limits, gpu, *resource.NewQuantity(int64(gpuCount), resource.DecimalSI))
		set(&rr.Requests, gpu, *resource.NewQuantity(int64(gpuCount), resource.DecimalSI))
	}
	if memory != "" {
		q := hub.MustParseQuantity(memory)
		set(&rr.Limits, corev1.ResourceMemory, q)
		set(&rr.Requests, corev1.ResourceMemory, q)
	}
	if cpu != "" {
		set(&rr.Requests, corev1.ResourceCPU, hub.MustParseQuantity(cpu))
	}
	return rr
}

// ClaimTemplate is the ResourceClaimTemplate a Server's pods claim their
// GPUs from when its component runs on a Dynamic Resource Allocation pool,
// nil otherwise (see providers.PoolPlacement.ClaimGPUs).
func ClaimTemplate(req *providers.Request, s Server) (providers.Object, error) {
	placed := req.Placement.For(s.Component)
	count := placed.ClaimedGPUs(&s.Container)
	if count == 0 {
		return nil, nil
	}
	return providers.ClaimTemplate(req, s.Name, placed.Devices, count)
}

// Objects renders each Server as a Deployment and its Service, then, for
// Servers on a Dynamic Resource Allocation pool, their
// ResourceClaimTemplates, merging
// overrides into each Deployment (upstream applies overrides to
// Deployments only). It reports errors on l and returns nil when any
// conversion fails.
func Objects(req *providers.Request, servers []Server, overrides json.RawMessage, l *diag.List) []providers.Object {
	var out []providers.Object
	for _, s := range servers {
		obj, err := providers.FromTyped(Deployment(req, s))
		if err != nil {
			l.Errorf("", "internal error rendering the Deployment: %v", err)
			return nil
		}
		if err := providers.ApplyOverrides(obj, overrides); err != nil {
			l.Errorf("spec.provider.overrides", "%v", err)
			// One error per run is enough: every Deployment gets the same overrides.
			overrides = nil
		}
		out = append(out, obj)
	}
	for _, s := range servers {
		obj, err := providers.FromTyped(Service(req, s.Name))
		if err != nil {
			l.Errorf("", "internal error rendering the Service: %v", err)
			return nil
		}
		out = append(out, obj)
	}
	for _, s := range servers {
		obj, err := ClaimTemplate(req, s)
		if err != nil {
			l.Errorf("", "internal error rendering the ResourceClaimTemplate: %v", err)
			return nil
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out
}

// Overrides returns spec.provider.overrides, nil when unset.
func Overrides(md *hub.ModelDeployment) json.RawMessage {
	if md.Spec.Provider == nil {
		return nil
	}
	return md.Spec.Provider.Overrides
}

// Autoscaler is the autoscaler of the Deployment named name, nil when the
// model is not autoscaled.
func Autoscaler(req *providers.Request, name string) providers.Object {
	return autoscale.Render(req, autoscale.Target{APIVersion: "apps/v1", Kind: "Deployment", Name: name, ModelName: autoscale.ServedName(req.MD)})
}
