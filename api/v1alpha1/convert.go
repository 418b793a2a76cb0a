package v1alpha1

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// ToHub decodes, defaults and converts a v1alpha1 ModelDeployment: the
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
	if DefaultModelDeployment(md) {
		l.Infof("spec.resources.gpu", "defaulted to 1 %s, as upstream's admission webhook does for a GPU engine without resources", hub.DefaultGPUResource)
	}
	out, cl := md.ConvertToHub()
	return out, append(l, cl...)
}

// ConvertToHub converts a defaulted ModelDeployment. The legacy
// `spec.image` is the one field of v1alpha1 with a replacement: it is
// deprecated, and it must agree with `spec.engine.image` when both are
// set. The hub keeps it, because upstream's defaults read it (it
// suppresses the webhook's GPU default).
func (in *ModelDeployment) ConvertToHub() (*hub.ModelDeployment, diag.List) {
	var l diag.List
	s := &in.Spec
	switch {
	case s.Image == "":
	case s.Engine != nil && s.Engine.Image != "" && s.Image != s.Engine.Image:
		l.Errorf("spec.engine.image", "%q conflicts with `spec.image` %q: when both are set they must be equal (prefer `spec.engine.image` and remove the legacy `spec.image`)", s.Engine.Image, s.Image)
	default:
		l.Warnf(diag.DeprecatedField, "spec.image", "is deprecated: set the image as `spec.engine.image` (`airunway-render migrate` moves it)")
	}
	return &hub.ModelDeployment{TypeMeta: in.TypeMeta, ObjectMeta: in.ObjectMeta, Spec: in.Spec}, l
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

// ConvertToHub converts a ClusterCapabilities; v1alpha1 has no deprecated
// capability fields.
func (in *ClusterCapabilities) ConvertToHub() *hub.ClusterCapabilities {
	return &hub.ClusterCapabilities{TypeMeta: in.TypeMeta, ObjectMeta: in.ObjectMeta, Spec: in.Spec}
}
