package dynamo

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// Upstream's component settings.
const (
	componentFrontend = "frontend"
	componentEpp      = "epp"
	componentWorker   = "worker"
	subPrefill        = "prefill"
	subDecode         = "decode"

	defaultRouterMode     = "round-robin"
	frontendCPU           = "2"
	frontendMemory        = "4Gi"
	mockerCPU             = "100m"
	mockerMemory          = "256Mi"
	kvCacheBlockSize      = "16"
	subComponentTypeLabel = "nvidia.com/dynamo-sub-component-type"

	// VLLMKVTransferConfig is what disaggregated vLLM workers need for NIXL
	// KV-cache transfer.
	VLLMKVTransferConfig = `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`

	envHFHome        = "HF_HOME"
	envNixlSideHost  = "VLLM_NIXL_SIDE_CHANNEL_HOST"
	envRouterMode    = "DYN_ROUTER_MODE"
	envDecodeFallbk  = "DYN_DECODE_FALLBACK"
	envEnforceDisagg = "DYN_ENFORCE_DISAGG"
)

func (r *renderer) services() map[string]*service {
	svcs := map[string]*service{}
	disagg := r.md.Spec.Mode() == hub.ModeDisaggregated
	if r.gateway {
		svcs[ServiceEpp] = r.epp(disagg)
	} else {
		svcs[ServiceFrontend] = r.frontend()
	}
	if disagg {
		svcs[ServicePrefillWorker] = r.worker(subPrefill, r.md.Spec.Scaling.Prefill)
		svcs[ServiceDecodeWorker] = r.worker(subDecode, r.md.Spec.Scaling.Decode)
	} else {
		svcs[ServiceWorker] = r.worker("", nil)
	}
	for _, s := range svcs {
		s.ExtraPodMetadata = r.podMetadata(s.ComponentType == componentWorker)
	}
	return svcs
}

// podMetadata puts `spec.podTemplate.metadata` and the
// `airunway.ai/model-deployment` label on every pod of the graph (upstream
// ignores podTemplate and labels pods imperatively instead), and on the
// workers the digest of their LoRA adapters (adapters.go).
func (r *renderer) podMetadata(worker bool) *podMetadata {
	annotations := providers.Merge(providers.PodTemplateAnnotations(r.md))
	if worker && r.adaptersDigest != "" {
		annotations = providers.Merge(annotations, map[string]string{AnnotationAdapters: r.adaptersDigest})
	}
	return &podMetadata{
		Labels:      providers.Merge(providers.PodTemplateLabels(r.md), map[string]string{hub.LabelModelDeployment: r.md.Name}),
		Annotations: annotations,
	}
}

func (r *renderer) hfSecret() string {
	if s := r.md.Spec.Secrets; s != nil {
		return s.HuggingFaceToken
	}
	return ""
}

// frontend is the standalone router of the non-gateway topology.
func (r *renderer) frontend() *service {
	replicas := int32(1)
	cpu, memory := frontendCPU, frontendMemory
	if r.mocker {
		// Mocker targets small CPU-only CI nodes.
		cpu, memory = mockerCPU, mockerMemory
	}
	if f := r.overrides.Frontend; f != nil {
		if f.Replicas != nil {
			replicas = *f.Replicas
		}
		if f.Resources != nil && f.Resources.CPU != "" {
			cpu = f.Resources.CPU
		}
		if f.Resources != nil && f.Resources.Memory != "" {
			memory = f.Resources.Memory
		}
	}
	routerMode := defaultRouterMode
	if r.overrides.RouterMode != "" {
		routerMode = r.overrides.RouterMode
	}
	return &service{
		ComponentType: componentFrontend,
		Replicas:      &replicas,
		Resources:     &resources{Requests: &resourceItem{CPU: cpu, Memory: memory}},
		ExtraPodSpec: &extraPodSpec{MainContainer: &container{
			Image: r.image,
			// routerMode is the user's, from the typed overrides.
			Env: []corev1.EnvVar{{Name: envRouterMode, Value: providers.EscapeExpansion(routerMode)}},
		}, NodeSelector: r.req.Placement.ForCPU().NodeSelector, Tolerations: r.req.Placement.ForCPU().Tolerations},
		EnvFromSecret: r.hfSecret(),
	}
}

// epp is Dynamo's endpoint picker of the gateway topology, configured as
// in the ai-dynamo GAIE examples for the serving mode. The operator creates
// the InferencePool `<name>-pool` for it.
func (r *renderer) epp(disagg bool) *service {
	replicas := int32(1)
	image := r.dynamoImage("dynamo-frontend")
	if e := r.overrides.Epp; e != nil {
		if e.Replicas != nil {
			replicas = *e.Replicas
		}
		if e.Image != "" {
			image = e.Image
		}
	}
	// Aggregated: fall back to decode workers; disaggregated: insist on a
	// prefill worker so a missing one shows up as an error.
	fallback, enforce := "true", "false"
	if disagg {
		fallback, enforce = "false", "true"
	}
	return &service{
		ComponentType: componentEpp,
		Replicas:      &replicas,
		ExtraPodSpec: &extraPodSpec{MainContainer: &container{
			Image: image,
			Env:   []corev1.EnvVar{{Name: envDecodeFallbk, Value: fallback}, {Name: envEnforceDisagg, Value: enforce}},
		}, NodeSelector: r.req.Placement.ForCPU().NodeSelector, Tolerations: r.req.Placement.ForCPU().Tolerations},
		EppConfig: &eppConfig{Config: eppPlugins(disagg)},
	}
}

func labelFilter(name, value string, allowsNoLabel bool) eppPlugin {
	return eppPlugin{Name: name, Type: "label-filter", Parameters: map[string]any{
		"label":         subComponentTypeLabel,
		"validValues":   []any{value},
		"allowsNoLabel": allowsNoLabel,
	}}
}

func profile(name string, refs ...string) eppProfile {
	p := eppProfile{Name: name}
	for _, ref := range refs {
		p.Plugins = append(p.Plugins, eppPluginRef{PluginRef: ref, Weight: 1})
	}
	return p
}

func eppPlugins(disagg bool) eppPluginConfig {
	handler := eppPlugin{Type: "disagg-profile-handler"}
	picker := eppPlugin{Name: "picker", Type: "max-score-picker"}
	dynDecode := eppPlugin{Name: "dyn-decode", Type: "dyn-decode-scorer"}
	decode := profile("decode", "decode-filter", "dyn-decode", "picker")
	if !disagg {
		return eppPluginConfig{
			Plugins:            []eppPlugin{handler, labelFilter("decode-filter", subDecode, true), picker, dynDecode},
			SchedulingProfiles: []eppProfile{decode},
		}
	}
	return eppPluginConfig{
		Plugins: []eppPlugin{handler, labelFilter("prefill-filter", subPrefill, false), labelFilter("decode-filter", subDecode, false),
			picker, {Name: "dyn-prefill", Type: "dyn-prefill-scorer"}, dynDecode},
		SchedulingProfiles: []eppProfile{profile("prefill", "prefill-filter", "dyn-prefill", "picker"), decode},
	}
}

// worker renders the aggregated worker (role "") or a prefill/decode worker
// sized by its scaling component.
func (r *renderer) worker(role string, c *hub.ComponentScalingSpec) *service {
	md := r.md
	w := &service{ComponentType: componentWorker, SubComponentType: role}
	replicas := md.Spec.Replicas()
	if role == "" {
		w.Resources = r.aggregatedResources()
	} else {
		// Component replicas pass through verbatim, as upstream.
		replicas = c.ReplicaCount()
		w.Resources = componentResources(c)
	}
	if r.autoscaled(role) {
		w.ScalingAdapter = &scalingAdapter{Enabled: true}
	} else {
		w.Replicas = &replicas
	}
	w.ModelRef = r.modelRef()
	main := &container{Image: r.image, Command: r.command(), Args: r.workerArgs(role), Env: r.workerEnv()}
	if r.mocker {
		w.Resources = &resources{
			Requests: &resourceItem{CPU: mockerCPU, Memory: mockerMemory},
			Limits:   &resourceItem{CPU: mockerCPU, Memory: mockerMemory},
		}
	} else {
		w.Resources = r.defaultRequests(role, w.Resources)
	}
	w.ExtraPodSpec = &extraPodSpec{
		MainContainer: main,
		NodeSelector:  r.req.Placement.For(role).NodeSelector,
		Tolerations:   r.req.Placement.For(role).Tolerations,
	}
	if !r.mocker {
		r.claimGPUs(role, w)
	}
	if r.gateway {
		w.FrontendSidecar = r.frontendSidecar(role != "")
	}
	w.EnvFromSecret = r.hfSecret()
	w.VolumeMounts = volumeMounts(md)
	return w
}

// autoscaled reports whether the worker of role is the autoscaled one: the
// aggregated worker, or the decode worker when disaggregated (Dynamo's
// autoscaling guide scales decode; prefill keeps its count).
func (r *renderer) autoscaled(role string) bool {
	return r.md.Spec.Autoscaling() != nil && (role == "" || role == subDecode)
}

// autoscaledService names the service an autoscaler scales.
func (r *renderer) autoscaledService() string {
	if r.md.Spec.Mode() == hub.ModeDisaggregated {
		return ServiceDecodeWorker
	}
	return ServiceWorker
}

// aggregatedResources maps spec.resources: GPUs as limits and requests under
// Dynamo's `gpu` key, memory and cpu as limits only (upstream).
func (r *renderer) aggregatedResources() *resources {
	res := r.md.Spec.Resources
	if res == nil {
		return nil
	}
	limits, requests := &resourceItem{Memory: res.Memory, CPU: res.CPU}, &resourceItem{}
	setGPU(limits, requests, r.md.Spec.GPUCount(), res.GPU)
	return nonEmpty(limits, requests)
}

// defaultRequests adds the engine's default cpu and memory requests
// (providers.Placement.FillRequests) where the worker sets neither a limit
// nor a request of its own: the operator copies `requests` to the pods.
func (r *renderer) defaultRequests(role string, res *resources) *resources {
	if res == nil {
		res = &resources{}
	}
	if res.Requests == nil {
		res.Requests = &resourceItem{}
	}
	limits := res.Limits
	if limits == nil {
		limits = &resourceItem{}
	}
	if limits.CPU == "" && res.Requests.CPU == "" {
		res.Requests.CPU = r.req.Placement.DefaultRequest(role, corev1.ResourceCPU)
	}
	if limits.Memory == "" && res.Requests.Memory == "" {
		res.Requests.Memory = r.req.Placement.DefaultRequest(role, corev1.ResourceMemory)
	}
	return nonEmpty(res.Limits, res.Requests)
}

func componentResources(c *hub.ComponentScalingSpec) *resources {
	limits, requests := &resourceItem{Memory: c.Memory}, &resourceItem{}
	setGPU(limits, requests, c.GPUCount(), c.GPU)
	return nonEmpty(limits, requests)
}

// setGPU sets the GPU count and, for anything but the default
// nvidia.com/gpu, the resource name the operator should request.
func setGPU(limits, requests *resourceItem, count int32, g *hub.GPUSpec) {
	if count <= 0 {
		return
	}
	n := strconv.Itoa(int(count))
	limits.GPU, requests.GPU = n, n
	if g != nil && g.Type != "" && g.Type != hub.DefaultGPUResource {
		limits.GPUType, requests.GPUType = g.Type, g.Type
	}
}

func nonEmpty(limits, requests *resourceItem) *resources {
	res := &resources{}
	if !limits.empty() {
		res.Limits = limits
	}
	if !requests.empty() {
		res.Requests = requests
	}
	if res.Limits == nil && res.Requests == nil {
		return nil
	}
	return res
}

func (r *renderer) command() []string {
	if r.mocker {
		return []string{"python3", "-m", "dynamo.mocker"}
	}
	return []string{"python3", "-m", "dynamo." + r.engine}
}

// frontendSidecar is the per-worker frontend the gateway topology routes
// to. Upstream always runs it from the vLLM runtime image, whatever the
// engine, so the capability file's vllm pin applies to it.
func (r *renderer) frontendSidecar(disagg bool) *sidecar {
	args := []string{"-m", "dynamo.frontend"}
	if !disagg {
		// The EPP already picked the pod: forward to the local engine.
		args = append(args, "--router-mode", "direct")
	}
	return &sidecar{Image: r.defaultImage(hub.EngineVLLM), Args: args, EnvFromSecret: r.hfSecret()}
}

// workerArgs builds the engine command line in upstream's order, then the
// role flags, then `engine.extraArgs` verbatim (last, so they win: the
// engines' parsers keep the last occurrence of a flag). Every string from
// the ModelDeployment is escaped for the kubelet (EscapeExpansion).
func (r *renderer) workerArgs(role string) []string {
	if r.mocker {
		args := mockerArgs(r.md)
		if role != "" {
			args = append(args, "--disaggregation-mode", role)
		}
		return args
	}
	md := r.md
	s := &md.Spec
	e := s.Engine
	if e == nil {
		e = &hub.EngineSpec{}
	}
	var args []string
	modelFlag := "--model"
	if r.engine == hub.EngineSGLang || r.engine == hub.EngineTRTLLM {
		modelFlag = "--model-path"
	}
	if s.Model.ID != "" {
		args = append(args, modelFlag, providers.EscapeExpansion(s.Model.ID))
	}
	if s.Model.ServedName != "" {
		args = append(args, "--served-model-name", providers.EscapeExpansion(s.Model.ServedName))
	}
	if e.ContextLength != nil {
		switch r.engine {
		case hub.EngineVLLM:
			args = append(args, "--max-model-len", strconv.Itoa(int(*e.ContextLength)))
		case hub.EngineSGLang:
			args = append(args, "--context-length", strconv.Itoa(int(*e.ContextLength)))
		}
	}
	if r.engine == hub.EngineVLLM || r.engine == hub.EngineSGLang {
		if hub.Bool(e.TrustRemoteCode) {
			args = append(args, "--trust-remote-code")
		}
		if p := e.EnablePrefixCaching; p != nil {
			args = append(args, r.prefixCachingFlag(*p))
		}
		if hub.Bool(e.EnforceEager) {
			args = append(args, "--enforce-eager")
		}
	}
	args = append(args, providers.LoRACapacityArgs(md)...)
	args = append(args, r.parallelArgs(role)...)
	userArgs := e.Args
	if _, ok := userArgs["connector"]; ok && r.engine == hub.EngineVLLM {
		userArgs = providers.Merge(userArgs)
		delete(userArgs, "connector")
	}
	args = append(args, providers.EscapeExpansionAll(providers.SortedArgs(userArgs))...)
	if role != "" {
		args = append(args, "--disaggregation-mode", role)
		if r.engine == hub.EngineVLLM {
			args = append(args, "--kv-transfer-config", VLLMKVTransferConfig)
		}
	}
	return append(args, providers.EscapeExpansionAll(e.ExtraArgs)...)
}

// prefixCachingFlag renders an explicit choice: upstream emits only the
// enabling flag, so `false` silently kept the engines' default (on).
func (r *renderer) prefixCachingFlag(enabled bool) string {
	switch {
	case enabled:
		return "--enable-prefix-caching"
	case r.engine == hub.EngineSGLang:
		// SGLang's prefix cache is its radix cache.
		return "--disable-radix-cache"
	default:
		return "--no-enable-prefix-caching"
	}
}

// mockerArgs are the fixed arguments of `python3 -m dynamo.mocker`.
func mockerArgs(md *hub.ModelDeployment) []string {
	name := md.Spec.Model.ServedName
	if name == "" {
		name = md.Spec.Model.ID
	}
	return []string{
		"--model-path", providers.EscapeExpansion(md.Spec.Model.ID),
		"--model-name", providers.EscapeExpansion(name),
		"--speedup-ratio", "1000.0",
		"--num-gpu-blocks-override", "4096",
		"--block-size", kvCacheBlockSize,
		"--max-num-seqs", "64",
	}
}

// workerEnv: the user's `spec.env` (upstream ignores it; values literal,
// providers.UserEnvVar), then HF_HOME for the model cache and the NIXL
// side-channel host of disaggregated vLLM, each unless the user set that
// variable. A plaintext HF_TOKEN is dropped when
// the token Secret is named, so the token comes only from the Secret.
func (r *renderer) workerEnv() []corev1.EnvVar {
	md := r.md
	secret := r.hfSecret()
	var env []corev1.EnvVar
	set := map[string]bool{}
	for _, e := range md.Spec.Env {
		set[e.Name] = true
		if secret != "" && e.Name == providers.HFTokenEnv {
			continue
		}
		env = append(env, providers.UserEnvVar(e))
	}
	if v := modelCacheVolume(md); v != nil && !set[envHFHome] {
		env = append(env, corev1.EnvVar{Name: envHFHome, Value: providers.EscapeExpansion(v.MountPath)})
	}
	if len(md.Spec.Adapters) > 0 && !set[envLoRAOn] {
		env = append(env, corev1.EnvVar{Name: envLoRAOn, Value: "true"})
	}
	if r.engine == hub.EngineVLLM && md.Spec.Mode() == hub.ModeDisaggregated && !set[envNixlSideHost] {
		env = append(env, corev1.EnvVar{Name: envNixlSideHost, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}})
	}
	return env
}

// modelCacheVolume is the first modelCache volume, nil when none.
func modelCacheVolume(md *hub.ModelDeployment) *hub.StorageVolume {
	if md.Spec.Model.Storage == nil {
		return nil
	}
	for i := range md.Spec.Model.Storage.Volumes {
		if v := &md.Spec.Model.Storage.Volumes[i]; v.Purpose == hub.PurposeModelCache {
			return v
		}
	}
	return nil
}

// volumeMounts mounts every storage volume into the workers. Dynamo's
// VolumeMount has no readOnly field (see warnIgnored).
func volumeMounts(md *hub.ModelDeployment) []volumeMount {
	if md.Spec.Model.Storage == nil {
		return nil
	}
	var mounts []volumeMount
	for _, v := range md.Spec.Model.Storage.Volumes {
		mounts = append(mounts, volumeMount{
			Name:                  v.ResolvedClaimName(md.Name),
			MountPoint:            v.MountPath,
			UseAsCompilationCache: v.Purpose == hub.PurposeCompilationCache,
		})
	}
	return mounts
}
