package providers

import (
	"github.com/airunway-render/airunway-render/api/hub"
)

// BaseLabels are the labels upstream providers put on the objects they
// create, plus `airunway.ai/model-deployment`, which the status reporter
// and the gateway's InferencePool select on.
func BaseLabels(md *hub.ModelDeployment, engine string) map[string]string {
	return map[string]string{
		hub.LabelManagedBy:       hub.ManagedByValue,
		hub.LabelDeployment:      md.Name,
		hub.LabelModelSource:     md.Spec.Model.Source,
		hub.LabelEngineType:      engine,
		hub.LabelModelDeployment: md.Name,
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
	return Merge(extra, map[string]string{hub.AnnotationGeneratedFrom: md.Name})
}

// GeneratedMeta is the `metadata` of an object rendered as a map: name, the
// model's namespace when it has one, the base labels and the generated
// annotations.
func GeneratedMeta(md *hub.ModelDeployment, engine, name string) map[string]any {
	meta := map[string]any{
		"name":        name,
		"labels":      StringMap(BaseLabels(md, engine)),
		"annotations": StringMap(GeneratedAnnotations(md, nil)),
	}
	if md.Namespace != "" {
		meta["namespace"] = md.Namespace
	}
	return meta
}

// StringMap is m as the JSON-shaped map an Object holds.
func StringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
