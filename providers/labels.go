package providers

import (
	"github.com/airunway-render/airunway-render/api/hub"
)

// Label and annotation keys on generated objects.
const (
	LabelManagedBy       = "airunway.ai/managed-by"
	LabelDeployment      = "airunway.ai/deployment"
	LabelModelSource     = "airunway.ai/model-source"
	LabelEngineType      = "airunway.ai/engine-type"
	LabelModelDeployment = "airunway.ai/model-deployment"
	ManagedByValue       = "airunway"

	// AnnotationGeneratedFrom marks an object as rendered from the named
	// ModelDeployment; objects carrying it are replaced on every run, which
	// is what makes rendering idempotent and prunes orphans.
	AnnotationGeneratedFrom = "render.airunway.ai/generated-from"

	// The renderer's decisions, written on each ModelDeployment; the status
	// reporter copies them into status.
	AnnotationEngine         = "render.airunway.ai/engine"
	AnnotationEngineReason   = "render.airunway.ai/engine-reason"
	AnnotationProvider       = "render.airunway.ai/provider"
	AnnotationProviderReason = "render.airunway.ai/provider-reason"
	// AnnotationProviderVersion is the operator release the objects were
	// rendered for, as the capability file declares it; absent for a
	// provider without an operator (vllm).
	AnnotationProviderVersion = "render.airunway.ai/provider-version"
)

// BaseLabels are the labels upstream providers put on the objects they
// create, plus `airunway.ai/model-deployment`, which the status reporter
// and the gateway's InferencePool select on.
func BaseLabels(md *hub.ModelDeployment, engine string) map[string]string {
	return map[string]string{
		LabelManagedBy:       ManagedByValue,
		LabelDeployment:      md.Name,
		LabelModelSource:     md.Spec.Model.Source,
		LabelEngineType:      engine,
		LabelModelDeployment: md.Name,
	}
}

// PodTemplateLabels returns spec.podTemplate.metadata.labels (nil-safe).
func PodTemplateLabels(md *hub.ModelDeployment) map[string]string {
	if md.Spec.PodTemplate == nil || md.Spec.PodTemplate.Metadata == nil {
		return nil
	}
	return md.Spec.PodTemplate.Metadata.Labels
}

// PodTemplateAnnotations returns spec.podTemplate.metadata.annotations.
func PodTemplateAnnotations(md *hub.ModelDeployment) map[string]string {
	if md.Spec.PodTemplate == nil || md.Spec.PodTemplate.Metadata == nil {
		return nil
	}
	return md.Spec.PodTemplate.Metadata.Annotations
}

// Merge returns a new map with the maps' entries, later maps winning.
func Merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// GeneratedAnnotations are the annotations every generated object carries.
func GeneratedAnnotations(md *hub.ModelDeployment, extra map[string]string) map[string]string {
	return Merge(extra, map[string]string{AnnotationGeneratedFrom: md.Name})
}
