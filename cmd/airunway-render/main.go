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
	// The collector runs at Go's default growth (GOGC=100). It ran at 200
	// while a run held every input tree: that took a fifth off the CPU of
	// 10,000 models. Now a run holds a model's tree only while it renders
	// it, so its live heap is mostly the output's text, and collecting
	// it costs little: at 100, 10,000 models peak at 205 MiB (`render`)
	// and 252 MiB (the function) instead of 291 and 345, for 1% and 19%
	// more CPU (BENCHMARKS.md, "The command line at 10,000 models").
	if os.Getenv("GOMEMLIMIT") == "" {
		// The input limits (api/hub/limits.go) bound a run's live heap,
		// and the collector lets the heap grow to twice that. A soft limit
		// makes the collector work harder only near it: the worst input
		// within the limits then peaks under 0.95 GiB, 10,000 models stay
		// far below it (about 0.25 GiB) and kpt's second run over them
		// dropped from 1.4 to 0.9 GiB (BENCHMARKS.md, "Inputs at the
		// limits"). A GOMEMLIMIT set in the environment wins.
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
