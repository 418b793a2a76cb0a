// Package kubefeatures knows which Kubernetes releases accept the objects
// the renderer writes. Most of what it renders has been GA for years (apps/v1,
// batch/v1, rbac/v1, core/v1); a few fields are younger, and on an older API
// server they are refused or, worse, silently dropped (a gRPC probe behind a
// disabled feature gate vanishes from the pod). Features lists those fields
// with the first release that keeps them by default; Scan finds them in an
// object.
//
// The providers and the gateway declare which features their objects use
// (package capabilities); the compatibility matrix turns that into the
// oldest Kubernetes release per provider, and a test scans every golden
// output to hold the declarations true and tight.
//
// Sources: the Kubernetes feature-gate reference (StartupProbe,
// ServiceAppProtocol, GRPCContainerProbe, ReadWriteOncePod,
// DynamicResourceAllocation) and the
// Kubernetes release notes of the releases named.
package kubefeatures
