package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airunway-render/airunway-render/internal/version"
)

// Exit codes besides 0 (success) and 1 (an error; nothing is written).
const (
	// exitDifferent: diff and preview with --exit-code found differing
	// objects (git diff --exit-code uses 1, which is taken by errors here).
	exitDifferent = 2
	// exitBreaking: preview with --exit-code found a change the cluster
	// will not take in place.
	exitBreaking = 3
	// exitWouldChange: migrate --check found a file to rewrite.
	exitWouldChange = 2
)

// exitCode ends a command with a status other than 0 after it has said why
// on stderr (or, for 2 and 3, printed its findings).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// usageError is a mistake in how a command was called: Execute prints it
// with the command's usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// streams are a command's standard input and outputs.
type streams struct {
	in          io.Reader
	out, errOut io.Writer
}

// Execute runs the command line args (without the program name) and
// returns the exit status. Without arguments cmd/airunway-render runs the
// KRM function (package fn) instead, without building this command tree.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(streams{in: stdin, out: stdout, errOut: stderr})
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	var code exitCode
	var usage usageError
	var failed failure
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &failed):
		reportError(stderr, failed.err)
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), usage.msg)
		shortUsage(stderr, cmd)
	case strings.HasPrefix(err.Error(), "unknown command"):
		// cobra's own words, with its "Did you mean this?" suggestions.
		fmt.Fprintf(stderr, "%s: %s\n", cmd.CommandPath(), strings.TrimSpace(err.Error()))
		shortUsage(stderr, cmd)
	default:
		fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
	}
	return 1
}

// shortUsage ends a usage error as kubectl does: the command's usage line
// and where the rest is, not the whole help.
func shortUsage(w io.Writer, cmd *cobra.Command) {
	use := cmd.UseLine()
	if cmd.HasAvailableSubCommands() {
		use += " COMMAND"
	}
	fmt.Fprintf(w, "Usage: %s\nRun '%s --help' for examples and every flag.\n", use, cmd.CommandPath())
}

// completionExamples load each shell's script for the current session or
// for good.
var completionExamples = map[string]string{
	"bash":       "  source <(airunway-render completion bash)",
	"zsh":        "  airunway-render completion zsh > \"${fpath[1]}/_airunway-render\"",
	"fish":       "  airunway-render completion fish > ~/.config/fish/completions/airunway-render.fish",
	"powershell": "  airunway-render completion powershell | Out-String | Invoke-Expression",
}

// addCompletionExamples builds cobra's completion commands now (it would
// at Execute) and gives each an example, as every other command has.
func addCompletionExamples(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  source <(airunway-render completion bash)   # this shell\n  airunway-render completion zsh > \"${fpath[1]}/_airunway-render\""
		for _, shell := range c.Commands() {
			shell.Example = completionExamples[shell.Name()]
		}
	}
}

// disableFlagsInUseLine drops cobra's "[flags]" from every Use line: each
// lists its flags already.
func disableFlagsInUseLine(cmd *cobra.Command) {
	cmd.DisableFlagsInUseLine = true
	for _, c := range cmd.Commands() {
		disableFlagsInUseLine(c)
	}
}

// noArgs is cobra.NoArgs as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("takes no arguments, got %q", args)
	}
	return nil
}

func newRoot(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "airunway-render",
		Short: "Render AI Runway ModelDeployments into provider objects",
		Long: `airunway-render renders AI Runway ModelDeployments into the objects of the
inference operator a cluster runs (KAITO, Dynamo, KubeRay, llm-d, vLLM),
placed on the cluster's GPU node pools, for GitOps.

Without arguments it is a KRM function: a ResourceList on stdin, a
ResourceList on stdout (kustomize, kpt, the Argo CD plugin).

Exit status: 0 on success, 1 on any error (nothing is written then); diff
and preview --exit-code: 2 when the rendered objects differ, 3 (preview)
when a change is breaking; migrate --check: 2 when a file would change;
plan: 3 when a node pool cannot hold its pods.`,
		Example: `  # render your model for your cluster
  airunway-render render -f model.yaml --capabilities cluster.yaml

  # the GPUs, nodes and monthly cost the models need, against the pools
  airunway-render plan -f models/ --capabilities clusters/prod/capabilities.yaml

  # what a pull request changes in the rendered objects
  airunway-render diff --capabilities clusters/prod/capabilities.yaml origin/main HEAD -- models/

  # help for one command
  airunway-render help render`,
		Version:       version.String(),
		SilenceErrors: true, // Execute prints them
		SilenceUsage:  true, // and the usage only for a usage error
	}
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.errOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(
		newRenderCommand(s),
		newPlanCommand(s),
		newBuildCommand(s),
		newDiffCommand(s),
		newPreviewCommand(s),
		newMigrateCommand(s),
		newArgoCDCommand(s),
		newCapabilitiesCommand(s),
		newCatalogCommand(s),
		newVersionCommand(s),
	)
	addCompletionExamples(root)
	disableFlagsInUseLine(root)
	return root
}

// Command is the command tree on the process's standard streams, for
// generating the CLI reference (hack/gendocs).
func Command() *cobra.Command {
	return newRoot(streams{in: os.Stdin, out: os.Stdout, errOut: os.Stderr})
}
