package fn

import (
	"errors"
	"fmt"
	"io"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/termsafe"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

// Run is the render function: it reads a ResourceList on stdin, writes one
// on stdout with the problems as results, and returns the exit code, 1 on
// any error. kustomize shows only stderr, so the problems go to stderr
// too, one per line, except for kpt, which shows the results: there
// stderr carries only the count. `airunway-render` without arguments is this.
func Run(stdin io.Reader, stdout, stderr io.Writer) int {
	in, ok := readStdin(stdin, stderr)
	if !ok {
		return 1
	}
	p := &Processor{}
	runErr := p.RunTo(in, stdout)
	if we := (*manifest.WriteError)(nil); errors.As(runErr, &we) {
		fmt.Fprintf(stderr, "airunway-render: cannot write the ResourceList: %v\n", we.Err)
		return 1
	}
	if p.FromKpt {
		// kpt prints the results and then stderr: each problem once, in
		// the results; stderr only counts them.
		p.Problems.Summary(stderr, "nothing was rendered (the results say why)")
	} else {
		p.Problems.Report(stderr, "nothing was rendered")
	}
	if runErr != nil {
		if budget.IsExceeded(runErr) {
			// Refused before the items were built: nothing was written.
			fmt.Fprintf(stderr, "[error] stdin: %s\n", termsafe.Escape(runErr.Error()))
			return 1
		}
		if !p.Problems.HasErrors() {
			// The input was not a ResourceList at all.
			fmt.Fprintf(stderr, "[error] stdin: cannot read the ResourceList: %s\n", termsafe.Escape(yamlerr.Describe(runErr)))
		}
		return 1
	}
	return 0
}

// readStdin reads a function's ResourceList, refusing more than
// budget.MaxBytes before it is parsed; problems are printed. The documents
// and nodes of the run are charged as the ResourceList is read
// (manifest.ReadResourceList).
func readStdin(stdin io.Reader, stderr io.Writer) ([]byte, bool) {
	in, err := budget.New().ReadAll(stdin)
	if budget.IsExceeded(err) {
		fmt.Fprintf(stderr, "[error] stdin: the ResourceList is larger than %s; the input of one run must be at most %s (split the package)\n", hub.FormatBytes(budget.MaxBytes), hub.FormatBytes(budget.MaxBytes))
		return nil, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "airunway-render: cannot read the ResourceList from stdin: %v\n", err)
		return nil, false
	}
	if at := budget.NodesAtMost(in); at > maxParsedNodes {
		fmt.Fprintf(stderr, "[error] stdin: the ResourceList could hold up to %d YAML nodes (counted before parsing, by its `:`, `-`, `,`, `[`, `{`, `?` and line breaks), more than %d; one run reads at most %d nodes, so split the package\n", at, maxParsedNodes, budget.MaxNodes)
		return nil, false
	}
	return in, true
}

// maxParsedNodes bounds the nodes of the ResourceList the function parses.
// The ResourceList is one YAML document, parsed whole (about 200 bytes a
// node) before its items can be counted and charged, so its nodes are
// bounded ahead by budget.NodesAtMost: twice the run's node limit, since
// real YAML counts two to three times its nodes that way (10,000 models:
// 1.9 times; a CRD's descriptions: 2.7), and the densest YAML about once.
const maxParsedNodes = 2 * budget.MaxNodes
