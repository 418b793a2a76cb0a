package v1alpha2

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/diag"
)

// DecodeModelDeployment strictly decodes a v1alpha2 ModelDeployment
// (hub.DecodeStrict). The conversion annotation of v1alpha1 has no place
// on a v1alpha2 object, whose fields are in `spec`: it is refused rather
// than silently dropped or preferred.
func DecodeModelDeployment(data []byte) (*ModelDeployment, diag.List) {
	md := &ModelDeployment{}
	problems := hub.DecodeStrict(data, md, hub.KindModelDeployment)
	hub.PruneNullOverrides(md.Spec.Provider)
	if _, ok := md.Annotations[v1alpha1.AnnotationV1alpha2Fields]; ok {
		problems.Errorf("metadata.annotations."+v1alpha1.AnnotationV1alpha2Fields, "must not be set on an %s object: conversion to %s writes it, and its fields belong in `spec`", APIVersion, v1alpha1.APIVersion)
	}
	return md, problems
}

// ToHub decodes, converts and defaults a v1alpha2 ModelDeployment, as
// v1alpha1.ToHub does for v1alpha1.
func ToHub(data []byte) (*hub.ModelDeployment, diag.List) {
	md, l := DecodeModelDeployment(data)
	if l.HasErrors() {
		return nil, l
	}
	out, cl := md.ConvertToHub()
	return hub.Defaulted(out, append(l, cl...))
}

// ConvertToHub converts a ModelDeployment; it neither defaults nor
// validates. The legacy `spec.image` is still served, deprecated, as in
// v1alpha1.
func (in *ModelDeployment) ConvertToHub() (*hub.ModelDeployment, diag.List) {
	l := hub.CheckLegacyImage(&in.Spec)
	return &hub.ModelDeployment{TypeMeta: in.TypeMeta, ObjectMeta: in.ObjectMeta, Spec: in.Spec}, l
}

// ConvertFromHub converts the hub to v1alpha2; the hub is not changed.
func ConvertFromHub(in *hub.ModelDeployment) *ModelDeployment {
	out := &ModelDeployment{TypeMeta: in.TypeMeta, ObjectMeta: in.ObjectMeta, Spec: in.Spec}
	out.APIVersion = APIVersion
	return out
}
