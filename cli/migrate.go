package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fn"
)

// `airunway-render migrate` rewrites ModelDeployments to the newest form of
// their API with the served version's migrations (api/versions). With
// PATHs it edits the files in place (or, with --check, only reports);
// without, it is a KRM function (fn.RunMigrate).

func newMigrateCommand(s streams) *cobra.Command {
	var check bool
	var filenames []string
	cmd := &cobra.Command{
		Use:   "migrate [--check] [-f FILE|DIR]... [PATH...]",
		Short: "Rewrite ModelDeployments to the newest form of their API",
		Long: `Move deprecated fields of ModelDeployments to their replacements (today:
spec.image to spec.engine.image), in place, keeping comments and layout;
a move that would change what the model means is refused. --check changes
nothing and exits 2 when a file would change. Without PATHs it is a KRM
function that migrates the items of the ResourceList on stdin.`,
		Example: `  airunway-render migrate -f models/
  airunway-render migrate --check models/        # in CI
  kpt fn eval --exec "airunway-render migrate" models/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths := append(filenames, args...)
			if slices.Contains(paths, stdinName) {
				return usagef("migrate edits files in place and cannot take `-`; to migrate a stream, pipe a ResourceList into `airunway-render migrate` (a KRM function)")
			}
			if len(paths) > 0 {
				return migrateFiles(paths, check, s.out, s.errOut)
			}
			if check {
				fmt.Fprintf(s.errOut, "airunway-render migrate: `--check` needs PATHs; as a KRM function, migrate reads a ResourceList on stdin\n")
				return exitCode(1)
			}
			if code := fn.RunMigrate(s.in, s.out, s.errOut); code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "change nothing; exit 2 when a file would change (for CI)")
	cmd.Flags().StringArrayVarP(&filenames, "filename", "f", nil, "YAML file or directory to migrate in place (repeatable; a directory is read recursively)")
	return cmd
}

// migrateFiles migrates every YAML file under paths in place. A file is
// rewritten only when something in it changes, so a second run changes
// nothing; a file with an error is left alone and the run fails.
func migrateFiles(paths []string, check bool, stdout, stderr io.Writer) error {
	files, err := migrateInputs(paths)
	if err != nil {
		fmt.Fprintf(stderr, "[error] %v\n", err)
		return exitCode(1)
	}
	var problems diag.List
	changedFiles := 0
	for _, f := range files {
		out, notes, l := migrateFile(f)
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
func migrateFile(file string) ([]byte, []string, diag.List) {
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
		changes, err := fn.MigrateItem(n)
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
