package kbuild

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/hasher"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/parentdeath"
)

// FunctionName is the name by which a declaration is recognised as
// airunway-render's: the base name of an exec path, or the last path
// element of an image's repository.
const FunctionName = "airunway-render"

// functionKeys are where kustomize reads a function declaration from
// (runtimeutil.GetFunctionSpec): three annotations and a legacy field.
var functionKeys = []string{runtimeutil.FunctionAnnotationKey, "config.k8s.io/function", "config.kubernetes.io/container"}

// declarations decides what an object kustomize reads may run, with
// kustomize's own decoding: its resource factory splits a file into
// objects (lists inlined) and its function loader's steps read the
// declaration from each (fnplugin.GetFunctionSpec: the object as YAML,
// parsed again, then runtimeutil.GetFunctionSpec). So however a key is
// spelled (escaped, in flow style, in a List), the declaration decided on
// is the one kustomize would run.
type declarations struct {
	// function is the executable every airunway-render declaration runs,
	// with args (Options.FunctionArgs).
	function string
	args     []string
	factory  *resource.Factory
	// files caches rewriteFile by path.
	files map[string]fileRead
}

func newDeclarations(function string, args []string) *declarations {
	return &declarations{function: function, args: args, factory: resource.NewFactory(&hasher.Hasher{}), files: map[string]fileRead{}}
}

// decision is what an object in a generator, transformer or validator list
// makes kustomize do.
type decision int

const (
	declaresNothing decision = iota // no function: a plain object, or a builtin's config
	declaresOurs                    // airunway-render
)

// decide reads res's function declaration as kustomize's function loader
// does. It returns the object with airunway-render's declaration rewritten
// to run d.function (nil when res declares nothing), and refuses any other
// declaration.
func (d *declarations) decide(res *resource.Resource) (*yaml.RNode, decision, error) {
	text, err := res.AsYAML()
	if err != nil {
		return nil, declaresNothing, err
	}
	node, err := yaml.Parse(string(text))
	if err != nil {
		return nil, declaresNothing, err
	}
	spec, err := runtimeutil.GetFunctionSpec(node)
	if err != nil {
		// Closed, not open: kustomize refuses it as a generator or a
		// transformer, but might read the parts it understands elsewhere.
		return nil, declaresNothing, fmt.Errorf("%s %q: cannot read its function declaration: %w", node.GetKind(), node.GetName(), err)
	}
	if spec == nil {
		return nil, declaresNothing, nil
	}
	if !isOurs(spec) {
		return nil, declaresNothing, fmt.Errorf("%s %q declares the function %s; build runs only %s (run standalone kustomize with --enable-alpha-plugins for other functions)",
			node.GetKind(), node.GetName(), describe(spec), FunctionName)
	}
	if err := d.rewrite(node, spec); err != nil {
		return nil, declaresNothing, err
	}
	return node, declaresOurs, nil
}

// rewrite makes node's declaration run d.function and nothing else: the
// declaration in every other place kustomize reads one is removed, so no
// second declaration, image or argument of the original survives.
func (d *declarations) rewrite(node *yaml.RNode, spec *runtimeutil.FunctionSpec) error {
	if err := node.PipeE(yaml.Lookup("metadata"), yaml.Clear("configFn")); err != nil {
		return err
	}
	annotations := node.GetAnnotations()
	for _, k := range functionKeys {
		delete(annotations, k)
	}
	declaration := fmt.Sprintf("exec:\n  path: %q\n", d.function)
	for i, a := range d.args {
		if i == 0 {
			declaration += "  args:\n"
		}
		declaration += fmt.Sprintf("  - %q\n", a)
	}
	// The function dies with this process (parentdeath.Tie), which it
	// knows by its PID, even if this process ends before the function
	// looks.
	declaration += fmt.Sprintf("  envs:\n  - %q\n", parentdeath.Env())
	if spec.DeferFailure {
		declaration += "deferFailure: true\n"
	}
	annotations[runtimeutil.FunctionAnnotationKey] = declaration
	return node.SetAnnotations(annotations)
}

// isBuiltin is kustomize's test for a builtin plugin's config
// (plugins/loader.isBuiltinPlugin): kustomize runs those in process.
func isBuiltin(res *resource.Resource) bool {
	gvk := res.GetGvk()
	return gvk.Group == "" && gvk.Version == konfig.BuiltinPluginApiVersion
}

// rewriteFile is a file as kustomize is to read it: unchanged when it
// declares no function, with airunway-render's declarations rewritten when
// it does, and refused when it declares another. Every file kustomize reads
// passes here, whatever it reads it for: an object in a generator or
// transformer list is read from such a file, so no function reaches
// kustomize unchecked even where the check of the kustomizations and
// kustomize would disagree about a file's use.
func (d *declarations) rewriteFile(abs string, data []byte) ([]byte, error) {
	if r, ok := d.files[abs]; ok {
		return r.data, r.err
	}
	out, err := d.rewriteObjects(data)
	if err != nil {
		err = fmt.Errorf("%s: %w", abs, err)
		out = nil
	}
	d.files[abs] = fileRead{data: out, err: err}
	return out, err
}

func (d *declarations) rewriteObjects(data []byte) ([]byte, error) {
	resources, err := d.factory.SliceFromBytes(data)
	if err != nil {
		// Not objects: a generator's data file, or YAML kustomize refuses
		// itself when it reads it as objects. Either way nothing runs.
		return data, nil //nolint:nilerr // see above
	}
	rewritten := make([]*yaml.RNode, len(resources))
	changed := false
	for i, res := range resources {
		node, decided, err := d.decide(res)
		if err != nil {
			return nil, err
		}
		if decided == declaresOurs {
			rewritten[i], changed = node, true
		}
	}
	if !changed {
		return data, nil
	}
	return d.encode(resources, rewritten)
}

// encode writes resources as one YAML stream, each rewritten one in its
// place. All are written as kustomize's function loader reads them (JSON
// to YAML, one key each), so what kustomize reads back holds exactly the
// rewritten declaration.
func (d *declarations) encode(resources []*resource.Resource, rewritten []*yaml.RNode) ([]byte, error) {
	var b bytes.Buffer
	for i, res := range resources {
		if i > 0 {
			b.WriteString("---\n")
		}
		if rewritten[i] != nil {
			s, err := rewritten[i].String()
			if err != nil {
				return nil, err
			}
			b.WriteString(s)
			continue
		}
		text, err := res.AsYAML()
		if err != nil {
			return nil, err
		}
		b.Write(text)
	}
	return b.Bytes(), nil
}

// isOurs: an exec path named airunway-render, or an image whose
// repository's last element is airunway-render. Whatever path or image
// it names, the declaration runs the given executable instead.
func isOurs(spec *runtimeutil.FunctionSpec) bool {
	if p := spec.Exec.Path; p != "" {
		return path.Base(filepath.ToSlash(p)) == FunctionName
	}
	image := spec.Container.Image
	if image == "" {
		return false
	}
	repo, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return path.Base(repo) == FunctionName
}

func describe(spec *runtimeutil.FunctionSpec) string {
	if spec.Exec.Path != "" {
		return fmt.Sprintf("exec %q", spec.Exec.Path)
	}
	if spec.Container.Image != "" {
		return fmt.Sprintf("image %q", spec.Container.Image)
	}
	return "(neither exec nor image)"
}
