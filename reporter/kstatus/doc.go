// Package kstatus has no code of its own. Its tests read the statuses
// reporter.Compute writes with the libraries that read them in a cluster,
// as docs/status-reporter.md promises:
//
//   - kstatus's status.Compute, both Flux's fork
//     (github.com/fluxcd/cli-utils, what kustomize-controller's health
//     checks run) and the original (sigs.k8s.io/cli-utils), on the
//     ModelDeployment as the API server returns it;
//   - Flux's kstatus conformance checks
//     (github.com/fluxcd/pkg/runtime/conditions/check) on the same object.
//
// It is a package of its own, not a test file in reporter, so that running
// it needs no kube-apiserver (reporter's TestMain serves envtest) and so
// that these test-only modules stay out of every other test binary.
package kstatus
