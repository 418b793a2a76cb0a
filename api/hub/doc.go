// Package hub holds the renderer's own form of its inputs: the
// ModelDeployment and the ClusterCapabilities file as every stage after
// decoding reads them, whatever served version they were written in.
//
// The pipeline is
//
//	decode   -> a served version's package (today only v1alpha1) decodes
//	            strictly, applies that version's defaults and converts
//	            to the hub, reporting its deprecated fields
//	validate -> ValidateModelDeployment: upstream's webhook and reconciler
//	            rules that need no cluster, every problem reported
//	select, place, render, emit -> packages render and providers
//
// The hub holds every field a served version can say. While v1alpha1 is
// the only served version the two have the same fields, including the
// legacy `spec.image`, which the hub keeps because upstream's defaults read
// it. A new version adds a package beside v1alpha1 with its own types and
// conversion (package versions lists them); the renderer does not change.
//
// Pointers mark fields whose absence means something different from their
// zero value (for example `enablePrefixCaching: false` versus no value at
// all); upstream's own Go types lose that distinction, this package keeps
// it. limits.go bounds every input before it is decoded, in any version;
// quantity.go bounds every resource quantity read from an input before it
// is parsed (ParseQuantity, and CheckQuantities for the quantities a
// converter would parse), so that no stage meets one whose exponent or
// digits cost minutes, or whose value overflows int64.
package hub
