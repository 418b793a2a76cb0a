// Package v1alpha1 is the served version airunway.ai/v1alpha1: the AI
// Runway ModelDeployment exactly as the upstream CRD accepts it (v0.7.0, and
// main's status.gateway.apiFormats), and the ClusterCapabilities file that
// describes one cluster.
//
// It owns what belongs to one version:
//
//	decode   -> Decode*: strict JSON decoding; unknown or mistyped fields
//	            are errors naming their path
//	default  -> DefaultModelDeployment: this version's CRD `default:`
//	            markers and the upstream mutating webhook's defaults
//	convert  -> ConvertToHub: to the renderer's form (package hub), with
//	            the deprecated fields of this version reported, each naming
//	            its replacement (`spec.image` -> `spec.engine.image`)
//
// ToHub runs all three. Its spec types are aliases of the hub's, because
// the hub's fields are v1alpha1's today; the status types are this
// version's alone, since only the status reporter writes them, to the
// cluster's stored version.
package v1alpha1
