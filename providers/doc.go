// Package providers is the contract between the render engine and the
// per-provider packages under providers/<name>/, plus what those packages
// share: the upstream labels, engine-argument rules, environment handling,
// and the `spec.provider.overrides` deep merge.
//
// A provider receives a Request (a defaulted, validated ModelDeployment, the
// engine already chosen, and its entry of the capability file) and returns
// plain objects (map[string]any). It never sees the rest of the input, never
// reads the environment, and never sets ownerReferences: rendering is a pure
// function of the Request.
package providers
