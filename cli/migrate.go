package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fn"
)

// `airunway-render migrate` rewrites ModelDeployments to the newest form of
// their API with the served version's migrations (api/versions). With
// PATHs it edits the files in place (or, with --check, only reports);
// without, it is a KRM function (fn.RunMigrate).

func newMigrateCommand(s streams) *cobra.Command {
	var check bool
	var to string
	var filenames []string
	cmd := &cobra.Command{
		Use:   "migrate [--check] [--to APIVERSION] [-f FILE|DIR]... [PATH...]",
		Short: "Rewrite ModelDeployments to the newest form of their API, or to another served version",
		Long: `Move deprecated fields of ModelDeployments to their replacements (today:
spec.image to spec.engine.image), in place, keeping comments and layout;
a move that would change what the model means is refused. --to converts
them to another served version as well: up to airunway.ai/v1alpha2 the
fields in v1alpha1's conversion annotation move into spec, down to
airunway.ai/v1alpha1 the fields v1alpha1 lacks move into the annotation.
--check changes nothing and exits 2 when a file would change. Without
PATHs it is a KRM function that migrates the items of the ResourceList on
stdin.`,
		Example: `  airunway-render migrate -f models/
  airunway-render migrate --to airunway.ai/v1alpha2 models/
  airunway-render migrate --check models/        # in CI
  kpt fn eval --exec "airunway-render migrate" models/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to != "" && !versions.Serves(to, hub.KindModelDeployment) {
				return usagef("`--to` must be a served apiVersion: one of %s, got %q", hub.QuoteList(versions.Names()), to)
			}
			paths := append(filenames, args...)
			if slices.Contains(paths, stdinName) {
				return usagef("migrate edits files in place and cannot take `-`; to migrate a stream, pipe a ResourceList into `airunway-render migrate` (a KRM function)")
			}
			if len(paths) > 0 {
				return migrateFiles(paths, check, to, s.out, s.errOut)
			}
			if check {
				fmt.Fprintf(s.errOut, "airunway-render migrate: `--check` needs PATHs; as a KRM function, migrate reads a ResourceList on stdin\n")
				return exitCode(1)
			}
			if code := fn.RunMigrate(s.in, s.out, s.errOut, to); code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "change nothing; exit 2 when a file would change (for CI)")
	cmd.Flags().StringVar(&to, "to", "", "also convert ModelDeployments to this served apiVersion ("+strings.Join(versions.Names(), " or ")+")")
	cmd.Flags().StringArrayVarP(&filenames, "filename", "f", nil, "YAML file or directory to migrate in place (repeatable; a directory is read recursively)")
	return cmd
}

// migrateFiles migrates every YAML file under paths in place. A file is
// rewritten only when something in it changes, so a second run changes
// nothing; a file with an error is left alone and the run fails.
func migrateFiles(paths []string, check bool, to string, stdout, stderr io.Writer) error {
	files, err := migrateInputs(paths)
	if err != nil {
		fmt.Fprintf(stderr, "[error] %v\n", err)
		return exitCode(1)
	}
	var problems diag.List
	changedFiles := 0
	for _, f := range files {
		out, notes, l := migrateFile(f, to)
		problems = append(problems, l...)
		if l.HasErrors() || out == nil {
			continue
		}
		changedFiles++
		for _, n := range notes {
			fmt.Fprintf(stdout, "%s: %s\n", f, n)
		}
		if check {
			continue
		}
		if err := writeFileAtomic(f, out); err != nil {
			problems = append(problems, diag.Problem{Severity: diag.Error, File: f, Message: fmt.Sprintf("cannot write: %v", err)})
		}
	}
	problems.Report(stderr, "no file was changed")
	switch {
	case problems.HasErrors():
		return exitCode(1)
	case check && changedFiles > 0:
		fmt.Fprintf(stderr, "airunway-render migrate --check: %d file(s) would change; run `airunway-render migrate` on them\n", changedFiles)
		return exitCode(exitWouldChange)
	}
	return nil
}

// migrateFile returns the file's new content, nil when nothing changes,
// with a note per change.
func migrateFile(file, to string) ([]byte, []string, diag.List) {
	var l diag.List
	budget := hub.MaxInputBytes
	data, err := readLimited(hostFiles{}, file, &budget)
	if err != nil {
		l = append(l, diag.Problem{Severity: diag.Error, File: file, Message: fmt.Sprintf("cannot read: %v", err)})
		return nil, nil, l
	}
	r := &kio.ByteReader{Reader: bytes.NewReader(data), PreserveSeqIndent: true}
	nodes, err := r.Read()
	if err != nil {
		l = append(l, diag.Problem{Severity: diag.Error, File: file, Message: "is not YAML kyaml can read: " + err.Error()})
		return nil, nil, l
	}
	var notes []string
	for _, n := range nodes {
		changes, err := fn.MigrateItem(n, to)
		if err != nil {
			l = append(l, diag.Problem{Severity: diag.Error, File: file, Resource: fn.ItemRef(n), Message: err.Error()})
			continue
		}
		for _, c := range changes {
			notes = append(notes, fn.ItemRef(n).String()+": "+c)
		}
	}
	if l.HasErrors() || len(notes) == 0 {
		return nil, nil, l
	}
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		l = append(l, diag.Problem{Severity: diag.Error, File: file, Message: fmt.Sprintf("cannot write: %v", err)})
		return nil, nil, l
	}
	return out.Bytes(), notes, l
}

// migrateInputs lists the YAML files under paths, as render reads them.
func migrateInputs(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		found, err := yamlFiles(hostFiles{}, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		files = append(files, found...)
	}
	if len(files) == 0 {
		return nil, errors.New("no YAML file under the given paths")
	}
	return files, nil
}
