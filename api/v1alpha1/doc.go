// Package v1alpha1 holds the input types of the renderer: the AI Runway
// ModelDeployment (airunway.ai/v1alpha1), exactly as the upstream CRD
// v0.7.0 accepts it, and the ClusterCapabilities file that describes one
// cluster.
//
// The package covers the first three stages of the pipeline:
//
//	decode   -> Decode*/strict JSON decoding: unknown or mistyped fields are
//	            errors naming their path
//	default  -> Default*: the CRD `default:` markers and the upstream mutating
//	            webhook defaults, applied in-process
//	validate -> Validate*: the upstream validating-webhook and reconciler rules
//	            that do not depend on the cluster, every problem reported
//
// Pointers mark fields whose absence means something different from their
// zero value (for example `enablePrefixCaching: false` versus no value at
// all); upstream's own Go types lose that distinction, this package keeps it.
package v1alpha1
