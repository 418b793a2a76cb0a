package hub

import (
	"fmt"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/airunway-render/airunway-render/diag"
)

// The rules of the fields v1alpha2 adds. They are the hub's, not
// v1alpha2's: a v1alpha1 object read from a cluster carries the same fields
// in its conversion annotation, and must meet the same rules.

// validateAdapters applies upstream's LoRA branch (at most 64, unique
// names, `hf://` sources, not with llama.cpp) and the renderer's own rule
// that an adapter is a DNS label distinct from the base model's name, so
// that every provider can name objects, directories and routes after it.
func validateAdapters(s *ModelDeploymentSpec, l *diag.List) {
	if len(s.Adapters) == 0 {
		return
	}
	if len(s.Adapters) > MaxAdapters {
		l.Errorf("spec.adapters", "has %d adapters; at most %d are allowed", len(s.Adapters), MaxAdapters)
	}
	if s.EngineType() == EngineLlamaCpp {
		l.Errorf("spec.adapters", "LoRA adapters are not supported with the %q engine: use %q or %q", EngineLlamaCpp, EngineVLLM, EngineSGLang)
	}
	seen := map[string]int{}
	for i, a := range s.Adapters {
		at := fmt.Sprintf("spec.adapters[%d]", i)
		switch msgs := utilvalidation.IsDNS1123Label(a.Name); {
		case a.Name == "":
			l.Errorf(at+".name", "must be set: it is the model name clients request the adapter by")
		case len(msgs) > 0:
			l.Errorf(at+".name", "%q must be a DNS label (lowercase letters, digits and '-', at most 63 characters): %s", a.Name, msgs[0])
		case a.Name == s.Model.ServedName || a.Name == s.Model.ID:
			l.Errorf(at+".name", "%q is the base model's name: an adapter needs a name of its own, or requests for the base model would reach it", a.Name)
		}
		if first, dup := seen[a.Name]; dup && a.Name != "" {
			l.Errorf(at+".name", "%q is also the name of `spec.adapters[%d]`: adapter names must be unique", a.Name, first)
		} else {
			seen[a.Name] = i
		}
		if !AdapterSourceRe.MatchString(a.Source) {
			l.Errorf(at+".source", "%q must be a Hugging Face repository as hf://<org>/<repo> (for example \"hf://my-org/my-lora\")", a.Source)
		}
	}
}

// validateAutoscaling checks the ranges of `spec.scaling.autoscaling`
// and that no replica count the autoscaler owns is written beside it.
// Whether a provider can scale to zero is the provider's check.
func validateAutoscaling(s *ModelDeploymentSpec, l *diag.List) {
	a := s.Autoscaling()
	if a == nil {
		return
	}
	const at = "spec.scaling.autoscaling"
	switch {
	case a.MaxReplicas == nil:
		l.Errorf(at+".maxReplicas", "must be set: the most replicas the autoscaler may start")
	case *a.MaxReplicas < 1 || *a.MaxReplicas > MaxReplicas:
		l.Errorf(at+".maxReplicas", "must be between 1 and %d, got %d", MaxReplicas, *a.MaxReplicas)
	}
	if a.MinReplicas != nil {
		checkRange(l, at+".minReplicas", a.MinReplicas, MaxReplicas)
		if a.MaxReplicas != nil && *a.MinReplicas > *a.MaxReplicas {
			l.Errorf(at+".minReplicas", "%d is more than `maxReplicas` %d", *a.MinReplicas, *a.MaxReplicas)
		}
	}
	checkEnum(l, at+".metric", a.Metric, AutoscalingMetrics...)
	switch {
	case a.Target == nil:
		l.Errorf(at+".target", "must be set: the value of %q per replica the autoscaler keeps to", a.Metric)
	case *a.Target < 1:
		l.Errorf(at+".target", "must be at least 1, got %d", *a.Target)
	case a.Metric == MetricKVCacheUsage && *a.Target > 100:
		l.Errorf(at+".target", "is a percentage of the KV cache for %q and must be at most 100, got %d", MetricKVCacheUsage, *a.Target)
	}
	if d := a.ScaleDownDelaySeconds; d != nil && (*d < 0 || *d > MaxScaleDownDelaySeconds) {
		l.Errorf(at+".scaleDownDelaySeconds", "must be between 0 and %d, got %d", MaxScaleDownDelaySeconds, *d)
	}
	const owned = "must not be set with `spec.scaling.autoscaling`: the autoscaler owns the replica count, and a count in Git would be reverted by it or would revert it on every sync"
	if s.Scaling.Replicas != nil {
		l.Errorf("spec.scaling.replicas", owned)
	}
	if d := s.Scaling.Decode; s.Mode() == ModeDisaggregated && d != nil && d.Replicas != nil {
		l.Errorf("spec.scaling.decode.replicas", "%s (disaggregated, it scales the decode workers)", owned)
	}
}

// validateGatewayRef checks the model's own Gateway reference.
func validateGatewayRef(s *ModelDeploymentSpec, l *diag.List) {
	ref := s.GatewayParentRef()
	if ref == nil {
		return
	}
	const at = "spec.gateway.parentRef"
	if ref.Name == "" {
		l.Errorf(at+".name", "must be set: the name of the Gateway that serves this model")
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(ref.Name) {
		if ref.Name != "" {
			l.Errorf(at+".name", "%q is not a valid Gateway name: %s", ref.Name, msg)
		}
	}
	if ref.Namespace != "" {
		for _, msg := range utilvalidation.IsDNS1123Label(ref.Namespace) {
			l.Errorf(at+".namespace", "%q is not a valid namespace: %s", ref.Namespace, msg)
		}
	}
	if g := s.Gateway; g.Enabled != nil && !*g.Enabled {
		l.Warnf(diag.IgnoredField, at, "is ignored: `spec.gateway.enabled` is false")
	}
	if s.Gateway.HTTPRouteRef != "" {
		l.Warnf(diag.IgnoredField, at, "is ignored: `spec.gateway.httpRouteRef` names an HTTPRoute of your own, which names its own Gateway")
	}
}
