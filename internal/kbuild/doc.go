// Package kbuild runs a kustomization the way `kustomize build` does, in
// process (sigs.k8s.io/kustomize/api's krusty), with airunway-render as
// its KRM function wherever the kustomization declares it.
//
// kustomize runs a function declared in a kustomization only as a
// container or as an executable, and only behind its alpha flags
// (--enable-alpha-plugins --enable-exec); krusty has no way to register
// one in process. So Build reads the kustomization through a file system
// that rewrites the declarations of airunway-render — an exec path
// ending in airunway-render, or an image named airunway-render — to run
// the executable it is given (the running binary), and refuses any other
// function: a directory built by the Argo CD plugin is not trusted to run
// programs. The result is what standalone kustomize prints for the same
// directory with the same binary.
//
// With Options.Root set, nothing outside that directory is read: the
// Argo CD plugin confines a build to the repository, so an Application
// cannot read the sidecar's own files through a kustomization.
package kbuild
