// Package fn is the KRM function: a ResourceList in, a ResourceList out,
// as kustomize (exec transformer), kpt (`fn render`, `fn eval`) and the
// Argo CD plugin run it. `airunway-render` without arguments is Run.
//
// The functionConfig may be a ClusterCapabilities object; otherwise a
// ClusterCapabilities item of the input is used, otherwise the embedded
// default. Problems become KRM results (severity, resource, field, file)
// and are also printed readably on stderr, because kustomize shows nothing
// else. On any error the exit code is 1 and the input items are returned
// unchanged.
//
// The ResourceList is read and written by internal/manifest
// (ReadResourceList, ResourceListWriter), not by the KRM function SDK: the
// same inputs accepted and the same bytes written, held to the SDK by that
// package's parity suite, at a fraction of its cost (BENCHMARKS.md). Output
// objects are encoded as soon as the engine renders them
// (render.Options.Encode, manifest.EncodeItem), so a run holds text, not
// node trees, and each item is let go of once it is rendered
// (render.Options.ReleaseItems); a failed run reads its input again to
// write the items as they came.
//
// RunMigrate is the second function, `airunway-render migrate` without
// paths: the ModelDeployments among the items move to the newest form of
// their API (versions.MigrateItem, which the command shares), each change
// an info result. The package exports the two functions and nothing the
// command line needs besides.
//
// The command line (render, diff, preview, migrate with paths, argocd,
// version) is package cli.
package fn
