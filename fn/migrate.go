package fn

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/render"
)

// `airunway-render migrate` rewrites ModelDeployments to the newest form
// of their API with the served version's migrations (package
// api/v1alpha1/migrations). With paths it edits the files in place (or,
// with --check, only reports); without, it is a KRM function that migrates
// the items of the ResourceList on stdin.

// exitWouldChange is the --check status when a file would change.
const exitWouldChange = 2

func runMigrate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := pflag.NewFlagSet("migrate", pflag.ContinueOnError)
	flags.SetOutput(stderr)
	check := flags.Bool("check", false, "change nothing; exit 2 when a file would change (for CI)")
	if err := flags.Parse(args); err != nil {
		fmt.Fprintf(stderr, "airunway-render migrate: %v\n\n%s", err, usage)
		return 1
	}
	if flags.NArg() == 0 {
		if *check {
			fmt.Fprintf(stderr, "airunway-render migrate: `--check` needs PATHs; as a KRM function, migrate reads a ResourceList on stdin\n")
			return 1
		}
		return migrateFunction(stdin, stdout, stderr)
	}
	return migrateFiles(flags.Args(), *check, stdout, stderr)
}

// migrateFiles migrates every YAML file under paths in place. A file is
// rewritten only when something in it changes, so a second run changes
// nothing; a file with an error is left alone and the run fails.
func migrateFiles(paths []string, check bool, stdout, stderr io.Writer) int {
	files, err := migrateInputs(paths)
	if err != nil {
		fmt.Fprintf(stderr, "[error] %v\n", err)
		return 1
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
	reportOutcome(stderr, problems, "no file was changed")
	switch {
	case problems.HasErrors():
		return 1
	case check && changedFiles > 0:
		fmt.Fprintf(stderr, "airunway-render migrate --check: %d file(s) would change; run `airunway-render migrate` on them\n", changedFiles)
		return exitWouldChange
	}
	return 0
}

// migrateFile returns the file's new content, nil when nothing changes,
// with a note per change.
func migrateFile(file string) ([]byte, []string, diag.List) {
	var l diag.List
	budget := hub.MaxInputBytes
	data, err := readLimited(file, &budget)
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
		changes, err := migrateObject(n)
		if err != nil {
			l = append(l, diag.Problem{Severity: diag.Error, File: file, Resource: objectRef(n), Message: err.Error()})
			continue
		}
		for _, c := range changes {
			notes = append(notes, objectRef(n).String()+": "+c)
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

// migrateFunction is migrate as a KRM function: items migrated, each
// change reported as an info result, errors as error results (and then
// the items as they came).
func migrateFunction(stdin io.Reader, stdout, stderr io.Writer) int {
	in, ok := readStdin(stdin, stderr)
	if !ok {
		return 1
	}
	rl, err := readResourceList(in)
	if err != nil {
		fmt.Fprintf(stderr, "[error] stdin: cannot read the ResourceList: %v\n", err)
		return 1
	}
	var problems diag.List
	copies := make([]*yaml.RNode, len(rl.items))
	for i, n := range rl.items {
		copies[i] = n.Copy()
		changes, err := migrateObject(copies[i])
		if err != nil {
			problems = append(problems, diag.Problem{Severity: diag.Error, Resource: objectRef(n), Message: err.Error()})
		}
		for _, c := range changes {
			problems = append(problems, diag.Problem{Severity: diag.Info, Resource: objectRef(n), Message: c})
		}
	}
	items := copies
	if problems.HasErrors() {
		items = rl.items
	}
	w := &resourceListWriter{functionConfig: rl.functionConfig, results: rl.results}
	for _, p := range problems.Sorted() {
		w.results = append(w.results, toResult(p))
	}
	for _, n := range items {
		b, key, err := encodeItem(n)
		if err != nil {
			fmt.Fprintf(stderr, "[error] %v\n", err)
			return 1
		}
		w.items = append(w.items, render.Encoded{CallerKey: key, YAML: b})
	}
	out, err := w.write()
	if err == nil {
		_, err = stdout.Write(out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "[error] %v\n", err)
		return 1
	}
	reportOutcome(stderr, problems, "nothing was migrated")
	if problems.HasErrors() {
		return 1
	}
	return 0
}

// migrateObject applies its version's migrations to a ModelDeployment in
// place and says what changed. Anything else, including an apiVersion that
// is not served (rendering reports it), is left alone.
func migrateObject(n *yaml.RNode) ([]string, error) {
	if _, bad := render.CheckShape(n); bad || n.GetKind() != hub.KindModelDeployment {
		return nil, nil
	}
	v, served := versions.Lookup(n.GetApiVersion())
	if !served {
		return nil, nil
	}
	return v.Migrate(n)
}

// migrateInputs lists the YAML files under paths, as render reads them.
func migrateInputs(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		found, err := yamlFiles(p)
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

// objectRef names an object in problems; nothing when its shape is not one
// kyaml's accessors can read.
func objectRef(n *yaml.RNode) diag.Resource {
	if _, bad := render.CheckShape(n); bad {
		return diag.Resource{}
	}
	return diag.Resource{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
}
