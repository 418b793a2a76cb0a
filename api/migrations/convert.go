package migrations

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
	"github.com/airunway-render/airunway-render/internal/manifest"
)

// laterPaths are the fields v1alpha2 has and v1alpha1 carries in its
// conversion annotation, as paths below `spec`.
var laterPaths = [][]string{{"adapters"}, {"scaling", "autoscaling"}, {"gateway", "parentRef"}, {"placement"}}

// Convert rewrites one ModelDeployment as the served version to, in place,
// and says what changed; an object already in that version is left alone.
// Up to v1alpha2, the fields in v1alpha1's conversion annotation move into
// `spec`; down to v1alpha1, the fields v1alpha1 lacks move into the
// annotation. The rest of the YAML is untouched. The conversion is refused
// when the model would mean something else afterwards, which the
// round-trip tests say never happens; the check is the same as the
// migrations'.
func Convert(obj *yaml.RNode, to string) ([]string, error) {
	from := obj.GetApiVersion()
	if from == to {
		return nil, nil
	}
	js, l := manifest.ObjectJSON(obj)
	if l.HasErrors() {
		return nil, fmt.Errorf("cannot read the object: %s", l[0].Message)
	}
	var changes []string
	var err error
	switch {
	case from == v1alpha1.APIVersion && to == v1alpha2.APIVersion:
		changes, err = up(obj, js)
	case from == v1alpha2.APIVersion && to == v1alpha1.APIVersion:
		changes, err = down(obj, js)
	default:
		return nil, fmt.Errorf("cannot convert %q to %q: conversions are between %q and %q", from, to, v1alpha1.APIVersion, v1alpha2.APIVersion)
	}
	if err != nil {
		return nil, err
	}
	before, ok := specOf(js, toHubOf(from))
	after, ok2 := effectiveSpec(obj, toHubOf(to))
	if ok && ok2 {
		if diffs := specDifferences(before, after); len(diffs) > 0 {
			return nil, fmt.Errorf("not converted to %s: the model would change: %s", to, strings.Join(diffs, ", "))
		}
	}
	return changes, nil
}

func toHubOf(apiVersion string) ToHub {
	if apiVersion == v1alpha1.APIVersion {
		return v1alpha1.ToHub
	}
	return v1alpha2.ToHub
}

// up converts v1alpha1 to v1alpha2: the annotation's fields, as v1alpha1's
// conversion reads them, go into `spec`.
func up(obj *yaml.RNode, js []byte) ([]string, error) {
	changes := []string{fmt.Sprintf("converted to %s", v1alpha2.APIVersion)}
	obj.SetApiVersion(v1alpha2.APIVersion)
	if _, ok := obj.GetAnnotations()[v1alpha1.AnnotationV1alpha2Fields]; !ok {
		return changes, nil
	}
	md, l := v1alpha1.DecodeModelDeployment(js)
	if l.HasErrors() {
		return nil, fmt.Errorf("cannot convert: %s", l[0].Message)
	}
	h, l := md.ConvertToHub()
	if l.HasErrors() {
		return nil, fmt.Errorf("cannot convert: %s", l[0].Message)
	}
	if _, err := obj.Pipe(yaml.ClearAnnotation(v1alpha1.AnnotationV1alpha2Fields)); err != nil {
		return nil, err
	}
	if a := obj.GetAnnotations(); len(a) == 0 {
		if _, err := obj.Pipe(yaml.Lookup("metadata"), yaml.Clear("annotations")); err != nil {
			return nil, err
		}
	}
	values := map[string]any{}
	if len(h.Spec.Adapters) > 0 {
		values["adapters"] = h.Spec.Adapters
	}
	if a := h.Spec.Autoscaling(); a != nil {
		values["scaling.autoscaling"] = a
		// The autoscaler owns the count, which v1alpha1 storage defaulted
		// (as v1alpha1's conversion drops it).
		if h.Spec.Mode() == hub.ModeDisaggregated {
			if err := clearField(obj, []string{"spec", "scaling", "decode"}, "replicas"); err != nil {
				return nil, err
			}
		}
		if err := clearField(obj, []string{"spec", "scaling"}, "replicas"); err != nil {
			return nil, err
		}
	}
	if ref := h.Spec.GatewayParentRef(); ref != nil {
		values["gateway.parentRef"] = ref
	}
	if p := h.Spec.Placement; p != nil {
		values["placement"] = p
	}
	for _, path := range laterPaths {
		v, ok := values[strings.Join(path, ".")]
		if !ok {
			continue
		}
		node, err := nodeOf(v)
		if err != nil {
			return nil, err
		}
		if err := obj.SetMapField(node, append([]string{"spec"}, path...)...); err != nil {
			return nil, err
		}
		changes = append(changes, fmt.Sprintf("moved `spec.%s` out of annotation %s", strings.Join(path, "."), v1alpha1.AnnotationV1alpha2Fields))
	}
	return changes, nil
}

// down converts v1alpha2 to v1alpha1: the fields v1alpha1 lacks leave
// `spec` for the annotation, written as v1alpha1's conversion writes it.
func down(obj *yaml.RNode, js []byte) ([]string, error) {
	md, l := v1alpha2.DecodeModelDeployment(js)
	if l.HasErrors() {
		return nil, fmt.Errorf("cannot convert: %s", l[0].Message)
	}
	h, l := md.ConvertToHub()
	if l.HasErrors() {
		return nil, fmt.Errorf("cannot convert: %s", l[0].Message)
	}
	changes := []string{fmt.Sprintf("converted to %s", v1alpha1.APIVersion)}
	obj.SetApiVersion(v1alpha1.APIVersion)
	for _, path := range laterPaths {
		full := append([]string{"spec"}, path...)
		if n, _ := obj.Pipe(yaml.Lookup(full...)); n == nil {
			continue
		}
		if err := clearField(obj, full[:len(full)-1], full[len(full)-1]); err != nil {
			return nil, err
		}
		changes = append(changes, fmt.Sprintf("moved `spec.%s` into annotation %s", strings.Join(path, "."), v1alpha1.AnnotationV1alpha2Fields))
	}
	if raw, ok := v1alpha1.ConvertFromHub(h).Annotations[v1alpha1.AnnotationV1alpha2Fields]; ok {
		if err := obj.PipeE(yaml.SetAnnotation(v1alpha1.AnnotationV1alpha2Fields, raw)); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// clearField removes field from the mapping at path, and the mappings
// that become empty on the way up, below `spec`.
func clearField(obj *yaml.RNode, path []string, field string) error {
	parent, err := obj.Pipe(yaml.Lookup(path...))
	if err != nil || parent == nil || parent.YNode().Kind != yaml.MappingNode {
		return err
	}
	if _, err := parent.Pipe(yaml.Clear(field)); err != nil {
		return err
	}
	if len(path) > 1 && len(parent.YNode().Content) == 0 {
		return clearField(obj, path[:len(path)-1], path[len(path)-1])
	}
	return nil
}

// nodeOf turns a value into block-style YAML.
func nodeOf(v any) (*yaml.RNode, error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	y, err := sigsyaml.JSONToYAML(js)
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(y))
}
