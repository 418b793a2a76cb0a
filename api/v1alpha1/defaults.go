package v1alpha1

import (
	"github.com/airunway-render/airunway-render/api/hub"
)

// DefaultModelDeployment applies, in place, the defaults a ModelDeployment
// gets in a cluster running upstream AI Runway: first the CRD `default:`
// markers (which the API server applies only where the parent object
// exists), then the mutating webhook's defaults. It returns true when the
// webhook's GPU default was applied, so the caller can say so.
func DefaultModelDeployment(md *ModelDeployment) (gpuDefaulted bool) {
	applyCRDDefaults(&md.Spec)
	return applyWebhookDefaults(md)
}

func applyCRDDefaults(s *ModelDeploymentSpec) {
	if s.Model.Source == "" {
		s.Model.Source = hub.SourceHuggingFace
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
		s.Serving.Mode = hub.ModeAggregated
	}
	if s.Scaling != nil {
		setInt32(&s.Scaling.Replicas, 1)
		defaultComponent(s.Scaling.Prefill)
		defaultComponent(s.Scaling.Decode)
	}
	if s.Resources != nil {
		defaultGPU(s.Resources.GPU)
	}
	if s.Model.Storage != nil {
		for i := range s.Model.Storage.Volumes {
			v := &s.Model.Storage.Volumes[i]
			if v.Purpose == "" {
				v.Purpose = hub.PurposeCustom
			}
			setBool(&v.ReadOnly, false)
		}
	}
}

func defaultComponent(c *ComponentScalingSpec) {
	if c == nil {
		return
	}
	setInt32(&c.Replicas, 1)
	defaultGPU(c.GPU)
}

func defaultGPU(g *GPUSpec) {
	if g == nil {
		return
	}
	setInt32(&g.Count, 0)
	if g.Type == "" {
		g.Type = hub.DefaultGPUResource
	}
}

func applyWebhookDefaults(md *ModelDeployment) bool {
	s := &md.Spec
	if s.Serving == nil {
		s.Serving = &ServingSpec{Mode: hub.ModeAggregated}
	}
	gpuDefaulted := false
	if s.Mode() == hub.ModeAggregated {
		if s.Scaling == nil {
			one := int32(1)
			s.Scaling = &ScalingSpec{Replicas: &one}
		}
		// Upstream gives one GPU to a GPU engine that names no resources,
		// unless the legacy spec.image is set (a custom image may be CPU-only).
		engine := s.EngineType()
		if s.Resources == nil && engine != "" && engine != hub.EngineLlamaCpp && s.Image == "" {
			one := int32(1)
			s.Resources = &ResourceSpec{GPU: &GPUSpec{Count: &one, Type: hub.DefaultGPUResource}}
			gpuDefaulted = true
		}
	}
	for _, c := range []*ComponentScalingSpec{scalingComponent(s, true), scalingComponent(s, false)} {
		if c != nil && c.GPU != nil && c.GPU.Type == "" {
			c.GPU.Type = hub.DefaultGPUResource
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
		case hub.PurposeModelCache:
			v.MountPath = hub.DefaultModelCacheMountPath
		case hub.PurposeCompilationCache:
			v.MountPath = hub.DefaultCompilationCacheMountPath
		}
	}
	if v.Size != nil {
		if v.ClaimName == "" {
			v.ClaimName = mdName + "-" + v.Name
		}
		if v.AccessMode == "" {
			v.AccessMode = hub.DefaultAccessMode
		}
	}
}

func scalingComponent(s *ModelDeploymentSpec, prefill bool) *ComponentScalingSpec {
	if s.Scaling == nil {
		return nil
	}
	if prefill {
		return s.Scaling.Prefill
	}
	return s.Scaling.Decode
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
