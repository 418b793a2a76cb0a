// Package parentdeath ties a process's life to its parent's.
//
// kustomize runs the KRM function as a child process, and `build` and the
// Argo CD plugin run kustomize in their own process. When one of them stops
// (`build --timeout`, Argo CD killing a generate that ran too long), the
// function would run on, re-parented to init: one leaked process per sync,
// burning CPU until it finishes. Tie asks the kernel to kill the function
// when its parent dies (PR_SET_PDEATHSIG), so nothing is left behind
// however the parent ends, even by SIGKILL.
package parentdeath
