package hub

import "github.com/airunway-render/airunway-render/diag"

// Default applies, in place, the defaults a ModelDeployment gets in a
// cluster: first the CRD `default:` markers (which the API server applies
// only where the parent object exists), then upstream's mutating webhook.
// Every served version has the same defaults for the fields it shares
// with upstream's v1alpha1; v1alpha2 adds the autoscaling defaults, and an
// autoscaled model gets no replica count: the autoscaler owns it. It
// returns true when the webhook's GPU default was applied, so the caller
// can say so.
func (md *ModelDeployment) Default() (gpuDefaulted bool) {
	ApplyCRDDefaults(&md.Spec)
	return applyWebhookDefaults(md)
}

// Defaulted applies Default to a converted ModelDeployment and adds to its
// conversion's problems the one default worth saying: upstream's GPU
// default. Every served version's ToHub ends with it.
func Defaulted(md *ModelDeployment, problems diag.List) (*ModelDeployment, diag.List) {
	if md.Default() {
		problems.Infof("spec.resources.gpu", "defaulted to 1 %s, as upstream's admission webhook does for a GPU engine without resources", DefaultGPUResource)
	}
	return md, problems
}

// Defaults of `spec.scaling.autoscaling` (v1alpha2): one replica at least,
// queue depth as the load signal, and five minutes of lower load before a
// replica goes (KEDA's cooldownPeriod and the HPA's scale-down
// stabilization window both default to 300 s).
const (
	DefaultMinReplicas           = 1
	DefaultScaleDownDelaySeconds = 300
)

// ApplyCRDDefaults applies only the CRD `default:` markers, as the API
// server does on decoding; Default applies them and the webhook's.
func ApplyCRDDefaults(s *ModelDeploymentSpec) {
	if s.Model.Source == "" {
		s.Model.Source = SourceHuggingFace
	}
	if s.Engine != nil {
		// Only where the engine object exists: an absent engine keeps
		// enablePrefixCaching absent, which is what lets providers tell
		// "not said" from an explicit false.
		setBool(&s.Engine.EnablePrefixCaching, true)
		setBool(&s.Engine.EnforceEager, false)
		setBool(&s.Engine.TrustRemoteCode, false)
	}
	if s.Serving != nil && s.Serving.Mode == "" {
		s.Serving.Mode = ModeAggregated
	}
	if s.Scaling != nil {
		a := s.Scaling.Autoscaling
		if a == nil {
			setInt32(&s.Scaling.Replicas, 1)
		} else {
			setInt32(&a.MinReplicas, DefaultMinReplicas)
			setInt32(&a.ScaleDownDelaySeconds, DefaultScaleDownDelaySeconds)
			if a.Metric == "" {
				a.Metric = MetricQueueDepth
			}
		}
		defaultComponent(s.Scaling.Prefill, false)
		// Disaggregated, the autoscaler owns the decode workers' count.
		defaultComponent(s.Scaling.Decode, a != nil)
	}
	if s.Resources != nil {
		defaultGPU(s.Resources.GPU)
	}
	if s.Model.Storage != nil {
		for i := range s.Model.Storage.Volumes {
			v := &s.Model.Storage.Volumes[i]
			if v.Purpose == "" {
				v.Purpose = PurposeCustom
			}
			setBool(&v.ReadOnly, false)
		}
	}
}

func defaultComponent(c *ComponentScalingSpec, autoscaled bool) {
	if c == nil {
		return
	}
	if !autoscaled {
		setInt32(&c.Replicas, 1)
	}
	defaultGPU(c.GPU)
}

func defaultGPU(g *GPUSpec) {
	if g == nil {
		return
	}
	setInt32(&g.Count, 0)
	if g.Type == "" {
		g.Type = DefaultGPUResource
	}
}

func applyWebhookDefaults(md *ModelDeployment) bool {
	s := &md.Spec
	if s.Serving == nil {
		s.Serving = &ServingSpec{Mode: ModeAggregated}
	}
	gpuDefaulted := false
	if s.Mode() == ModeAggregated {
		if s.Scaling == nil {
			one := int32(1)
			s.Scaling = &ScalingSpec{Replicas: &one}
		}
		// Upstream gives one GPU to a GPU engine that names no resources,
		// unless the legacy spec.image is set (a custom image may be CPU-only).
		engine := s.EngineType()
		if s.Resources == nil && engine != "" && engine != EngineLlamaCpp && s.Image == "" {
			one := int32(1)
			s.Resources = &ResourceSpec{GPU: &GPUSpec{Count: &one, Type: DefaultGPUResource}}
			gpuDefaulted = true
		}
	}
	if s.Scaling != nil {
		for _, c := range []*ComponentScalingSpec{s.Scaling.Prefill, s.Scaling.Decode} {
			if c != nil && c.GPU != nil && c.GPU.Type == "" {
				c.GPU.Type = DefaultGPUResource
			}
		}
	}
	if s.Model.Storage != nil {
		for i := range s.Model.Storage.Volumes {
			defaultVolume(md.Name, &s.Model.Storage.Volumes[i])
		}
	}
	return gpuDefaulted
}

func defaultVolume(mdName string, v *StorageVolume) {
	if v.MountPath == "" {
		switch v.Purpose {
		case PurposeModelCache:
			v.MountPath = DefaultModelCacheMountPath
		case PurposeCompilationCache:
			v.MountPath = DefaultCompilationCacheMountPath
		}
	}
	if v.Size != nil {
		if v.ClaimName == "" {
			v.ClaimName = mdName + "-" + v.Name
		}
		if v.AccessMode == "" {
			v.AccessMode = DefaultAccessMode
		}
	}
}

func setBool(p **bool, v bool) {
	if *p == nil {
		*p = &v
	}
}

func setInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}
