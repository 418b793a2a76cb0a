package fn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
	"github.com/airunway-render/airunway-render/render"
	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// `airunway-render migrate` rewrites ModelDeployments to the newest form
// of their API: deprecated fields move to their replacements. With paths it
// edits the files in place (or, with --check, only reports); without, it is
// a KRM function that migrates the items of the ResourceList on stdin.
//
// Migrations (airunway.ai/v1alpha1 is the only served version so far):
//   - `spec.image` moves to `spec.engine.image`.

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

// migrateObject applies every migration to one object in place and says
// what changed. Migrations belong to a served version, so only v1alpha1
// ModelDeployments are touched; anything else, including an apiVersion
// that is not served (rendering reports it), is left alone.
func migrateObject(n *yaml.RNode) ([]string, error) {
	if _, bad := render.CheckShape(n); bad || n.GetKind() != hub.KindModelDeployment || n.GetApiVersion() != v1alpha1.APIVersion {
		return nil, nil
	}
	spec := n.Field("spec")
	if spec == nil || spec.Value.YNode().Kind != yaml.MappingNode {
		return nil, nil
	}
	orig := n.Copy()
	changes, err := moveImage(spec.Value)
	if err != nil || len(changes) == 0 {
		return changes, err
	}
	before, decoded := effectiveSpec(orig)
	if !decoded {
		return changes, nil
	}
	after, _ := effectiveSpec(n)
	if diffs := specDifferences(before, after); len(diffs) > 0 {
		return nil, fmt.Errorf("`spec.image` was not moved: as `spec.engine.image` it would change what the model means, because upstream's defaults would then set %s; decide those fields, write them in `spec` with the values you want, then run migrate again", strings.Join(diffs, ", "))
	}
	return changes, nil
}

// effectiveSpec is what a ModelDeployment means after upstream's defaults,
// flattened to field paths, with the image under the one path it has in
// the newest form. A migration must leave it unchanged: moving a field is
// not allowed to switch on a default (creating `spec.engine` turns on its
// CRD defaults, and `spec.image` alone suppresses the webhook's GPU
// default). It is false for an object the renderer cannot decode; that
// object is migrated on its structure alone and refused when rendered.
func effectiveSpec(n *yaml.RNode) (map[string]string, bool) {
	js, l := yamlerr.ObjectJSON(n)
	if l.HasErrors() {
		return nil, false
	}
	md, l := v1alpha1.DecodeModelDeployment(js)
	if l.HasErrors() {
		return nil, false
	}
	v1alpha1.DefaultModelDeployment(md)
	image := md.Spec.EngineImage()
	md.Spec.Image = ""
	if md.Spec.Engine != nil {
		md.Spec.Engine.Image = ""
	}
	b, err := json.Marshal(md.Spec)
	if err != nil {
		return nil, false
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, false
	}
	flat := map[string]string{}
	flatten("spec", tree, flat)
	if image != "" {
		flat["spec.engine.image"] = strconv.Quote(image)
	}
	return flat, true
}

// flatten records each scalar of a decoded JSON tree under its field path.
func flatten(at string, v any, into map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			flatten(at+"."+k, child, into)
		}
	case []any:
		for i, child := range v {
			flatten(fmt.Sprintf("%s[%d]", at, i), child, into)
		}
	default:
		b, _ := json.Marshal(v)
		into[at] = string(b)
	}
}

// specDifferences lists, sorted, each field whose effective value differs:
// "`spec.engine.enablePrefixCaching` to true (unset before)".
func specDifferences(before, after map[string]string) []string {
	var diffs []string
	for _, path := range slices.Sorted(maps.Keys(after)) {
		old, had := before[path]
		switch {
		case !had:
			diffs = append(diffs, fmt.Sprintf("`%s` to %s (unset before)", path, after[path]))
		case old != after[path]:
			diffs = append(diffs, fmt.Sprintf("`%s` to %s (%s before)", path, after[path], old))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(before)) {
		if _, kept := after[path]; !kept {
			diffs = append(diffs, fmt.Sprintf("`%s` to unset (%s before)", path, before[path]))
		}
	}
	return diffs
}

// moveImage moves the legacy `spec.image` to `spec.engine.image`, keeping
// its comments; equal values merge, different ones are an error (the
// renderer refuses them too).
func moveImage(spec *yaml.RNode) ([]string, error) {
	legacy := spec.Field("image")
	if legacy == nil {
		return nil, nil
	}
	engine, err := spec.Pipe(yaml.LookupCreate(yaml.MappingNode, "engine"))
	if err != nil {
		return nil, fmt.Errorf("`spec.engine` must be a mapping to take `spec.image`: %v", err)
	}
	if current := engine.Field("image"); current != nil {
		if current.Value.YNode().Value != legacy.Value.YNode().Value {
			return nil, fmt.Errorf("`spec.image` %q and `spec.engine.image` %q differ: keep one of them by hand", legacy.Value.YNode().Value, current.Value.YNode().Value)
		}
		if err := spec.PipeE(yaml.Clear("image")); err != nil {
			return nil, err
		}
		return []string{"removed `spec.image`, the same as `spec.engine.image`"}, nil
	}
	// Move the key node itself: its comments go with it.
	engine.YNode().Content = append(engine.YNode().Content, legacy.Key.YNode(), legacy.Value.YNode())
	if err := spec.PipeE(yaml.Clear("image")); err != nil {
		return nil, err
	}
	return []string{"moved `spec.image` to `spec.engine.image`"}, nil
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
