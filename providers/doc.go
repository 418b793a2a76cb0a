// Package providers is the contract between the render engine and the
// per-provider packages under providers/<name>/, plus what those packages
// share: the upstream labels, engine-argument rules, environment handling,
// the escaping that keeps the user's strings literal in a container
// (EscapeExpansion: the kubelet expands `$(VAR)` in command, args and env
// values, and the Hugging Face token is in that environment), and the
// `spec.provider.overrides` deep merge.
//
// A provider receives a Request (a defaulted, validated ModelDeployment, the
// engine already chosen, and its entry of the capability file) and returns
// plain objects (map[string]any). It never sees the rest of the input, never
// reads the environment, and never sets ownerReferences: rendering is a pure
// function of the Request.
package providers
