// Package kbuild runs a kustomization the way `kustomize build` does, in
// process (sigs.k8s.io/kustomize/api's krusty), with airunway-render as
// its KRM function wherever the kustomization declares it, on a repository
// that anyone may have committed to.
//
// kustomize runs a function declared in a kustomization only as a program
// (an executable, or a container through docker), and a kind it does not
// know as a legacy plugin program; krusty has no way to register a
// function in process. So Build decides what may run before kustomize
// loads anything, with kustomize's own decoding (check.go): every
// kustomization the build reads is decoded as kustomize decodes it, and
// every object under `generators`, `transformers` or `validators`, inline
// or in a file, is read as kustomize's function loader reads it
// (declarations.go). Each must be a builtin plugin's config or declare
// airunway-render, whose declaration is rewritten to run the executable
// Build is given (the running binary); anything else is refused. A
// directory listed there may only list `resources`, so every plugin
// kustomize loads is an object some file holds. A remote reference is
// refused by kustomize's own parser of repository URLs, and HTTP fails
// while kustomize runs (remote.go).
//
// kustomize then reads the repository through repoFS (repofs.go): an
// os.Root of Options.Root, read-only, regular files only, each file read
// once and charged to the run's input budget (internal/budget) before
// kustomize parses it, and scanned again for declarations; a kustomization
// the check did not read is refused, so a disagreement between the check
// and kustomize fails the build rather than runs what was not checked.
// Without airunway-render in the kustomization, kustomize runs with its
// builtin plugins only. The result is what standalone kustomize prints for
// the same directory with the same binary.
package kbuild
