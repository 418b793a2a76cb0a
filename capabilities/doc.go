// Package capabilities loads and checks the ClusterCapabilities file, the
// Git-held description of one cluster, and owns the facts that go with it:
//
//   - the built-in capabilities of the five providers (engines, serving modes,
//     GPU/CPU support, CEL selection rules), taken from the upstream AI Runway
//     provider registrations;
//   - the compatibility matrix: which operator releases of each provider the
//     renderer supports (published in docs/capability-file.md by `make docs`
//     from this package, never by hand);
//   - the embedded default capability file used when none is given.
//
// A capability file is resolved once per run into a Resolved value, which the
// renderer reads: every provider with its effective engines and compiled
// selection rules.
package capabilities
