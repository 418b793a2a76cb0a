package kbuild

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// checker reads, before kustomize runs, every kustomization a build
// reads, decoded as kustomize decodes it (types.Kustomization's Unmarshal,
// then FixKustomization: keys match as kustomize matches them, in any
// case), and decides what may run:
//
//   - no reference may be remote (kustomize would fetch it with git or
//     HTTP), decided by kustomize's own parser of repository URLs;
//   - every object listed under `generators`, `transformers` or
//     `validators` must be a builtin plugin's config or declare
//     airunway-render; inline ones are rewritten in the kustomization;
//   - a directory listed there must hold a kustomization that only lists
//     `resources`, so that the objects kustomize loads from it are the ones
//     in its files (a `commonAnnotations`, a patch or a generator could
//     otherwise make a function declaration no file holds).
//
// Each kustomization is then served to kustomize as it was decoded and
// checked.
type checker struct {
	fs       *repoFS
	decl     *declarations
	resmaps  *resmap.Factory
	visited  map[visit]bool
	declared bool // some generator or transformer list declares airunway-render
	// plugins are the files kustomize loads as plugins, by absolute path.
	plugins map[string]bool
}

type visit struct {
	dir   string
	plain bool
}

func newChecker(fsys *repoFS, decl *declarations) *checker {
	return &checker{fs: fsys, decl: decl, resmaps: resmap.NewFactory(decl.factory), visited: map[visit]bool{}, plugins: map[string]bool{}}
}

// kustomization checks the kustomization in dir and everything it lists;
// plain: it was listed under `generators`, `transformers` or `validators`.
func (c *checker) kustomization(dir string, plain bool) error {
	if c.visited[visit{dir, plain}] {
		return nil
	}
	c.visited[visit{dir, plain}] = true
	file, k, err := c.load(dir)
	if err != nil {
		return err
	}
	if plain {
		if err := onlyResources(file, k); err != nil {
			return err
		}
	}
	refs := []struct {
		field string
		list  []string
	}{{"resources", k.Resources}, {"components", k.Components}, {"crds", k.Crds}, {"configurations", k.Configurations}}
	for _, ref := range refs {
		for i, entry := range ref.list {
			if err := notRemote(file, ref.field, i, entry); err != nil {
				return err
			}
		}
	}
	for _, entry := range append(slices.Clone(k.Resources), k.Components...) {
		if err := c.reference(dir, entry, plain); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for i, entry := range list.entries {
			rewritten, err := c.pluginEntry(dir, file, list.field, i, entry)
			if err != nil {
				return err
			}
			list.entries[i] = rewritten
		}
	}
	served, err := json.Marshal(k)
	if err != nil {
		return err
	}
	c.fs.kustomizations[file] = served
	return nil
}

// load reads the kustomization file in dir as kustomize's loader does:
// exactly one of the recognised names, resolving inside dir.
func (c *checker) load(dir string) (string, *types.Kustomization, error) {
	var file string
	var data []byte
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		resolved, err := c.fs.resolveFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) || (err == nil && !filesys.ConfirmedDir(filepath.Dir(resolved)).HasPrefix(filesys.ConfirmedDir(dir))) {
			continue // kustomize's loader does not read it either
		}
		if err != nil {
			return "", nil, err
		}
		if file != "" {
			return "", nil, fmt.Errorf("found multiple kustomization files under %s", dir)
		}
		if data, err = c.fs.read(resolved); err != nil {
			return "", nil, err
		}
		file = resolved
	}
	if file == "" {
		return "", nil, fmt.Errorf("unable to find one of %s in directory %q", quoteAll(konfig.RecognizedKustomizationFileNames()), dir)
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return "", nil, fmt.Errorf("%s: %w", file, err)
	}
	k.FixKustomization()
	if errs := k.EnforceFields(); len(errs) > 0 {
		return "", nil, fmt.Errorf("%s: %s", file, strings.Join(errs, "; "))
	}
	return file, &k, nil
}

// reference checks a `resources` or `components` entry: a directory is a
// kustomization to check; a file listed by a plain kustomization holds
// objects kustomize loads as plugins.
func (c *checker) reference(dir, entry string, plain bool) error {
	d, name, err := c.fs.CleanedAbs(filepath.Join(dir, entry))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // kustomize reports it; it reads nothing there
	}
	if err != nil {
		return err
	}
	if name == "" {
		return c.kustomization(string(d), plain)
	}
	if plain {
		return c.pluginFile(d.Join(name))
	}
	return nil
}

// pluginEntry checks one entry of a `generators`, `transformers` or
// `validators` list and returns it as kustomize is to read it. kustomize
// takes an entry for inline objects when its resource factory reads it as
// such, else for a path.
func (c *checker) pluginEntry(dir, file, field string, i int, entry string) (string, error) {
	if inline, err := c.resmaps.NewResMapFromBytes([]byte(entry)); err == nil {
		rewritten, err := c.pluginObjects(inline)
		if err != nil {
			return "", fmt.Errorf("%s: `%s[%d]`: %w", file, field, i, err)
		}
		if rewritten == nil {
			return entry, nil
		}
		return string(rewritten), nil
	}
	if err := notRemote(file, field, i, entry); err != nil {
		return "", err
	}
	if isKustomizationFile(entry) {
		return "", fmt.Errorf("%s: `%s[%d]` is %q, a kustomization file; list the plugin configs there, or the directory that holds them", file, field, i, entry)
	}
	d, name, err := c.fs.CleanedAbs(filepath.Join(dir, entry))
	if errors.Is(err, fs.ErrNotExist) {
		return entry, nil
	}
	if err != nil {
		return "", err
	}
	if name == "" {
		if err := c.kustomization(string(d), true); err != nil {
			return "", err
		}
		return entry, nil
	}
	return entry, c.pluginFile(d.Join(name))
}

// pluginFile checks the objects of a file kustomize loads as plugins. The
// file system serves the file rewritten by the same decisions. A
// kustomization file is none: kustomize would get the check's decoding of
// it, whose metadata is no plugin's.
func (c *checker) pluginFile(abs string) error {
	if isKustomizationFile(abs) {
		return fmt.Errorf("%s is a kustomization file, listed under `generators`, `transformers` or `validators`; list the plugin configs there, or the directory that holds them", abs)
	}
	c.plugins[abs] = true
	data, err := c.fs.read(abs)
	if err != nil {
		return err
	}
	objects, err := c.resmaps.NewResMapFromBytes(data)
	if err != nil {
		return nil //nolint:nilerr // kustomize refuses it when it reads it
	}
	if _, err := c.pluginObjects(objects); err != nil {
		return fmt.Errorf("%s: %w", abs, err)
	}
	return nil
}

// pluginObjects checks objects kustomize is to load as plugins: each is a
// builtin plugin's config or declares airunway-render. It returns them
// with airunway-render's declarations rewritten, or nil when none is.
func (c *checker) pluginObjects(objects resmap.ResMap) ([]byte, error) {
	resources := objects.Resources()
	rewritten := make([]*yaml.RNode, len(resources))
	changed := false
	for i, res := range resources {
		if isBuiltin(res) {
			continue
		}
		node, decided, err := c.decl.decide(res)
		if err != nil {
			return nil, err
		}
		if decided != declaresOurs {
			return nil, fmt.Errorf("%s %q is neither a builtin plugin's config (apiVersion %q) nor a function declaration of %s; kustomize would look for a plugin program of that kind, and build runs none",
				res.GetKind(), res.GetName(), konfig.BuiltinPluginApiVersion, FunctionName)
		}
		rewritten[i], changed, c.declared = node, true, true
	}
	if !changed {
		return nil, nil
	}
	return c.decl.encode(resources, rewritten)
}

// onlyResources refuses a kustomization listed under `generators`,
// `transformers` or `validators` that does more than list `resources`.
func onlyResources(file string, k *types.Kustomization) error {
	rest := *k
	rest.TypeMeta, rest.MetaData, rest.Resources, rest.BuildMetadata = types.TypeMeta{}, nil, nil, nil
	if reflect.DeepEqual(rest, types.Kustomization{}) && k.Kind != types.ComponentKind {
		return nil
	}
	data, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, "`"+name+"`")
	}
	sort.Strings(names)
	if k.Kind == types.ComponentKind {
		names = append(names, "kind `Component`")
	}
	return fmt.Errorf("%s is listed under `generators`, `transformers` or `validators`, and uses %s; a kustomization listed there may only list `resources`, so that the plugins it loads are the objects in its files", file, strings.Join(names, ", "))
}

func quoteAll(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(quoted, ", ")
}

// noKustomizationAsPlugin refuses, once every kustomization is read, a
// plugin file the check also read as a kustomization under another name
// (a symbolic link named kustomization.yaml that leads to it).
func (c *checker) noKustomizationAsPlugin() error {
	for _, p := range slices.Sorted(maps.Keys(c.plugins)) {
		if _, ok := c.fs.kustomizations[p]; ok {
			return fmt.Errorf("%s is a kustomization, listed under `generators`, `transformers` or `validators`; list the plugin configs there, or the directory that holds them", p)
		}
	}
	return nil
}
