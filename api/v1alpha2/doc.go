// Package v1alpha2 is the airunway.ai/v1alpha2 ModelDeployment: upstream's
// v1alpha1 plus the fields its users ask for most, which upstream has not
// released yet:
//
//   - `spec.adapters[]`: LoRA adapters, exactly in the shape of upstream's
//     unmerged LoRA branch (`{name, source: hf://org/repo}`, at most 64),
//     so that a later upstream release maps to it one to one;
//   - `spec.scaling.autoscaling`: an autoscaler owns the replica count,
//     between `minReplicas` and `maxReplicas`, on one of the engine's load
//     signals;
//   - `spec.gateway.parentRef`: the model's own Gateway;
//   - `spec.placement.clusterSelector`: the clusters of a fleet that may
//     run the model, a LabelSelector over their capability files'
//     `metadata.labels` (v1alpha1 models write the same selector in the
//     annotation hub.AnnotationClusterSelector, which v1alpha2 accepts
//     too, but not beside the field).
//
// The hub has every v1alpha2 field, so v1alpha2's spec types are the
// hub's and its conversion is a copy. Conversion to and from v1alpha1
// goes through the hub: v1alpha1's conversion carries the fields it lacks
// in an annotation (v1alpha1.AnnotationV1alpha2Fields), which is what
// lets a cluster store v1alpha2 objects as v1alpha1. ClusterCapabilities
// is served only as v1alpha1.
package v1alpha2
