package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fn"
	"github.com/airunway-render/airunway-render/internal/budget"
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
a move that would change what the model means is refused, naming the
fields to set first. A model the renderer would not read (a misspelled
apiVersion, kind or field, a wrong type) fails the run. --to converts
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

// migrateFiles migrates every YAML file under paths in place, in two
// passes. The first reads and migrates them all and writes nothing, so bad
// input (a conflict, a link out of the paths, a read-only file) fails the
// run with no file changed. The second writes the files that change; each
// write stands alone, and when one fails the summary names exactly the
// files that were changed and those that were not. A file is rewritten
// only when something in it changes, so a second run changes nothing.
func migrateFiles(paths []string, check bool, to string, stdout, stderr io.Writer) error {
	names, err := migrateInputs(paths)
	if err != nil {
		return fail(err)
	}
	scope, err := newNamedScope(paths)
	if err != nil {
		return fail(err)
	}
	defer scope.close()
	pending, problems := planEdits(scope, names, migrateEdit(to), !check)
	if check {
		for _, p := range pending {
			printNotes(stdout, p)
		}
	}
	problems.Report(stderr, "no file was changed")
	switch {
	case problems.HasErrors():
		return exitCode(1)
	case check && len(pending) > 0:
		fmt.Fprintf(stderr, "airunway-render migrate --check: %d file(s) would change; run `airunway-render migrate` on them\n", len(pending))
		return exitCode(exitWouldChange)
	case check:
		return nil
	}
	return writeMigrations(pending, "needed migrating", stdout, stderr)
}

// migration is a file whose content changes: what was read of it, and
// what it becomes.
type migration struct {
	target namedFile
	read   fileSnapshot
	out    []byte
	notes  []string
	data   []byte // what was read, until it is migrated
}

// planEdits reads and migrates the files named, writing nothing; the
// files to write must also be writable when forWrite. The files together
// are read within one input budget, as render reads them: their bytes, and
// their documents and nodes, each file's charged before it is migrated.
func planEdits(scope *namedScope, names []string, edit itemEdit, forWrite bool) ([]migration, diag.List) {
	var pending []migration
	var problems diag.List
	seen := map[fileID]bool{}
	b := budget.New()
	for _, name := range names {
		m, err := readForMigration(scope, name, seen, b)
		if err != nil {
			problems = append(problems, fileProblem(name, "cannot read", err))
			if budget.IsExceeded(err) {
				break // the budget is spent: the files after it are not read
			}
			continue
		}
		if m == nil {
			continue // another name of a file read already
		}
		var l diag.List
		m.out, m.notes, l = editFile(name, m.data, edit)
		problems = append(problems, l...)
		if m.out == nil {
			continue
		}
		if forWrite {
			if err := m.target.checkWritable(m.read); err != nil {
				problems = append(problems, fileProblem(name, "cannot write", err))
				continue
			}
		}
		m.data = nil
		pending = append(pending, *m)
	}
	return pending, problems
}

// readForMigration reads one file of the scope; nil when the file was read
// already under another name (a link to it, a hard link).
func readForMigration(scope *namedScope, name string, seen map[fileID]bool, b *budget.Budget) (*migration, error) {
	target, err := scope.locate(name)
	if err != nil {
		return nil, err
	}
	f, info, err := target.open(os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	id := snapshotOf(info, nil).id()
	if seen[id] {
		return nil, nil
	}
	if id != (fileID{}) { // the zero id: the system does not say
		seen[id] = true
	}
	data, err := b.ReadAll(f)
	if err == nil {
		err = b.Stream(data)
	}
	if err != nil {
		return nil, err
	}
	return &migration{target: target, read: snapshotOf(info, data), data: data}, nil
}

// fileProblem is err as a problem of file: a refusal says all, an I/O
// error is prefixed with what migrate could not do.
func fileProblem(file, what string, err error) diag.Problem {
	msg := what + ": " + err.Error()
	var r refusal
	var exceeded *budget.Exceeded
	switch {
	case errors.As(err, &r):
		msg = r.msg
	case errors.As(err, &exceeded) && exceeded.Limit == budget.LimitBytes:
		msg = fmt.Sprintf("brings the input past %s; the files given to one run must hold at most %s together (migrate fewer paths per run)", hub.FormatBytes(hub.MaxInputBytes), hub.FormatBytes(hub.MaxInputBytes))
	case errors.As(err, &exceeded):
		msg = exceeded.Error()
	}
	return diag.Problem{Severity: diag.Error, File: file, Message: msg}
}

// writeMigrations writes the files in order, each on its own: a failure
// does not stop the others, and the summary names exactly which files were
// changed and which were not.
func writeMigrations(pending []migration, needed string, stdout, stderr io.Writer) error {
	var problems diag.List
	var changed, unchanged, torn []string
	for _, m := range pending {
		outcome, err := m.target.write(m.read, m.out)
		if err != nil {
			problems = append(problems, fileProblem(m.target.name, "cannot write", err))
		}
		switch outcome {
		case written:
			changed = append(changed, m.target.name)
			printNotes(stdout, m)
		case partlyWritten:
			torn = append(torn, m.target.name)
		default:
			unchanged = append(unchanged, m.target.name)
		}
	}
	problems.Report(stderr, writeSummary(len(pending), needed, changed, unchanged, torn))
	if problems.HasErrors() {
		return exitCode(1)
	}
	return nil
}

// writeSummary says what a run with write errors did; "no file was
// changed" only when that is so.
func writeSummary(needed int, why string, changed, unchanged, torn []string) string {
	if len(changed) == 0 && len(torn) == 0 {
		return "no file was changed"
	}
	s := fmt.Sprintf("changed %d of the %d file(s) that %s: %s", len(changed), needed, why, strings.Join(changed, ", "))
	if len(changed) == 0 {
		s = fmt.Sprintf("changed none of the %d file(s) that %s", needed, why)
	}
	if len(unchanged) > 0 {
		s += "; not changed: " + strings.Join(unchanged, ", ")
	}
	if len(torn) > 0 {
		s += "; may be partly written (restore from version control, then run migrate again): " + strings.Join(torn, ", ")
	}
	return s
}

func printNotes(w io.Writer, m migration) {
	for _, n := range m.notes {
		fmt.Fprintf(w, "%s: %s\n", m.target.name, n)
	}
}

// itemEdit changes one object of a file in place and says what changed;
// an error leaves the file unwritten (versions.MigrateProblems reports it).
type itemEdit func(n *yaml.RNode) ([]string, error)

// migrateEdit is migrate's edit: deprecated fields moved, and a
// conversion to the version to, when given.
func migrateEdit(to string) itemEdit {
	return func(n *yaml.RNode) ([]string, error) { return versions.MigrateItem(n, to) }
}

// editFile returns the new content of file, whose content is data, with
// each object edited (comments and layout kept); nil when nothing
// changes, with a note per change.
func editFile(file string, data []byte, edit itemEdit) ([]byte, []string, diag.List) {
	var l diag.List
	r := &kio.ByteReader{Reader: bytes.NewReader(data), PreserveSeqIndent: true}
	nodes, err := r.Read()
	if err != nil {
		l = append(l, diag.Problem{Severity: diag.Error, File: file, Message: "is not YAML kyaml can read: " + err.Error()})
		return nil, nil, l
	}
	var notes []string
	for _, n := range nodes {
		changes, err := edit(n)
		if err != nil {
			l = append(l, versions.MigrateProblems(n, file, err)...)
			continue
		}
		for _, c := range changes {
			notes = append(notes, versions.ItemRef(n).String()+": "+c)
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
