// Package fn is the renderer's front door: the KRM function and the CLI,
// both thin layers over package render.
//
// As a KRM function (no arguments) it reads a ResourceList on stdin and
// writes one on stdout, as kustomize (exec transformer), kpt (`fn render`,
// `fn eval`) and any other KRM orchestrator expect. The functionConfig may
// be a ClusterCapabilities object; otherwise a ClusterCapabilities item of
// the input is used, otherwise the embedded default. Problems become KRM
// results (severity, resource, field, file) and are also printed readably on
// stderr, because kustomize shows nothing else. On any error the exit code
// is 1 and the input items are returned unchanged. The ResourceList is read
// (resourcelist_read.go) and written (resourcelist.go) here, not by the KRM
// function SDK: the same inputs accepted, the same bytes written, held to
// the SDK by the tests, at a fraction of its cost (BENCHMARKS.md).
//
// As a CLI, `airunway-render render [--capabilities FILE] [--output-dir DIR
// [--kustomization]] PATH...` renders plain YAML files and directories: a
// YAML stream on stdout, or one file per object under DIR (a
// rendered-manifests directory, with a kustomization listing the files when
// asked). All three read and render through one pipeline, renderFilesWith,
// and the CLI and the plugin take the objects already encoded:
//
//   - `airunway-render diff OLD_REF [NEW_REF] -- PATH...` renders the same
//     paths at two git revisions and prints what changed per object, as
//     text or as a pull-request comment (diff.go, linediff.go);
//   - `airunway-render argocd generate` is the Argo CD Config Management
//     Plugin's command: it reads only the application's directory, the
//     capability file ARGOCD_ENV_CAPABILITIES names and
//     ARGOCD_APP_SOURCE_PATH, refuses anything that leaves the repository,
//     and never prints an empty manifest list (argocd.go).
//
// `airunway-render version` prints the version and the compatibility matrix.
package fn
