// Package schemacheck checks rendered Kubernetes objects the way the API
// server would, so tests can prove that what the renderer emits would be
// accepted by a cluster with the provider's CRDs installed.
//
// It is a test helper: only _test.go files may import it. It embeds several
// megabytes of schemas (package schemas at the repository root), which the
// production binary must not carry.
//
// Custom resources are validated against the schemas in schemas/, which
// hack/derive-schemas derives from the upstream provider CRDs (descriptions
// stripped; see schemas/README.md for where each came from). Validation uses
// the Kubernetes apiextensions-apiserver code itself, in the order the API
// server applies it when a custom resource is created:
//
//  1. unknown fields are found by structural pruning (schema/pruning), which
//     kubectl's default strict field validation turns into errors; unknown
//     fields inside embedded resources' metadata are found by
//     schema/objectmeta;
//  2. schema defaults are applied (schema/defaulting), so a field that is
//     required but defaulted is not reported;
//  3. the OpenAPI schema is checked with validation.ValidateCustomResource
//     (types, enums, required, patterns, formats, minimum/maximum,
//     min/maxItems, min/maxLength, ...);
//  4. x-kubernetes-list-type set/map uniqueness is checked (schema/listtype);
//  5. x-kubernetes-validations CEL rules are evaluated (schema/cel) with the
//     API server's cost limits. As in the API server they are skipped when
//     an earlier error (wrong type, missing required field, ...) would make
//     them meaningless, and transition rules (oldSelf) never run, because
//     only creation is simulated.
//
// Gateway API kinds are published per release in a standard and an
// experimental channel with different schemas; a standard cluster prunes an
// experimental-only field, which step 1 reports as an unknown field. Check
// and CheckAtVersion use the standard channel for them, CheckAtChannel the
// channel a capability file declares; kinds published without channels have
// channel "". HasField answers whether a release declares a field, for
// renderers that emit one only from some release on.
//
// CRD and CRDChannel go the other way: they rebuild an installable
// apiextensions.k8s.io/v1 CustomResourceDefinition (every embedded version
// of a kind at one release, with names, scope, subresources and printer
// columns) for tests that run a real API server (envtest) and cannot read
// the upstream CRD files.
//
// The object's metadata is checked only loosely: it must be an object with a
// non-empty name; its other fields are not reported as unknown. Status
// subresource handling, admission webhooks and conversion webhooks are not
// simulated.
//
// Built-in kinds (Deployment, Service, ServiceAccount, ConfigMap,
// PersistentVolumeClaim, Job, Role, RoleBinding) have no CRD; ValidateBuiltin
// decodes them strictly into the k8s.io/api Go types, which reports unknown
// and duplicate fields and type errors, and adds a handful of cheap semantic
// checks the API server also enforces. It is not a replacement for the API
// server's full validation of those kinds.
package schemacheck
