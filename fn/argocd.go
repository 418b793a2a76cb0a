package fn

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// The Argo CD Config Management Plugin command (examples/argocd/plugin.yaml).
// argocd-cmp-server runs them with the application's directory as the
// working directory, the Application's `spec.source.plugin.env` entries
// prefixed with ARGOCD_ENV_, and ARGOCD_APP_SOURCE_PATH set to that
// directory's path in the repository. They read nothing else.
const (
	envCapabilities = "ARGOCD_ENV_CAPABILITIES"
	envSourcePath   = "ARGOCD_APP_SOURCE_PATH"
)

const argoUsage = "usage: airunway-render argocd generate (run by argocd-cmp-server in the application's directory)\n"

func runArgoCD(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, argoUsage)
		return 1
	}
	if args[0] == "generate" {
		return argoGenerate(stdout, stderr)
	}
	fmt.Fprintf(stderr, "airunway-render argocd: unknown command %q\n%s", args[0], argoUsage)
	return 1
}

// argoGenerate renders the application's directory with the capability file
// ARGOCD_ENV_CAPABILITIES names, and prints the objects. Empty output is an
// error: Argo CD would take it as "no objects" and prune the application.
func argoGenerate(stdout, stderr io.Writer) int {
	caps, root, err := argoCapabilities()
	if err == nil {
		err = checkKustomizations(".")
	}
	var files []string
	if err == nil {
		files, err = inputsInside(root)
	}
	if err != nil {
		fmt.Fprintf(stderr, "[error] %v\n", err)
		return 1
	}
	objects, ok := renderPaths(caps, files, stderr)
	if !ok {
		return 1
	}
	if len(objects) == 0 {
		fmt.Fprintf(stderr, "[error] the application's directory rendered no objects; Argo CD could prune every object of the application, so this is an error (does the Application's `spec.source.path` point at the directory with the ModelDeployments?)\n")
		return 1
	}
	if err := writeStream(stdout, objects); err != nil {
		fmt.Fprintf(stderr, "[error] %v\n", err)
		return 1
	}
	return 0
}

// argoCapabilities resolves ARGOCD_ENV_CAPABILITIES, a path relative to the
// repository root, to a path relative to the working directory. It must stay
// inside the repository: the sidecar holds other files (its service account
// token) that no Application may read through the renderer.
func argoCapabilities() (caps, root string, err error) {
	rel := os.Getenv(envCapabilities)
	if rel == "" {
		return "", "", fmt.Errorf("`%s` must name the cluster's capability file, relative to the repository root: set `spec.source.plugin.env` to [{name: CAPABILITIES, value: clusters/<cluster>/capabilities.yaml}] in the Application", envCapabilities)
	}
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", "", fmt.Errorf("`%s` is %q: it must be a relative path inside the repository, without `..`", envCapabilities, rel)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	if root, err = repoRootOf(cwd, os.Getenv(envSourcePath)); err != nil {
		return "", "", err
	}
	target := filepath.Join(root, filepath.FromSlash(rel))
	if err := requireInside(root, target); err != nil {
		return "", "", fmt.Errorf("`%s` is %q: %v", envCapabilities, rel, err)
	}
	caps, err = filepath.Rel(cwd, target)
	return caps, root, err
}

// inputsInside returns the YAML files of the application's directory, the
// exact list that is then rendered, and fails when one is a symlink out of
// the repository. Argo CD refuses such links itself; the plugin does not
// rely on that, since it would print the file's content.
func inputsInside(root string) ([]string, error) {
	files, err := yamlFiles(".")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		if err := requireInside(root, abs); err != nil {
			return nil, fmt.Errorf("%q: %v", f, err)
		}
	}
	return files, nil
}

// repoRootOf strips the application's source path from the working
// directory, which argocd-cmp-server sets to <repository copy>/<path>.
func repoRootOf(cwd, sourcePath string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(sourcePath))
	if sourcePath == "" || clean == "." {
		return cwd, nil
	}
	if !filepath.IsLocal(clean) || !strings.HasSuffix(cwd, string(filepath.Separator)+clean) {
		return "", fmt.Errorf("`%s` is %q, but the working directory %q does not end with it: this command must run in the application's directory, as argocd-cmp-server runs it", envSourcePath, sourcePath, cwd)
	}
	return strings.TrimSuffix(cwd, string(filepath.Separator)+clean), nil
}

// requireInside fails when target, with symlinks resolved, leaves root.
func requireInside(root, target string) error {
	real, err := resolveInside(root, target)
	if errors.Is(err, errOutside) {
		return fmt.Errorf("must stay inside the repository, but it resolves to %q, outside the repository", real)
	}
	if err != nil {
		return fmt.Errorf("cannot read it: %v", err)
	}
	return nil
}

// kustomizationKeys are the only fields a kustomization in the application's
// directory may use: the plugin reads YAML files as they are, so anything
// kustomize would change (patches, namePrefix, images, ...) would be lost
// without a word.
var kustomizationKeys = map[string]bool{"apiVersion": true, "kind": true, "resources": true}

// checkKustomizations rejects kustomization files the plugin cannot honour:
// fields other than a plain resources list, or resources outside the
// directory (a base the plugin would not read).
func checkKustomizations(dir string) error {
	var problems []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch d.Name() {
		case "kustomization.yaml", "kustomization.yml", "Kustomization":
			problems = append(problems, checkKustomization(p)...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s; the plugin renders the YAML files as they are: point the Application at a directory of plain YAML, or render the overlay with kustomize in CI (examples/flux)", strings.Join(problems, "; "))
	}
	return nil
}

func checkKustomization(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return []string{err.Error()}
	}
	var k map[string]any
	if err := sigsyaml.Unmarshal(data, &k); err != nil {
		return []string{fmt.Sprintf("%q: cannot read it: %v", file, err)}
	}
	var problems []string
	keys := make([]string, 0, len(k))
	for key := range k {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if !kustomizationKeys[key] {
			problems = append(problems, fmt.Sprintf("%q: `%s` must not be used", file, key))
		}
	}
	resources, isList := k["resources"].([]any)
	if k["resources"] != nil && !isList {
		problems = append(problems, fmt.Sprintf("%q: `resources` must be a list", file))
	}
	listed := map[string]bool{}
	for i, r := range resources {
		s, _ := r.(string)
		if !filepath.IsLocal(filepath.FromSlash(s)) || strings.Contains(s, "://") {
			problems = append(problems, fmt.Sprintf("%q: `resources[%d]` is %q: it must be a file inside the directory", file, i, s))
		}
		listed[filepath.Clean(filepath.FromSlash(s))] = true
	}
	return append(problems, unlisted(file, listed)...)
}

// unlisted names the YAML files beside a kustomization that its resources
// leave out: kustomize would not deploy them, the plugin would.
func unlisted(file string, listed map[string]bool) []string {
	entries, err := os.ReadDir(filepath.Dir(file))
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") || strings.HasPrefix(strings.ToLower(name), "kustomization.") || listed[name] {
			continue
		}
		problems = append(problems, fmt.Sprintf("%q: %q is not listed in `resources`, so kustomize would leave it out, but the plugin would render it", file, name))
	}
	return problems
}
