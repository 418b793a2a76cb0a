package llmd

import (
	"encoding/json"
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

// Upstream constants of the llm-d provider.
const (
	DefaultImage = "vllm/vllm-openai:v0.19.1"

	// KVTransferDecode and KVTransferPrefill are the vLLM KV-transfer
	// configurations of the two disaggregated roles: prefill produces the
	// KV cache, decode consumes it over NCCL.
	KVTransferDecode  = `{"kv_connector":"PyNcclConnector","kv_role":"kv_consumer"}`
	KVTransferPrefill = `{"kv_connector":"PyNcclConnector","kv_role":"kv_producer"}`

	decodeSuffix  = "-decode"
	prefillSuffix = "-prefill"
)

// Provider is the llm-d provider.
type Provider struct{}

var _ providers.Provider = Provider{}

// Name implements providers.Provider.
func (Provider) Name() string { return hub.ProviderLLMD }

// Detection implements providers.Detector: no CRD and no operator: its inference scheduler's Deployment shows llm-d is there, not which llm-d release it belongs to.
func (Provider) Detection() providers.Detection {
	return providers.Detection{Images: []string{"/llm-d/llm-d-inference-scheduler"},
		Runs: "llm-d's inference scheduler", NoRelease: "llm-d has no operator, so its release is not visible"}
}

// ServerImage implements providers.ServerImager: the model server is
// vLLM's own entrypoint; its default is a pinned release.
func (Provider) ServerImage() providers.ServerImage {
	return providers.ServerImage{Default: DefaultImage, DefaultWarned: false}
}

// Check implements providers.Provider with what the generated names and
// engine arguments need. Upstream's compatibility rules (vLLM only, GPUs
// required) are the capability catalogue's, checked by the render engine.
func (Provider) Check(req *providers.Request) diag.List {
	var l diag.List
	md := req.MD
	s := &md.Spec
	if !req.GatewayEnabled {
		// llm-d is its inference scheduler (the endpoint picker) in front
		// of vLLM; without the gateway objects only the vLLM Deployments
		// remain, whatever the llm-d release.
		l.Warnf(diag.LLMDWithoutGateway, "spec.gateway", "is not enabled (or the capability file declares no gateway), so the llmd provider renders plain vLLM Deployments and Services: no endpoint picker, no InferencePool, none of llm-d's routing; enable the gateway, or render plain vLLM Deployments with the provider made for them (docs/providers.md)")
	}
	autoscale.Check(req, &l)
	// Each Deployment name is also a Service name and the `app` label
	// value, so it must be a DNS-1035 label; `-prefill` makes it longer.
	for _, name := range serverNames(md) {
		if msgs := utilvalidation.IsDNS1035Label(name); len(msgs) > 0 {
			l.Errorf("metadata.name", "%q cannot name the generated Deployment and Service %q: %s", md.Name, name, strings.Join(msgs, "; "))
			break
		}
	}
	if s.Engine != nil {
		for _, err := range providers.CheckArgKeys(s.Engine) {
			l.Errorf("spec.engine.args", "%v", err)
		}
	}
	checkParallelism(s, &l)
	return l
}

// Render implements providers.Provider.
func (Provider) Render(req *providers.Request) ([]providers.Object, diag.List) {
	var l diag.List
	md := req.MD
	warnIgnored(md, &l)
	providers.WarnLiteralEnv(md, &l)
	overrides := podserver.Overrides(md)
	checkOverrides(overrides, &l)
	var servers []podserver.Server
	var scaled string // the Deployment an autoscaler scales
	if md.Spec.Mode() == hub.ModeDisaggregated {
		// Decode first: upstream tracks status on the first object, and
		// decode pods are the ones that serve user requests.
		for _, c := range components(&md.Spec) {
			if c.spec == nil {
				continue // refused by Check
			}
			name := md.Name + c.suffix
			if c.spec.ReplicaCount() == 0 {
				l.Warnf(diag.ScaleToZero, "spec.scaling."+c.role+".replicas", "is 0: the %s Deployment %q is scaled to zero", c.role, name)
			}
			res := podserver.Resources(c.spec.GPUCount(), gpuType(c.spec.GPU), c.spec.Memory, "")
			req.Placement.FillRequests(c.role, &res)
			container := podserver.Container(podserver.Image(req, DefaultImage), Args(md, c.spec.GPUCount(), c.kvTransfer), res, providers.ContainerEnv(md))
			probes(&container, req.StartupSeconds)
			volumes := sharedMemory(&container, c.spec.GPUCount())
			// Autoscaling scales the decode workers, which take the requests.
			autoscaled := c.routable && md.Spec.Autoscaling() != nil
			servers = append(servers, podserver.Server{Name: name, Component: c.role, Replicas: c.spec.ReplicaCount(), Autoscaled: autoscaled, Routable: c.routable, Container: container, Volumes: volumes})
			if autoscaled {
				scaled = name
			}
		}
	} else {
		if md.Spec.Replicas() == 0 {
			l.Warnf(diag.ScaleToZero, "spec.scaling.replicas", "is 0: the Deployment is scaled to zero and serves nothing (upstream AI Runway would run 1 replica)")
		}
		var res corev1.ResourceRequirements
		if r := md.Spec.Resources; r != nil {
			res = podserver.Resources(md.Spec.GPUCount(), gpuType(r.GPU), r.Memory, r.CPU)
		}
		req.Placement.FillRequests(providers.ComponentMain, &res)
		container := podserver.Container(podserver.Image(req, DefaultImage), Args(md, md.Spec.GPUCount(), ""), res, providers.ContainerEnv(md))
		probes(&container, req.StartupSeconds)
		volumes := sharedMemory(&container, md.Spec.GPUCount())
		servers = append(servers, podserver.Server{Name: md.Name, Replicas: md.Spec.Replicas(), Autoscaled: md.Spec.Autoscaling() != nil, Routable: true, Container: container, Volumes: volumes})
		scaled = md.Name
	}
	objs := podserver.Objects(req, servers, overrides, &l)
	if a := podserver.Autoscaler(req, scaled); a != nil {
		objs = append(objs, a)
	}
	return objs, l
}

// Probe timings of the llm-d model servers (probes).
const (
	// StartupPeriodSeconds × StartupFailureThreshold is the start-up
	// budget: one hour from container start to the first 200 of /health.
	StartupPeriodSeconds    = 10
	StartupFailureThreshold = 360
	// ReadinessPeriodSeconds × ReadinessFailureThreshold: a server that
	// stops answering leaves the endpoints within 15 s.
	ReadinessPeriodSeconds    = 5
	ReadinessFailureThreshold = 3
)

// probes puts a startup and a readiness probe on a model server, so that
// a pod is Ready, and so routable, only once vLLM serves. Upstream AI
// Runway's llm-d provider renders none, and neither does llm-d's own
// model-service chart unless its values set them
// (llm-d-incubation/llm-d-modelservice, charts/llm-d-modelservice:
// container probes are passed through from the values, and only the
// requester sidecar has a default readiness probe): a pod without a
// readiness probe is Ready as soon as its container starts, and the
// endpoint picker, which selects Ready pods of the InferencePool, would
// send requests to a server that is still downloading or loading the
// model.
//
//   - Both probe vLLM's /health on port 8000 (podserver.HealthProbe): the
//     llm-d provider renders no --port, so vLLM listens on its default,
//     8000, with no routing sidecar in front.
//   - Startup: every 10 s up to 360 times, one hour. llm-d model servers
//     mount no volumes and download the model at every container start
//     (a 70B bf16 checkpoint is about 140 GB: some 20 minutes at 1 Gbit/s)
//     before loading it and capturing CUDA graphs. A budget that runs out
//     restarts the container, which downloads again into a fresh writable
//     layer, so a slow start would never finish: the budget errs long, and
//     grows to the engine's estimate of the start
//     (providers.Request.StartupSeconds: the download at the capability
//     file's rate, the load, the engine's start) when that is longer.
//   - Readiness: every 5 s, 3 failures, after start-up succeeded. It is
//     what takes a pod out of the InferencePool's endpoints.
//   - No liveness probe: vLLM's server exits when its engine dies (the
//     watchdog and shutdown handlers of vllm/entrypoints/launcher.py,
//     unless VLLM_KEEP_ALIVE_ON_ENGINE_DEATH), which restarts the container
//     anyway; a liveness probe would add only restarts of a server too busy
//     to answer within the probe's timeout, each one a new download.
//
// The llm-d provider refuses pod-spec overrides (checkOverrides), so the
// probes cannot be changed per model beyond that estimate.
func probes(c *corev1.Container, startup int32) {
	c.StartupProbe = podserver.HealthProbe(0, StartupPeriodSeconds, podserver.StartupThreshold(startup, 0, StartupPeriodSeconds, StartupFailureThreshold))
	c.ReadinessProbe = podserver.HealthProbe(0, ReadinessPeriodSeconds, ReadinessFailureThreshold)
}

// sharedMemory mounts a memory-backed /dev/shm into a model server with
// more than one GPU, for NCCL between its tensor-parallel workers
// (providers.SharedMemory; upstream llm-d mounts none), and returns the
// pod's volumes.
func sharedMemory(c *corev1.Container, gpus int32) []corev1.Volume {
	volumes, mounts := providers.SharedMemory(gpus)
	c.VolumeMounts = append(c.VolumeMounts, mounts...)
	return volumes
}

// checkParallelism refuses parallelism flags that contradict the GPUs of
// a model server: the one command line runs in every server, so in
// disaggregated mode it must fit both prefill and decode pods.
func checkParallelism(s *hub.ModelDeploymentSpec, l *diag.List) {
	if s.Mode() != hub.ModeDisaggregated {
		providers.CheckParallelism(s.Engine, providers.VLLMParallelFlags, providers.OnePod(s.GPUCount(), ""), l)
		return
	}
	for _, c := range components(s) {
		if c.spec != nil {
			providers.CheckParallelism(s.Engine, providers.VLLMParallelFlags, providers.OnePod(c.spec.GPUCount(), c.role), l)
		}
	}
}

// component is one role of disaggregated serving.
type component struct {
	role, suffix, kvTransfer string
	spec                     *hub.ComponentScalingSpec
	// routable: only decode pods take user requests (upstream labels the
	// pods behind the decode Service only).
	routable bool
}

func components(s *hub.ModelDeploymentSpec) []component {
	var prefill, decode *hub.ComponentScalingSpec
	if s.Scaling != nil {
		prefill, decode = s.Scaling.Prefill, s.Scaling.Decode
	}
	return []component{
		{role: "decode", suffix: decodeSuffix, kvTransfer: KVTransferDecode, spec: decode, routable: true},
		{role: "prefill", suffix: prefillSuffix, kvTransfer: KVTransferPrefill, spec: prefill},
	}
}

// serverNames are the Deployment (and Service) names Render produces.
func serverNames(md *hub.ModelDeployment) []string {
	if md.Spec.Mode() == hub.ModeDisaggregated {
		return []string{md.Name + decodeSuffix, md.Name + prefillSuffix}
	}
	return []string{md.Name}
}

func gpuType(g *hub.GPUSpec) string {
	if g == nil {
		return ""
	}
	return g.Type
}

// warnIgnored names the fields the llm-d provider does not render, as
// upstream ignores them silently.
func warnIgnored(md *hub.ModelDeployment, l *diag.List) {
	s := &md.Spec
	if s.Model.Storage != nil && len(s.Model.Storage.Volumes) > 0 {
		l.Warnf(diag.IgnoredField, "spec.model.storage", "is ignored by the llmd provider: like upstream, llm-d model servers mount no volumes and download the model at start-up; use a provider that mounts model storage (docs/providers.md)")
	}
	if s.Mode() == hub.ModeDisaggregated {
		if r := s.Resources; r != nil {
			if r.Memory != "" {
				l.Warnf(diag.IgnoredField, "spec.resources.memory", "is ignored by the llmd provider in disaggregated serving mode: set `spec.scaling.prefill.memory` and `spec.scaling.decode.memory`")
			}
			if r.CPU != "" {
				l.Warnf(diag.IgnoredField, "spec.resources.cpu", "is ignored by the llmd provider in disaggregated serving mode: `spec.scaling.prefill` and `spec.scaling.decode` have no cpu field, so their pods request the default cpu of their node pool (docs/placement.md)")
			}
		}
		if s.Scaling != nil && s.Scaling.Replicas != nil && *s.Scaling.Replicas != 1 {
			l.Warnf(diag.IgnoredField, "spec.scaling.replicas", "is ignored by the llmd provider in disaggregated serving mode: set `spec.scaling.prefill.replicas` and `spec.scaling.decode.replicas`")
		}
		return
	}
	if s.Scaling != nil {
		for _, c := range components(s) {
			if c.spec != nil {
				l.Warnf(diag.IgnoredField, "spec.scaling."+c.role, "is ignored by the llmd provider in aggregated serving mode")
			}
		}
	}
}

// checkOverrides applies upstream's llm-d guard: overrides must not reach
// the pod spec (`spec.template.spec`), which holds the security-relevant
// fields. Replacing `spec` or `spec.template` with a non-object (a null
// deletes) would bypass the guard, so that is refused too.
func checkOverrides(raw json.RawMessage, l *diag.List) {
	if len(raw) == 0 {
		return
	}
	var patch map[string]any
	if err := json.Unmarshal(raw, &patch); err != nil {
		return // reported by providers.ApplyOverrides
	}
	podSpec := []string{"spec", "template", "spec"}
	node := patch
	for i, key := range podSpec {
		v, ok := node[key]
		if !ok {
			return
		}
		path := strings.Join(podSpec[:i+1], ".")
		field := "spec.provider.overrides." + path
		if i == len(podSpec)-1 {
			l.Errorf(field, "overriding %q is not allowed: the llmd provider refuses pod-spec overrides, as upstream does; use `spec.nodeSelector`, `spec.tolerations`, `spec.env` and `spec.resources`", path)
			return
		}
		m, isMap := v.(map[string]any)
		if !isMap {
			l.Errorf(field, "overriding %q with a non-object value is not allowed: it would replace the pod spec, which the llmd provider does not let overrides change", path)
			return
		}
		node = m
	}
}

// Args builds the vLLM command line in upstream llm-d's order: model
// flags, prefix caching, eager mode, tensor parallelism (gpus > 1),
// KV-transfer role (disaggregated), `engine.args` sorted by key, then
// `engine.extraArgs` verbatim. A derived flag steps aside when the user
// sets the same flag in `engine.args` or `engine.extraArgs`, so each flag
// appears once and the user's value is the one vLLM sees (upstream emits
// both, and vLLM's parser keeps the later, the user's).
func Args(md *hub.ModelDeployment, gpus int32, kvTransfer string) []string {
	c := providers.NewCommandLine(md)
	c.AddModelFlags(md)
	e := c.Engine()
	// Always explicit, as upstream: the endpoint picker scores prefix-cache
	// hits. Absent (no engine object, so no CRD default) means the CRD
	// default, true; upstream reads it as false there.
	if !c.UserSet("enable-prefix-caching") && !c.UserSet("no-enable-prefix-caching") {
		if e.EnablePrefixCaching == nil || *e.EnablePrefixCaching {
			c.Add("enable-prefix-caching")
		} else {
			c.Add("no-enable-prefix-caching")
		}
	}
	if hub.Bool(e.EnforceEager) {
		c.Add("enforce-eager")
	}
	c.AddParallelism(providers.OnePod(gpus, ""))
	if kvTransfer != "" {
		c.Add("kv-transfer-config", kvTransfer)
	}
	// Prefill and decode both load the adapters: a request for one
	// passes through both.
	c.AddLoRA(md)
	return c.Finish()
}

// Backend implements providers.Routable: the routable pods (decode pods in
// disaggregated mode) carry the model-deployment label; vLLM listens on 8000.
func (Provider) Backend(req *providers.Request) providers.Backend {
	return providers.Backend{PodSelector: providers.ModelPodSelector(req), Port: podserver.Port}
}

// Endpoint implements providers.Endpointer: the Service of the Deployment
// serving user requests (the decode one in disaggregated mode).
func (Provider) Endpoint(md *hub.ModelDeployment) providers.Endpoint {
	return podserver.Endpoint(serverNames(md)[0])
}

// Primary implements providers.Reporter: the Deployment serving user
// requests, the decode one in disaggregated mode, as upstream tracks it.
func (Provider) Primary(md *hub.ModelDeployment) providers.Primary {
	return podserver.Primary(serverNames(md)[0])
}

// Health implements providers.Reporter.
func (Provider) Health(obj *unstructured.Unstructured) providers.Health {
	return podserver.Health(obj)
}

// HealthFields implements providers.Reporter.
func (Provider) HealthFields() []string { return podserver.HealthFields }
