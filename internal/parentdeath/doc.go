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

import (
	"os"
	"strconv"
)

// ParentEnv names the PID of the process that starts the function, set by
// that process in the function's environment (`build`'s exec declaration).
const ParentEnv = "AIRUNWAY_RENDER_PARENT_PID"

// Env is ParentEnv set to this process, for the environment of a child
// that will Tie itself to it.
func Env() string { return ParentEnv + "=" + strconv.Itoa(os.Getpid()) }
