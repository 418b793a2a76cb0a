package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/render"
)

// The conventions kubectl, kustomize and helm users bring: inputs with
// -f (repeatable, `-` for stdin) as well as arguments, -o yaml|json, and a
// word on stderr instead of a silent wait when stdin is a terminal.

// stdinName is the input name that reads standard input, as with kubectl.
const stdinName = "-"

// stdinLabel names standard input in problem reports.
const stdinLabel = "<stdin>"

// addFilenameFlag adds -f/--filename to cmd, collecting into names.
func addFilenameFlag(cmd *cobra.Command, names *[]string, what string) {
	cmd.Flags().StringArrayVarP(names, "filename", "f", nil, what+" (repeatable; a directory is read recursively; - reads stdin)")
}

// inputPaths joins the -f values and the arguments, in that order, and
// checks that stdin is read at most once.
func inputPaths(filenames, args []string) ([]string, error) {
	paths := append(append([]string(nil), filenames...), args...)
	stdin := 0
	for _, p := range paths {
		if p == stdinName {
			stdin++
		}
	}
	switch {
	case len(paths) == 0:
		return nil, usagef("no input: name files or directories as arguments or with `-f` (`-f -` reads stdin)")
	case stdin > 1:
		return nil, usagef("`-` (stdin) may be given only once")
	}
	return paths, nil
}

// hintIfTerminal tells a user at a terminal that the command now reads
// stdin, when one of paths is `-`.
func hintIfTerminal(s streams, cmd string, paths []string) {
	for _, p := range paths {
		if p == stdinName && IsTerminal(s.in) {
			fmt.Fprintf(s.errOut, "%s: reading YAML from stdin; end it with Ctrl-D\n", cmd)
			return
		}
	}
}

// IsTerminal reports whether r is a terminal (not a pipe, a file or
// /dev/null).
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// FunctionModeHint is printed instead of waiting when airunway-render runs
// without arguments at a terminal: the KRM function would wait for a
// ResourceList nobody is going to type.
const FunctionModeHint = `airunway-render: without arguments this is a KRM function, which reads a
ResourceList on stdin (kustomize, kpt and Argo CD pipe one in); stdin is a
terminal, so nothing would come.

To render your own files:
  airunway-render render -f model.yaml --capabilities cluster.yaml

Every command: airunway-render --help
`

// stdinInfo describes standard input to yamlFiles: one file.
type stdinInfo struct{}

func (stdinInfo) Name() string       { return stdinLabel }
func (stdinInfo) Size() int64        { return 0 }
func (stdinInfo) Mode() fs.FileMode  { return 0 }
func (stdinInfo) ModTime() time.Time { return time.Time{} }
func (stdinInfo) IsDir() bool        { return false }
func (stdinInfo) Sys() any           { return nil }

// outputFormats are the values of -o for a stream.
var outputFormats = []string{"yaml", "json"}

// checkOutputFormat validates -o.
func checkOutputFormat(format string) error {
	for _, f := range outputFormats {
		if format == f {
			return nil
		}
	}
	return usagef("`-o` must be \"yaml\" or \"json\", got %q", format)
}

// writeJSONList writes the objects as one `v1` `List`, as `kubectl get -o
// json` prints several objects: one JSON document, indented, keys sorted.
// The bytes are json.MarshalIndent's of such a List, written one item at a
// time, so that no more than one object is held as JSON at once (10,000
// models' List is about twice their YAML).
func writeJSONList(w io.Writer, items []render.Encoded) error {
	const head = "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"List\",\n    \"items\": ["
	if len(items) == 0 {
		_, err := io.WriteString(w, head+"]\n}\n")
		return err
	}
	out := bufio.NewWriter(w)
	var chunk bytes.Buffer // an item, with what comes before and after it
	chunk.WriteString(head + "\n")
	for i, it := range items {
		j, err := sigsyaml.YAMLToJSON(it.YAML)
		if err != nil {
			return err
		}
		chunk.WriteString(listItemIndent)
		if err := json.Indent(&chunk, j, listItemIndent, "    "); err != nil {
			return err
		}
		if i < len(items)-1 {
			chunk.WriteByte(',')
		}
		chunk.WriteByte('\n')
		if i == len(items)-1 {
			chunk.WriteString("    ]\n}\n")
		}
		if _, err := out.Write(chunk.Bytes()); err != nil {
			return err
		}
		chunk.Reset()
	}
	return out.Flush()
}

// listItemIndent is an item's indent in writeJSONList's List.
const listItemIndent = "        "

// warningFlags are --ignore-warnings and --warnings-as-errors, applied
// after the capability file's own `spec.warnings`.
type warningFlags struct {
	ignore   []string
	asErrors bool
}

func (w *warningFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&w.ignore, "ignore-warnings", nil, "warning codes to silence, comma-separated or repeated (the code follows the word warning in brackets; docs/troubleshooting.md lists them)")
	f.BoolVar(&w.asErrors, "warnings-as-errors", false, "fail the run (exit 1, nothing written) on any warning not silenced")
	_ = cmd.RegisterFlagCompletionFunc("ignore-warnings", cobra.FixedCompletions(diag.CodeNames(), cobra.ShellCompDirectiveNoFileComp))
}

func (w warningFlags) policy() (diag.Policy, error) {
	codes, err := diag.ParseCodes(w.ignore)
	if err != nil {
		return diag.Policy{}, usagef("`--ignore-warnings`: %v", err)
	}
	return diag.Policy{Ignore: codes, AsErrors: w.asErrors}, nil
}
