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
// is 1 and the input items are returned unchanged.
//
// As a CLI, `airunway-render render [--capabilities FILE] [--output-dir DIR]
// PATH...` renders plain YAML files and directories: a YAML stream on
// stdout, or one file per object under DIR (the rendered-manifests
// directory Flux users commit). `airunway-render version` prints the version
// and the compatibility matrix.
package fn
