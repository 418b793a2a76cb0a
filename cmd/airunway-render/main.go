// Command airunway-render renders AI Runway ModelDeployments into provider
// objects: without arguments as a KRM function (package fn), with them as a
// CLI (package cli).
package main

import (
	"os"
	"runtime/debug"

	"github.com/airunway-render/airunway-render/cli"
	"github.com/airunway-render/airunway-render/fn"
	"github.com/airunway-render/airunway-render/internal/parentdeath"
)

// memoryLimit is the soft memory limit of a run (GOMEMLIMIT's default).
const memoryLimit = 900 << 20

func main() {
	if os.Getenv("GOGC") == "" {
		// Rendering makes much short-lived garbage. Collecting at 200%
		// growth instead of 100% takes a fifth off the CPU time of 10,000
		// models for 1.4 times the peak memory (under 0.5 GiB), and spares a
		// one-model run its collections (BENCHMARKS.md). A GOGC set in
		// the environment wins.
		debug.SetGCPercent(200)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The input limits (api/hub/limits.go) hold a run under 1.8 GiB at
		// GOGC=200; most of that is garbage not yet collected. A soft limit
		// makes the collector work harder only near it: the worst input
		// within the limits then peaks under 0.95 GiB, 10,000 models are
		// unchanged (about 0.5 GiB) and kpt's second run over them drops
		// from 1.4 to 0.9 GiB (BENCHMARKS.md, "Inputs at the limits"). A
		// GOMEMLIMIT set in the environment wins.
		debug.SetMemoryLimit(memoryLimit)
	}
	if len(os.Args) == 1 {
		if cli.IsTerminal(os.Stdin) {
			// Someone typed the bare command: say what it is instead of
			// waiting for a ResourceList that nobody will type.
			os.Stderr.WriteString(cli.FunctionModeHint)
			os.Exit(1)
		}
		// The KRM function runs on every kustomize build and Argo CD
		// refresh: it starts without building the CLI's command tree. It
		// dies with whatever started it (a build stopped at its timeout).
		parentdeath.Tie()
		os.Exit(fn.Run(os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) == 2 && os.Args[1] == "migrate" {
		parentdeath.Tie() // as a function: plan --fleet's overlay builds
	}
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
