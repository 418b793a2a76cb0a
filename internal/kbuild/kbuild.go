package kbuild

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/budget"
)

// Options configure Build.
type Options struct {
	// Function is the executable that runs as the KRM function (the
	// running airunway-render binary).
	Function string
	// FunctionArgs are its arguments: none for the render function;
	// `migrate` for the models as a kustomization hands them to it,
	// migrated but not rendered (`plan --fleet` reads each cluster's
	// overlay so).
	FunctionArgs []string
	// Root is the repository: nothing outside it is read.
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

// Build runs the kustomization in dir, which must be inside o.Root.
func Build(dir string, o Options) (Result, error) {
	if o.Function == "" {
		return Result{}, errors.New("kbuild: no function executable")
	}
	if o.Root == "" {
		return Result{}, errors.New("kbuild: no repository root")
	}
	top, err := realPath(o.Root)
	if err != nil {
		return Result{}, err
	}
	decl := newDeclarations(o.Function, o.FunctionArgs)
	fsys, err := newRepoFS(top, budget.New(), decl)
	if err != nil {
		return Result{}, err
	}
	defer fsys.Close()
	target, name, err := fsys.CleanedAbs(dir)
	if err != nil {
		return Result{}, err
	}
	if name != "" {
		return Result{}, fmt.Errorf("%q is a file; build takes the directory that holds a kustomization", dir)
	}
	check := newChecker(fsys, decl)
	if err := check.kustomization(string(target), false); err != nil {
		return Result{}, err
	}
	if err := check.noKustomizationAsPlugin(); err != nil {
		return Result{}, err
	}
	var objs resmap.ResMap
	err = withoutNetwork(func() (err error) {
		objs, err = krusty.MakeKustomizer(options(check.declared)).Run(fsys, string(target))
		return err
	})
	if err != nil {
		if fsys.refused != nil {
			return Result{}, fsys.refused
		}
		return Result{}, err
	}
	out, err := asYAML(objs)
	return Result{YAML: out, RunsFunction: check.declared}, err
}

// asYAML is resmap's AsYaml (the objects as `kustomize build` prints
// them), within the output budget: kustomize's transformers copy data onto
// every object they select, so a 1 MiB commonAnnotations value over 200
// objects built 210 MB from 1 MB of input. The objects are counted first,
// then each one's bytes charged as it is written, so the build stops at
// the bound instead of writing it all.
func asYAML(objs resmap.ResMap) ([]byte, error) {
	if n := objs.Size(); n > budget.MaxOutputDocuments {
		return nil, &OutputExceeded{Objects: n}
	}
	var buf bytes.Buffer
	for i, r := range objs.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		if buf.Len()+len(b)+len("---\n") > budget.MaxOutputBytes {
			return nil, &OutputExceeded{Bytes: buf.Len() + len(b)}
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// OutputExceeded is a build whose objects are past the output budget.
type OutputExceeded struct {
	// Objects is how many there are, when they are too many; Bytes how
	// many bytes were written when the next object crossed the bound.
	Objects, Bytes int
}

func (e *OutputExceeded) Error() string {
	const why = "kustomize copies what a transformer sets (commonAnnotations, commonLabels, replacements, patches with a target) onto every object it selects; set it on fewer objects, or split the kustomization"
	if e.Objects > 0 {
		return fmt.Sprintf("the kustomization builds %d objects; a build may output at most %d (%s)", e.Objects, budget.MaxOutputDocuments, why)
	}
	return fmt.Sprintf("the kustomization builds more than %s of objects (%s written when the next object crossed it); a build may output at most %s, what one run of the function can read again (%s)", hub.FormatBytes(budget.MaxOutputBytes), hub.FormatBytes(e.Bytes), hub.FormatBytes(budget.MaxOutputBytes), why)
}

// options are those of `kustomize build`: the kustomization's own
// sortOptions, else kustomize's legacy order; Helm off (it would run the
// helm program). Plugins other than the builtins are off unless the
// kustomization declares airunway-render, which kustomize can only run as
// an executable: then exec functions are on, and the check has made sure
// that every function kustomize loads is airunway-render, pointed at the
// executable Build was given.
func options(runsFunction bool) *krusty.Options {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.PluginConfig = types.DisabledPluginConfig()
	if runsFunction {
		opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
		opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	}
	opts.PluginConfig.HelmConfig.Enabled = false
	return opts
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}
