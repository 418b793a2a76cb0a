package vllm

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/internal/autoscale"
	"github.com/airunway-render/airunway-render/providers/internal/podserver"
)

// Upstream constants of the direct vLLM provider.
const (
	DefaultImage = "vllm/vllm-openai:cu130-nightly"
	// PinnedImage is the release the warning about DefaultImage suggests:
	// the one the examples pin and the tests render.
	PinnedImage   = "vllm/vllm-openai:v0.19.1"
	ContainerName = podserver.ContainerName
	Port          = podserver.Port
)

// Provider is the direct vLLM provider.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name implements providers.Provider.
func (Provider) Name() string { return hub.ProviderVLLM }

// ServerImage implements providers.ServerImager: the model server is
// vLLM's own entrypoint; it warns itself (floating-image) when its floating default runs.
func (Provider) ServerImage() providers.ServerImage {
	return providers.ServerImage{Default: DefaultImage, DefaultWarned: true}
}

// Check implements providers.Provider with the names and networking flags
// this provider owns. Upstream's compatibility rules (vLLM only, GPUs,
// aggregated serving) are the capability catalogue's, checked by the
// render engine.
func (Provider) Check(req *providers.Request) diag.List {
	var l diag.List
	s := &req.MD.Spec
	if msgs := utilvalidation.IsDNS1035Label(req.MD.Name); len(msgs) > 0 {
		l.Errorf("metadata.name", "%q cannot name the generated Service: %s", req.MD.Name, strings.Join(msgs, "; "))
	}
	checkArgs(s.Engine, &l)
	providers.CheckParallelism(s.Engine, providers.VLLMParallelFlags, providers.OnePod(s.GPUCount(), ""), &l)
	podserver.WarnFloatingDefault(req, hub.ProviderVLLM, DefaultImage, PinnedImage, &l)
	autoscale.Check(req, &l)
	return l
}

// checkArgs refuses engine flags that would break the generated networking
// (the Service and probes expect --host 0.0.0.0 --port 8000) and invalid keys.
func checkArgs(e *hub.EngineSpec, l *diag.List) {
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
		if key, ok := hub.FlagKey(tok); ok && (key == "host" || key == "port") {
			l.Errorf(fmt.Sprintf("spec.engine.extraArgs[%d]", i), "engine extraArg %q conflicts with Direct vLLM generated networking (--host 0.0.0.0 --port %d); remove it", tok, Port)
		}
	}
}

// Render implements providers.Provider.
func (Provider) Render(req *providers.Request) ([]providers.Object, diag.List) {
	var l diag.List
	md := req.MD
	if md.Spec.Replicas() == 0 {
		l.Warnf(diag.ScaleToZero, "spec.scaling.replicas", "is 0: the Deployment is scaled to zero and serves nothing (upstream AI Runway would run 1 replica)")
	}
	warnUnmanagedVolumes(md, &l)
	providers.WarnLiteralEnv(md, &l)
	objs := podserver.Objects(req, []podserver.Server{server(req)}, podserver.Overrides(md), &l)
	if a := podserver.Autoscaler(req, md.Name); a != nil {
		objs = append(objs, a)
	}
	return objs, l
}

func warnUnmanagedVolumes(md *hub.ModelDeployment, l *diag.List) {
	if md.Spec.Model.Storage == nil {
		return
	}
	for i, v := range md.Spec.Model.Storage.Volumes {
		if v.IsManaged() {
			l.Warnf(diag.IgnoredField, fmt.Sprintf("spec.model.storage.volumes[%d].size", i), "the vllm provider mounts PVC %q but, like upstream, does not create it; create it separately or use a provider that manages PVCs", v.ResolvedClaimName(md.Name))
		}
	}
}

func server(req *providers.Request) podserver.Server {
	md := req.MD
	volumes, mounts := volumes(md)
	res := containerResources(md)
	req.Placement.FillRequests(providers.ComponentMain, &res)
	c := podserver.Container(podserver.Image(req, DefaultImage), Args(md), res, providers.ContainerEnv(md))
	c.VolumeMounts = mounts
	// Upstream's probes: /health after 15 s, start-up every 10 s up to
	// 60 times, liveness every 10 s, readiness every 5 s; the start-up
	// allows longer when the weights take longer to arrive (a 70B model
	// downloads for more than 10 minutes), or it would kill the server
	// mid-download, again and again.
	c.StartupProbe = podserver.HealthProbe(15, 10, podserver.StartupThreshold(req.StartupSeconds, 15, 10, 60))
	c.LivenessProbe = podserver.HealthProbe(15, 10, 3)
	c.ReadinessProbe = podserver.HealthProbe(15, 5, 3)
	return podserver.Server{Name: md.Name, Replicas: md.Spec.Replicas(), Autoscaled: md.Spec.Autoscaling() != nil, Routable: true, Container: c, Volumes: volumes}
}

// Args builds the vLLM command line in upstream's order. Every derived flag
// steps aside when the user set the same flag in `engine.args` or
// `engine.extraArgs`, so the user's value appears exactly once.
func Args(md *hub.ModelDeployment) []string {
	c := providers.NewCommandLine(md, "--host", "0.0.0.0", "--port", strconv.Itoa(Port))
	c.AddModelFlags(md)
	e := c.Engine()
	if hub.Bool(e.EnforceEager) {
		c.Add("enforce-eager")
	}
	c.AddPrefixCaching()
	c.AddParallelism(providers.OnePod(md.Spec.GPUCount(), ""))
	c.AddLoRA(md)
	return c.Finish()
}

func containerResources(md *hub.ModelDeployment) corev1.ResourceRequirements {
	r := md.Spec.Resources
	if r == nil {
		return corev1.ResourceRequirements{}
	}
	gpuType := ""
	if r.GPU != nil {
		gpuType = r.GPU.Type
	}
	return podserver.Resources(md.Spec.GPUCount(), gpuType, r.Memory, r.CPU)
}

// volumes returns the pod volumes and mounts: /dev/shm for multi-GPU
// tensor parallelism (providers.SharedMemory), then one PVC per storage
// volume.
func volumes(md *hub.ModelDeployment) ([]corev1.Volume, []corev1.VolumeMount) {
	vols, mounts := providers.SharedMemory(md.Spec.GPUCount())
	if md.Spec.Model.Storage == nil {
		return vols, mounts
	}
	for _, v := range md.Spec.Model.Storage.Volumes {
		if v.MountPath == "" {
			continue
		}
		vols = append(vols, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.ResolvedClaimName(md.Name)}}})
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath, ReadOnly: hub.Bool(v.ReadOnly)})
	}
	return vols, mounts
}

// Backend implements providers.Routable: the pod template carries the
// model-deployment label and vLLM listens on 8000.
func (Provider) Backend(req *providers.Request) providers.Backend {
	return providers.Backend{PodSelector: providers.ModelPodSelector(req), Port: Port}
}

// Endpoint implements providers.Endpointer: the Service named like the
// model.
func (Provider) Endpoint(md *hub.ModelDeployment) providers.Endpoint {
	return podserver.Endpoint(md.Name)
}

// Primary implements providers.Reporter: the Deployment named like the model.
func (Provider) Primary(md *hub.ModelDeployment) providers.Primary {
	return podserver.Primary(md.Name)
}

// Health implements providers.Reporter.
func (Provider) Health(obj *unstructured.Unstructured) providers.Health {
	return podserver.Health(obj)
}

// HealthFields implements providers.Reporter.
func (Provider) HealthFields() []string { return podserver.HealthFields }
