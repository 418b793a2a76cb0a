package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/objdiff"
	"github.com/airunway-render/airunway-render/preview"
)

// `airunway-render preview` renders the same paths against two capability
// files, the cluster before and after an upgrade (an operator release, the
// Inference Extension's API version), and shows what changes per object.
// It flags what the cluster will not take as an update: a field the API
// server or the operator's webhook refuses to change, an object whose API
// group changes (deleted and created anew), and what restarts model servers.

type previewOptions struct {
	filenames []string
	from, to  string
	format    string
	exitCode  bool
	modelDirs []string
}

func newPreviewCommand(s streams) *cobra.Command {
	var o previewOptions
	cmd := &cobra.Command{
		Use:   "preview --from FILE --to FILE [--format text|markdown] [--exit-code] [-f FILE|DIR|-]... [PATH...]",
		Short: "Show what an upgrade of the cluster does to the rendered objects",
		Long: `Render PATHs for a cluster before and after an upgrade (two capability
files: an operator release, the InferencePool API version) and show the
difference per object, flagging what the cluster will not take in place
(BREAKING) and what restarts model servers. A PATH that holds a
kustomization (a cluster's overlay) is built first, as build builds it,
and its output rendered under each capability file.`,
		Example: `  airunway-render preview --from clusters/prod/capabilities.yaml --to upgrade/capabilities.yaml -f models/

  # as a pull-request comment, failing the job on a breaking change
  airunway-render preview --from caps.yaml --to next.yaml --format markdown --exit-code models/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.from == "" || o.to == "":
				return usagef("`--from` and `--to` must both name a capability file")
			case o.format != "text" && o.format != "markdown":
				return usagef("`--format` must be \"text\" or \"markdown\", got %q", o.format)
			}
			paths, err := inputPaths(o.filenames, args)
			if err != nil {
				return err
			}
			hintIfTerminal(s, cmd.CommandPath(), paths)
			return runPreview(o, paths, s)
		},
	}
	f := cmd.Flags()
	addFilenameFlag(cmd, &o.filenames, "YAML file or directory of models")
	f.StringVar(&o.from, "from", "", "ClusterCapabilities file of the cluster as it is")
	f.StringVar(&o.to, "to", "", "ClusterCapabilities file of the cluster after the upgrade")
	f.StringVar(&o.format, "format", "text", `output format: "text" or "markdown" (a pull-request comment)`)
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 2 when objects differ, 3 when a change is breaking")
	addModelDirFlag(cmd, &o.modelDirs)
	return cmd
}

func runPreview(o previewOptions, paths []string, s streams) error {
	models, err := readModelDirs(o.modelDirs)
	if err != nil {
		return fail(err)
	}
	var sides [2]preview.Side
	failed := false
	// Both sides render the same inputs, and stdin can be read only once.
	var stdin []byte
	if slices.Contains(paths, stdinName) {
		var err error
		stdin, err = budget.New().ReadAll(s.in)
		var exceeded *budget.Exceeded
		if errors.As(err, &exceeded) {
			diag.List{{Severity: diag.Error, File: stdinLabel, Message: exceededMessage(exceeded)}}.Report(s.errOut, "nothing was rendered")
			return exitCode(1)
		}
		if err != nil {
			return fail(fmt.Errorf("cannot read stdin: %w", err))
		}
	}
	// An overlay builds the same under either capability file: once.
	built, problems := buildOverlays(hostFiles{}, paths, hostDirs, s.errOut)
	if problems.HasErrors() {
		problems.Report(s.errOut, "nothing was rendered")
		return exitCode(1)
	}
	for i, caps := range []string{o.from, o.to} {
		src, closeScope, err := namedHostFiles(bytes.NewReader(stdin), slices.Concat(paths, []string{caps})...)
		if err != nil {
			return fail(err)
		}
		res, problems := renderFilesWith(withBuilt(src, built), caps, paths, encoder{}, diag.Policy{}, models)
		closeScope()
		sides[i] = preview.Side{CapsFile: caps, Caps: readableCapabilities(caps), Objects: clusterObjects(res.Items), Fits: res.Fits, Problems: problems}
		var shown bytes.Buffer // errors and warnings; info stays quiet
		problems.Report(&shown, "nothing was rendered")
		if shown.Len() > 0 {
			fmt.Fprintf(s.errOut, "with %s:\n%s", caps, shown.Bytes())
		}
		failed = failed || problems.HasErrors()
	}
	memory := preview.FitFindings(sides[0].Fits, sides[1].Fits)
	if failed {
		// A model that stops fitting its GPUs fails the render after the
		// upgrade: the errors are on stderr, and the reviewer reads why
		// here.
		if !sides[0].Problems.HasErrors() && len(memory) > 0 {
			out := findingsText(memory)
			if o.format == "markdown" {
				out = findingsMarkdown(memory)
			}
			if _, err := io.WriteString(s.out, strings.TrimPrefix(out, "\n")); err != nil {
				return err
			}
		}
		return exitCode(1)
	}
	changes, err := objdiff.Compare(sides[0].Objects, sides[1].Objects)
	if err != nil {
		return err
	}
	res := &objdiff.Result{Old: o.from, New: o.to, Changes: changes, Command: "airunway-render preview"}
	findings := preview.Findings(sides[0], sides[1], changes)
	out := res.Text() + findingsText(findings)
	if o.format == "markdown" {
		out = res.Markdown() + findingsMarkdown(findings)
	}
	if _, err := io.WriteString(s.out, out); err != nil {
		return err
	}
	switch {
	case !o.exitCode:
		return nil
	case slices.ContainsFunc(findings, func(f preview.Finding) bool { return f.Breaking }):
		return exitCode(exitBreaking)
	case res.Differs():
		return exitCode(exitDifferent)
	}
	return nil
}

func findingsText(fs []preview.Finding) string {
	changes, notes, warnings := splitFindings(fs)
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("No breaking change and no restart.\n")
	} else {
		b.WriteString("\n")
	}
	for _, f := range changes {
		b.WriteString(findingLine(f, f.Object) + "\n")
	}
	for _, group := range [][]preview.Finding{notes, warnings} {
		if len(group) > 0 {
			b.WriteString("\n")
		}
		for _, f := range group {
			b.WriteString(findingLine(f, f.Object) + "\n")
		}
	}
	return b.String()
}

// splitFindings separates what the cluster will not take in place from
// the memory fits that change and the new warnings.
func splitFindings(fs []preview.Finding) (changes, notes, warnings []preview.Finding) {
	for _, f := range fs {
		switch {
		case f.Warning:
			warnings = append(warnings, f)
		case f.Note:
			notes = append(notes, f)
		default:
			changes = append(changes, f)
		}
	}
	return changes, notes, warnings
}

func findingLine(f preview.Finding, object string) string {
	word := "restart"
	switch {
	case f.Breaking:
		word = "BREAKING"
	case f.Warning:
		word = "warning"
	case f.Note:
		word = "note"
	}
	if object == "" {
		return word + ": " + f.Message
	}
	return word + ": " + object + ": " + f.Message
}

func findingsMarkdown(fs []preview.Finding) string {
	changes, notes, warnings := splitFindings(fs)
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("\nNo breaking change and no restart.\n")
	} else {
		b.WriteString("\n#### What the cluster will not take in place\n\n")
		writeFindingsMarkdown(&b, changes)
	}
	if len(notes) > 0 {
		b.WriteString("\n#### Memory fit per replica\n\n")
		writeFindingsMarkdown(&b, notes)
	}
	if len(warnings) > 0 {
		b.WriteString("\n#### New warnings\n\n")
		writeFindingsMarkdown(&b, warnings)
	}
	return b.String()
}

func writeFindingsMarkdown(b *strings.Builder, fs []preview.Finding) {
	for _, f := range fs {
		obj := ""
		if f.Object != "" {
			obj = objdiff.Code(f.Object)
		}
		b.WriteString("- " + findingLine(f, obj) + "\n")
	}
}

// readableCapabilities is the capability file for the findings; nil when
// it does not read (the render reported it).
func readableCapabilities(file string) *capabilities.Resolved {
	caps, l := readCapabilities(hostFiles{}, file)
	if l.HasErrors() {
		return nil
	}
	return caps
}
