package kbuild

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"
)

// FunctionName is the name by which a declaration is recognised as
// airunway-render's: the base name of an exec path, or the last path
// element of an image's repository.
const FunctionName = "airunway-render"

// Options configure Build.
type Options struct {
	// Function is the executable that runs as the KRM function (the
	// running airunway-render binary).
	Function string
	// Root, when set, is the only directory Build reads from.
	Root string
}

// Result is what Build made.
type Result struct {
	// YAML is the objects as `kustomize build` prints them.
	YAML []byte
	// RunsFunction reports whether the kustomization (or one it includes)
	// declares airunway-render, so that the objects come out rendered.
	RunsFunction bool
}

// Build runs the kustomization in dir.
func Build(dir string, o Options) (Result, error) {
	if o.Function == "" {
		return Result{}, errors.New("kbuild: no function executable")
	}
	fs := &rewritingFS{FileSystem: filesys.MakeFsOnDisk(), function: o.Function}
	if o.Root != "" {
		root, err := filepath.EvalSymlinks(o.Root)
		if err != nil {
			return Result{}, err
		}
		fs.root = root
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, err
	}
	if err := fs.check(abs); err != nil {
		return Result{}, err
	}
	// The options of `kustomize build --enable-alpha-plugins
	// --enable-exec` without other flags: the kustomization's own
	// sortOptions, else kustomize's legacy order; Helm off (it would run
	// the helm program).
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	opts.PluginConfig.HelmConfig.Enabled = false
	objs, err := krusty.MakeKustomizer(opts).Run(fs, abs)
	if err != nil {
		if fs.refused != nil {
			return Result{}, fs.refused
		}
		return Result{}, err
	}
	out, err := objs.AsYaml()
	return Result{YAML: out, RunsFunction: fs.rewrote}, err
}

// rewritingFS is the disk, read through two checks: paths stay under
// root (when set), and function declarations are rewritten to run
// function, or refused.
type rewritingFS struct {
	filesys.FileSystem
	function string
	root     string
	// refused is the first file this refused to read, reported instead of
	// kustomize's wording of the failure.
	refused error
	// rewrote: some file declared airunway-render.
	rewrote bool
}

// check refuses a path outside the root, symbolic links resolved.
func (f *rewritingFS) check(p string) error {
	if f.root == "" {
		return nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	if abs != f.root && !strings.HasPrefix(abs, f.root+string(filepath.Separator)) {
		return fmt.Errorf("%q is outside the repository %q; a kustomization built here may only read files in it", p, f.root)
	}
	return nil
}

// ReadFile reads through the checks. kustomize takes some read errors for
// "no such file" and words them so, so the first refusal is kept for
// Build to report.
func (f *rewritingFS) ReadFile(p string) ([]byte, error) {
	data, err := f.readFile(p)
	if err != nil && f.refused == nil && !errors.Is(err, os.ErrNotExist) {
		f.refused = err
	}
	return data, err
}

func (f *rewritingFS) readFile(p string) ([]byte, error) {
	if err := f.check(p); err != nil {
		return nil, err
	}
	data, err := f.FileSystem.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if f.root != "" && isKustomizationFile(p) {
		// Read before kustomize loads what it lists, so a remote base is
		// refused before anything is fetched.
		if err := localOnly(p, data); err != nil {
			return nil, err
		}
	}
	if !declaresFunction(data) {
		return data, nil
	}
	out, err := f.rewrite(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return out, nil
}

func (f *rewritingFS) Open(p string) (filesys.File, error) {
	if err := f.check(p); err != nil {
		return nil, err
	}
	return f.FileSystem.Open(p)
}

func (f *rewritingFS) IsDir(p string) bool { return f.check(p) == nil && f.FileSystem.IsDir(p) }

func (f *rewritingFS) Exists(p string) bool { return f.check(p) == nil && f.FileSystem.Exists(p) }

func (f *rewritingFS) ReadDir(p string) ([]string, error) {
	if err := f.check(p); err != nil {
		return nil, err
	}
	return f.FileSystem.ReadDir(p)
}

func (f *rewritingFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	if err := f.check(p); err != nil {
		return "", "", err
	}
	return f.FileSystem.CleanedAbs(p)
}

func (f *rewritingFS) Glob(pattern string) ([]string, error) {
	if err := f.check(filepath.Dir(pattern)); err != nil {
		return nil, err
	}
	return f.FileSystem.Glob(pattern)
}

func (f *rewritingFS) Walk(p string, walkFn filepath.WalkFunc) error {
	if err := f.check(p); err != nil {
		return err
	}
	return f.FileSystem.Walk(p, walkFn)
}

// functionKeys are the annotations kustomize reads a function from
// (runtimeutil.GetFunctionSpec).
var functionKeys = []string{runtimeutil.FunctionAnnotationKey, "config.k8s.io/function", "config.kubernetes.io/container"}

func declaresFunction(data []byte) bool {
	for _, k := range functionKeys {
		if bytes.Contains(data, []byte(k)) {
			return true
		}
	}
	return false
}

// rewrite points every airunway-render declaration in a file at
// f.function and refuses other functions.
func (f *rewritingFS) rewrite(data []byte) ([]byte, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		// Closed, not open: a declaration this cannot read might still be
		// one kustomize would run.
		return nil, fmt.Errorf("cannot read the function declarations in it: %w", err)
	}
	for _, n := range nodes {
		spec, err := runtimeutil.GetFunctionSpec(n)
		if err != nil || spec == nil {
			continue
		}
		if !isOurs(spec) {
			return nil, fmt.Errorf("%s %q declares the function %s; build runs only %s (run standalone kustomize with --enable-alpha-plugins for other functions)",
				n.GetKind(), n.GetName(), describe(spec), FunctionName)
		}
		annotations := n.GetAnnotations()
		for _, k := range functionKeys {
			delete(annotations, k)
		}
		decl := fmt.Sprintf("exec:\n  path: %q\n", f.function)
		if spec.DeferFailure {
			decl += "deferFailure: true\n"
		}
		annotations[runtimeutil.FunctionAnnotationKey] = decl
		if err := n.SetAnnotations(annotations); err != nil {
			return nil, err
		}
		f.rewrote = true
	}
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// isOurs: an exec path named airunway-render, or an image whose
// repository's last element is airunway-render.
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

func isKustomizationFile(p string) bool {
	return slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(p))
}

// referenceFields are the kustomization fields that name other files or
// kustomizations, which kustomize may fetch from a URL.
var referenceFields = []string{"resources", "bases", "components", "crds", "configurations", "generators", "transformers", "validators"}

// localOnly refuses a kustomization that lists a remote file or
// repository (a URL, git@host:..., or host/path that is not a local
// directory): a confined build reads the repository only, and fetches
// nothing.
func localOnly(p string, data []byte) error {
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil //nolint:nilerr // kustomize reports an unreadable kustomization itself
	}
	for _, field := range referenceFields {
		list, _ := k[field].([]any)
		for i, entry := range list {
			ref, ok := entry.(string)
			if ok && isRemote(filepath.Dir(p), ref) {
				return fmt.Errorf("%s: `%s[%d]` is %q, a remote reference; a kustomization built here may only read files in the repository", p, field, i, ref)
			}
		}
	}
	return nil
}

func isRemote(dir, ref string) bool {
	if strings.Contains(ref, "://") || strings.HasPrefix(ref, "git@") || strings.HasPrefix(ref, "git::") {
		return true
	}
	// github.com/org/repo//path?ref=v1: a host name first, and nothing of
	// that name here.
	first, _, _ := strings.Cut(ref, "/")
	if !strings.Contains(first, ".") || first == "." || first == ".." || strings.HasPrefix(first, ".") {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, first))
	return err != nil
}
