package v1alpha1

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// AnnotationV1alpha2Fields carries, on a v1alpha1 object, the fields of a
// later served version that v1alpha1 has no place for, as JSON in that
// version's shape: `{"adapters": [...], "scaling": {"autoscaling": {...}},
// "gateway": {"parentRef": {...}}, "placement": {...}}`. Conversion to
// v1alpha1 writes it and conversion back reads it, so an object stored as
// v1alpha1 in a cluster loses nothing; it is machine-written, not for
// authors.
const AnnotationV1alpha2Fields = "airunway.ai/v1alpha2-fields"

// laterFields are the fields v1alpha1 lacks, in the shape of the
// annotation.
type laterFields struct {
	Adapters []hub.Adapter `json:"adapters,omitempty"`
	Scaling  *laterScaling `json:"scaling,omitempty"`
	Gateway  *laterGateway `json:"gateway,omitempty"`
	// Placement is carried whole: an empty `placement: {}` comes back as
	// it was written.
	Placement *hub.PlacementSpec `json:"placement,omitempty"`
}

type laterScaling struct {
	Autoscaling *hub.AutoscalingSpec `json:"autoscaling,omitempty"`
}

type laterGateway struct {
	ParentRef *hub.GatewayRef `json:"parentRef,omitempty"`
}

// ToHub decodes, converts and defaults a v1alpha1 ModelDeployment: the
// whole path from this version's JSON to the hub the renderer reads. Its
// problems include the deprecated fields of v1alpha1, each naming the
// replacement. The result is nil only when decoding failed: after a
// conversion error the object is still returned, so that validation can
// report its other problems in the same run.
func ToHub(data []byte) (*hub.ModelDeployment, diag.List) {
	md, l := DecodeModelDeployment(data)
	if l.HasErrors() {
		return nil, l
	}
	out, cl := md.ConvertToHub()
	return hub.Defaulted(out, append(l, cl...))
}

// DefaultModelDeployment applies, in place, the defaults a v1alpha1
// ModelDeployment gets in a cluster (hub.ModelDeployment.Default); it
// returns true when upstream's webhook GPU default was applied.
func DefaultModelDeployment(md *ModelDeployment) (gpuDefaulted bool) {
	h, _ := md.ConvertToHub()
	gpuDefaulted = h.Default()
	typeMeta := md.TypeMeta
	*md = *ConvertFromHub(h)
	md.TypeMeta = typeMeta
	return gpuDefaulted
}

// ConvertToHub converts a ModelDeployment, reading the fields of later
// versions back from AnnotationV1alpha2Fields. The legacy `spec.image` is
// deprecated (hub.CheckLegacyImage). It neither defaults nor validates.
func (in *ModelDeployment) ConvertToHub() (*hub.ModelDeployment, diag.List) {
	s := &in.Spec
	out := &hub.ModelDeployment{TypeMeta: in.TypeMeta, ObjectMeta: in.ObjectMeta, Spec: hub.ModelDeploymentSpec{
		Model: s.Model, Provider: s.Provider, Engine: s.Engine, Serving: s.Serving, Resources: s.Resources,
		Image: s.Image, Env: s.Env, PodTemplate: s.PodTemplate, Secrets: s.Secrets,
		NodeSelector: s.NodeSelector, Tolerations: s.Tolerations,
	}}
	l := hub.CheckLegacyImage(&out.Spec)
	if sc := s.Scaling; sc != nil {
		out.Spec.Scaling = &hub.ScalingSpec{Replicas: sc.Replicas, Prefill: sc.Prefill, Decode: sc.Decode}
	}
	if g := s.Gateway; g != nil {
		out.Spec.Gateway = &hub.GatewaySpec{Enabled: g.Enabled, ModelName: g.ModelName, HTTPRouteRef: g.HTTPRouteRef}
	}
	raw, ok := in.Annotations[AnnotationV1alpha2Fields]
	if !ok {
		return out, l
	}
	out.Annotations = withoutAnnotation(in.Annotations, AnnotationV1alpha2Fields)
	var later laterFields
	if problems := hub.DecodeStrict([]byte(raw), &later, "the annotation"); problems.HasErrors() {
		l.Errorf("metadata.annotations."+AnnotationV1alpha2Fields, "must hold the fields of airunway.ai/v1alpha2 that v1alpha1 lacks, as JSON written by conversion: %s", problems[0].Message)
		return out, l
	}
	restoreLaterFields(&out.Spec, &later)
	return out, l
}

// restoreLaterFields puts the annotation's fields back into the spec. A
// v1alpha1 object stored in a cluster has its CRD's `replicas: 1` defaults,
// which v1alpha2 does not give an autoscaled model: the autoscaler owns the
// count, so the default is dropped again.
func restoreLaterFields(s *hub.ModelDeploymentSpec, later *laterFields) {
	s.Adapters = later.Adapters
	if later.Scaling != nil && later.Scaling.Autoscaling != nil {
		if s.Scaling == nil {
			s.Scaling = &hub.ScalingSpec{}
		}
		s.Scaling.Autoscaling = later.Scaling.Autoscaling
		s.Scaling.Replicas = nil
		if s.Mode() == hub.ModeDisaggregated && s.Scaling.Decode != nil {
			s.Scaling.Decode.Replicas = nil
		}
	}
	if later.Gateway != nil && later.Gateway.ParentRef != nil {
		if s.Gateway == nil {
			s.Gateway = &hub.GatewaySpec{}
		}
		s.Gateway.ParentRef = later.Gateway.ParentRef
	}
	s.Placement = later.Placement
}

// ConvertFromHub converts the hub to v1alpha1, writing the fields v1alpha1
// lacks into AnnotationV1alpha2Fields (and removing a stale one when there
// are none). It neither defaults nor validates; the hub is not changed.
func ConvertFromHub(in *hub.ModelDeployment) *ModelDeployment {
	s := &in.Spec
	out := &ModelDeployment{TypeMeta: in.TypeMeta, ObjectMeta: in.ObjectMeta, Spec: ModelDeploymentSpec{
		Model: s.Model, Provider: s.Provider, Engine: s.Engine, Serving: s.Serving, Resources: s.Resources,
		Image: s.Image, Env: s.Env, PodTemplate: s.PodTemplate, Secrets: s.Secrets,
		NodeSelector: s.NodeSelector, Tolerations: s.Tolerations,
	}}
	out.APIVersion = APIVersion
	var later laterFields
	later.Adapters = s.Adapters
	later.Placement = s.Placement
	if sc := s.Scaling; sc != nil {
		out.Spec.Scaling = &ScalingSpec{Replicas: sc.Replicas, Prefill: sc.Prefill, Decode: sc.Decode}
		if sc.Autoscaling != nil {
			later.Scaling = &laterScaling{Autoscaling: sc.Autoscaling}
		}
	}
	if g := s.Gateway; g != nil {
		out.Spec.Gateway = &GatewaySpec{Enabled: g.Enabled, ModelName: g.ModelName, HTTPRouteRef: g.HTTPRouteRef}
		if g.ParentRef != nil {
			later.Gateway = &laterGateway{ParentRef: g.ParentRef}
		}
	}
	out.Annotations = withoutAnnotation(in.Annotations, AnnotationV1alpha2Fields)
	if later.Adapters != nil || later.Scaling != nil || later.Gateway != nil || later.Placement != nil {
		raw, err := json.Marshal(later)
		if err != nil {
			panic(err) // plain structs of strings and integers always marshal
		}
		out.Annotations = maps.Clone(out.Annotations)
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[AnnotationV1alpha2Fields] = string(bytes.TrimSpace(raw))
	}
	return out
}

// withoutAnnotation returns a copy of annotations without key, nil when
// nothing is left, so that converting never writes into the input's map.
func withoutAnnotation(annotations map[string]string, key string) map[string]string {
	if _, ok := annotations[key]; !ok {
		return annotations
	}
	out := maps.Clone(annotations)
	delete(out, key)
	if len(out) == 0 {
		return nil
	}
	return out
}

// CapabilitiesToHub decodes and converts a v1alpha1 ClusterCapabilities;
// the result is nil when decoding failed.
func CapabilitiesToHub(data []byte) (*hub.ClusterCapabilities, diag.List) {
	c, l := DecodeClusterCapabilities(data)
	if l.HasErrors() {
		return nil, l
	}
	return c.ConvertToHub(), l
}

// ModelCatalogToHub decodes and converts a v1alpha1 ModelCatalog; the
// result is nil when decoding failed.
func ModelCatalogToHub(data []byte) (*hub.ModelCatalog, diag.List) {
	c, l := DecodeModelCatalog(data)
	if l.HasErrors() {
		return nil, l
	}
	return &hub.ModelCatalog{TypeMeta: c.TypeMeta, ObjectMeta: c.ObjectMeta, Spec: c.Spec}, l
}

// ConvertToHub converts a ClusterCapabilities; v1alpha1 has no deprecated
// capability fields.
func (in *ClusterCapabilities) ConvertToHub() *hub.ClusterCapabilities {
	return &hub.ClusterCapabilities{TypeMeta: in.TypeMeta, ObjectMeta: in.ObjectMeta, Spec: in.Spec}
}
