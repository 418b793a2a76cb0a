// Package hostile runs every entry point of the renderer on repositories
// written to subvert it: `build`, the Argo CD plugin, `render`, `migrate`
// and the KRM function, each on each repository of testdata/hostile at the
// module root, as the real binary under a memory and a time bound.
//
// A repository is whatever anyone can commit. Each case is a directory
// holding the repository (repo/) and a case.yaml saying what it tries and
// what each entry point must answer. Every run, whatever the case, must end
// within the bounds with exit 0 or 1, create no marker file (the hostile
// programs, and the fake git, ssh, docker, helm and kustomize plugin the
// sandbox puts on PATH and in the plugin home, would create it), leave the
// temporary directory empty, and change nothing outside its output: the
// --output-dir of render, the directory migrate migrates, stdout for the
// others. A new way to attack the renderer is a new directory there.
package hostile
