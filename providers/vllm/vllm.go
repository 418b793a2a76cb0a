package vllm

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// Upstream constants of the direct vLLM provider.
const (
	Name          = "vllm"
	DefaultImage  = "vllm/vllm-openai:cu130-nightly"
	ContainerName = "vllm"
	Port          = 8000
	shmSizeLimit  = "20Gi"
)

// Provider is the direct vLLM provider.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name implements providers.Provider.
func (Provider) Name() string { return Name }

// Check implements providers.Provider with upstream's compatibility rules
// and the networking flags this provider owns.
func (Provider) Check(req *providers.Request) diag.List {
	var l diag.List
	s := &req.MD.Spec
	if req.Engine != v1.EngineVLLM {
		l.Errorf("spec.engine.type", "the vllm provider only supports the %q engine, got %q", v1.EngineVLLM, req.Engine)
	}
	if s.Mode() == v1.ModeDisaggregated {
		l.Errorf("spec.serving.mode", "the vllm provider does not support disaggregated serving mode; use `spec.serving.mode: aggregated` or another provider")
	} else if s.GPUCount() <= 0 {
		l.Errorf("spec.resources.gpu.count", "the vllm provider requires GPU resources (`spec.resources.gpu.count` > 0)")
	}
	if msgs := utilvalidation.IsDNS1035Label(req.MD.Name); len(msgs) > 0 {
		l.Errorf("metadata.name", "%q cannot name the generated Service: %s", req.MD.Name, strings.Join(msgs, "; "))
	}
	checkArgs(s.Engine, &l)
	return l
}

// checkArgs refuses engine flags that would break the generated networking
// (the Service and probes expect --host 0.0.0.0 --port 8000) and invalid keys.
func checkArgs(e *v1.EngineSpec, l *diag.List) {
	if e == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		norm := strings.TrimLeft(k, "-")
		if i := strings.IndexByte(norm, '='); i >= 0 {
			norm = norm[:i]
		}
		if norm == "host" || norm == "port" {
			l.Errorf("spec.engine.args."+k, "engine arg %q conflicts with Direct vLLM generated networking (--host 0.0.0.0 --port %d); remove it", k, Port)
		} else if !providers.ValidArgKey(k) {
			l.Errorf("spec.engine.args", "invalid engine arg key %q: must contain only alphanumeric characters, hyphens, and underscores, and must not start with '-'", k)
		}
	}
	for i, tok := range e.ExtraArgs {
		if key, ok := v1.FlagKey(tok); ok && (key == "host" || key == "port") {
			l.Errorf(fmt.Sprintf("spec.engine.extraArgs[%d]", i), "engine extraArg %q conflicts with Direct vLLM generated networking (--host 0.0.0.0 --port %d); remove it", tok, Port)
		}
	}
}

// Render implements providers.Provider.
func (Provider) Render(req *providers.Request) ([]providers.Object, diag.List) {
	var l diag.List
	md := req.MD
	if md.Spec.Replicas() == 0 {
		l.Warnf("spec.scaling.replicas", "is 0: the Deployment is scaled to zero and serves nothing (upstream AI Runway would run 1 replica)")
	}
	warnUnmanagedVolumes(md, &l)
	deploy := deployment(req)
	dobj, err := providers.FromTyped(deploy)
	if err != nil {
		l.Errorf("", "internal error rendering the Deployment: %v", err)
		return nil, l
	}
	if md.Spec.Provider != nil {
		if err := providers.ApplyOverrides(dobj, md.Spec.Provider.Overrides); err != nil {
			l.Errorf("spec.provider.overrides", "%v", err)
		}
	}
	sobj, err := providers.FromTyped(service(req))
	if err != nil {
		l.Errorf("", "internal error rendering the Service: %v", err)
		return nil, l
	}
	return []providers.Object{dobj, sobj}, l
}

func warnUnmanagedVolumes(md *v1.ModelDeployment, l *diag.List) {
	if md.Spec.Model.Storage == nil {
		return
	}
	for i, v := range md.Spec.Model.Storage.Volumes {
		if v.IsManaged() {
			l.Warnf(fmt.Sprintf("spec.model.storage.volumes[%d].size", i), "the vllm provider mounts PVC %q but, like upstream, does not create it; create it separately or use a provider that manages PVCs", v.ResolvedClaimName(md.Name))
		}
	}
}

func selectorLabels(md *v1.ModelDeployment) map[string]string {
	return map[string]string{providers.LabelDeployment: md.Name, "app": md.Name}
}

func deployment(req *providers.Request) *appsv1.Deployment {
	md := req.MD
	replicas := md.Spec.Replicas()
	podLabels := providers.Merge(providers.PodTemplateLabels(md), selectorLabels(md), map[string]string{providers.LabelModelDeployment: md.Name})
	d := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        md.Name,
			Namespace:   md.Namespace,
			Labels:      providers.Merge(providers.BaseLabels(md, req.Engine), providers.PodTemplateLabels(md), map[string]string{providers.LabelModelDeployment: md.Name}),
			Annotations: providers.GeneratedAnnotations(md, providers.PodTemplateAnnotations(md)),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(md)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: providers.PodTemplateAnnotations(md)},
				Spec:       podSpec(req),
			},
		},
	}
	return d
}

func podSpec(req *providers.Request) corev1.PodSpec {
	md := req.MD
	volumes, mounts := volumes(md)
	c := corev1.Container{
		Name:           ContainerName,
		Image:          image(req),
		Args:           Args(md),
		Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
		Resources:      containerResources(md),
		Env:            providers.ContainerEnv(md),
		VolumeMounts:   mounts,
		StartupProbe:   healthProbe(10, 60),
		LivenessProbe:  healthProbe(10, 3),
		ReadinessProbe: healthProbe(5, 3),
	}
	return corev1.PodSpec{
		Containers:   []corev1.Container{c},
		NodeSelector: providers.Merge(md.Spec.NodeSelector),
		Tolerations:  md.Spec.Tolerations,
		Volumes:      volumes,
	}
}

func healthProbe(period, failureThreshold int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(Port)}},
		InitialDelaySeconds: 15,
		PeriodSeconds:       period,
		FailureThreshold:    failureThreshold,
	}
}

// image picks engine.image, then the legacy spec.image, then the cluster's
// pin from the capability file, then upstream's default.
func image(req *providers.Request) string {
	if img := req.MD.Spec.EngineImage(); img != "" {
		return img
	}
	if req.Provider != nil && req.Provider.Images[v1.EngineVLLM] != "" {
		return req.Provider.Images[v1.EngineVLLM]
	}
	return DefaultImage
}

// Args builds the vLLM command line in upstream's order. Every derived flag
// steps aside when the user set the same flag in `engine.args` or
// `engine.extraArgs`, so the user's value appears exactly once.
func Args(md *v1.ModelDeployment) []string {
	s := &md.Spec
	user := providers.UserFlags(s.Engine)
	args := []string{"--host", "0.0.0.0", "--port", strconv.Itoa(Port)}
	add := func(flag string, value ...string) {
		if !user[flag] {
			args = append(append(args, "--"+flag), value...)
		}
	}
	if s.Model.ID != "" {
		add("model", s.Model.ID)
	}
	if s.Model.ServedName != "" {
		add("served-model-name", s.Model.ServedName)
	}
	e := s.Engine
	if e == nil {
		e = &v1.EngineSpec{}
	}
	if e.ContextLength != nil {
		add("max-model-len", strconv.Itoa(int(*e.ContextLength)))
	}
	if v1.Bool(e.TrustRemoteCode) {
		add("trust-remote-code")
	}
	if v1.Bool(e.EnforceEager) {
		add("enforce-eager")
	}
	if e.EnablePrefixCaching != nil && !user["no-enable-prefix-caching"] {
		if *e.EnablePrefixCaching {
			add("enable-prefix-caching")
		} else {
			add("no-enable-prefix-caching")
		}
	}
	if n := s.GPUCount(); n > 1 {
		add("tensor-parallel-size", strconv.Itoa(int(n)))
	}
	args = append(args, providers.SortedArgs(e.Args)...)
	return append(args, e.ExtraArgs...)
}

func containerResources(md *v1.ModelDeployment) corev1.ResourceRequirements {
	var rr corev1.ResourceRequirements
	r := md.Spec.Resources
	if r == nil {
		return rr
	}
	set := func(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
	}
	if n := md.Spec.GPUCount(); n > 0 {
		gpu := corev1.ResourceName(r.GPU.Type)
		set(&rr.Limits, gpu, *resource.NewQuantity(int64(n), resource.DecimalSI))
		set(&rr.Requests, gpu, *resource.NewQuantity(int64(n), resource.DecimalSI))
	}
	if r.Memory != "" {
		q := resource.MustParse(r.Memory)
		set(&rr.Limits, corev1.ResourceMemory, q)
		set(&rr.Requests, corev1.ResourceMemory, q)
	}
	if r.CPU != "" {
		set(&rr.Requests, corev1.ResourceCPU, resource.MustParse(r.CPU))
	}
	return rr
}

// volumes returns the pod volumes and mounts: /dev/shm for multi-GPU
// tensor parallelism (NCCL needs more than the default 64Mi), then one PVC
// per storage volume.
func volumes(md *v1.ModelDeployment) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	if md.Spec.GPUCount() > 1 {
		limit := resource.MustParse(shmSizeLimit)
		vols = append(vols, corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "shm", MountPath: "/dev/shm"})
	}
	if md.Spec.Model.Storage == nil {
		return vols, mounts
	}
	for _, v := range md.Spec.Model.Storage.Volumes {
		if v.MountPath == "" {
			continue
		}
		vols = append(vols, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.ResolvedClaimName(md.Name)}}})
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath, ReadOnly: v1.Bool(v.ReadOnly)})
	}
	return vols, mounts
}

func service(req *providers.Request) *corev1.Service {
	md := req.MD
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        md.Name,
			Namespace:   md.Namespace,
			Labels:      providers.BaseLabels(md, req.Engine),
			Annotations: providers.GeneratedAnnotations(md, nil),
		},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selectorLabels(md),
			Ports:    []corev1.ServicePort{{Name: "http", Port: Port, TargetPort: intstr.FromInt32(Port), Protocol: corev1.ProtocolTCP}},
		},
	}
}
