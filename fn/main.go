package fn

import (
	"fmt"
	"io"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
)

const usage = `airunway-render renders AI Runway ModelDeployments into provider objects.

Usage:
  airunway-render                 run as a KRM function: ResourceList on stdin, ResourceList on stdout
  airunway-render render [--capabilities FILE] [--output-dir DIR [--kustomization]] PATH...
                                  render YAML files or directories
  airunway-render version [--markdown]
                                  print the version and the supported provider releases
  airunway-render diff [--capabilities FILE] [--format text|markdown] [--exit-code] [-C DIR] OLD_REF [NEW_REF] -- PATH...
                                  render PATHs at two git refs (NEW_REF omitted: the working tree)
                                  and show how the rendered objects differ
  airunway-render preview --from FILE --to FILE [--format text|markdown] [--exit-code] PATH...
                                  render PATHs for a cluster before and after an upgrade (two
                                  capability files) and show the difference, flagging breaking
                                  changes and restarts
  airunway-render migrate [--check] [PATH...]
                                  rewrite ModelDeployments in place to the newest form of their API
                                  (deprecated fields to their replacements); --check changes nothing
                                  and exits 2 when a file would change; without PATHs, a KRM function
  airunway-render argocd generate
                                  the Argo CD Config Management Plugin (run by argocd-cmp-server)

Exit status: 0 on success, 1 on any error (nothing is written then).
With diff --exit-code: 2 when the rendered objects differ.
With preview --exit-code: 2 when they differ, 3 when a change is breaking.
With migrate --check: 2 when a file would change.
`

// Main runs the program and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runFunction(stdin, stdout, stderr)
	}
	switch args[0] {
	case "render":
		return runRender(args[1:], stdout, stderr)
	case "version":
		return runVersion(args[1:], stdout, stderr)
	case "diff":
		return runDiff(args[1:], stdout, stderr)
	case "preview":
		return runPreview(args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(args[1:], stdin, stdout, stderr)
	case "argocd":
		return runArgoCD(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "airunway-render: unknown command %q\n\n%s", args[0], usage)
	return 1
}

// runFunction is the KRM function entry point.
func runFunction(stdin io.Reader, stdout, stderr io.Writer) int {
	in, ok := readStdin(stdin, stderr)
	if !ok {
		return 1
	}
	p := &Processor{}
	out, runErr := p.Run(in)
	if len(out) > 0 {
		if _, err := stdout.Write(out); err != nil {
			fmt.Fprintf(stderr, "airunway-render: cannot write the ResourceList: %v\n", err)
			return 1
		}
	}
	report(stderr, p.Problems)
	if runErr != nil {
		if !p.Problems.HasErrors() {
			// The input was not a ResourceList at all.
			fmt.Fprintf(stderr, "[error] stdin: cannot read the ResourceList: %s\n", yamlerr.Describe(runErr))
		}
		return 1
	}
	return 0
}

// readStdin reads a function's ResourceList, refusing more than
// hub.MaxInputBytes before it is parsed; problems are printed.
func readStdin(stdin io.Reader, stderr io.Writer) ([]byte, bool) {
	in, err := io.ReadAll(io.LimitReader(stdin, hub.MaxInputBytes+1))
	if err != nil {
		fmt.Fprintf(stderr, "airunway-render: cannot read the ResourceList from stdin: %v\n", err)
		return nil, false
	}
	if len(in) > hub.MaxInputBytes {
		fmt.Fprintf(stderr, "[error] stdin: the ResourceList is larger than %s; the input of one run must be at most %s (split the package)\n", hub.FormatBytes(hub.MaxInputBytes), hub.FormatBytes(hub.MaxInputBytes))
		return nil, false
	}
	return in, true
}

// report prints errors and warnings readably; info stays in the results.
func report(w io.Writer, problems diag.List) {
	reportOutcome(w, problems, "nothing was rendered")
}

// reportOutcome is report, saying what an error left undone.
func reportOutcome(w io.Writer, problems diag.List, undone string) {
	errs, warns := 0, 0
	for _, p := range problems {
		switch p.Severity {
		case diag.Error:
			errs++
		case diag.Warning:
			warns++
		default:
			continue
		}
		fmt.Fprintln(w, p.String())
	}
	if errs > 0 {
		fmt.Fprintf(w, "airunway-render: %d error(s), %d warning(s); %s\n", errs, warns, undone)
	}
}
