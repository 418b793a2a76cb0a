package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/api/konfig"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/safefile"
)

// The Argo CD Config Management Plugin command (examples/argocd/plugin.yaml).
// argocd-cmp-server runs it with the application's directory as the working
// directory, the Application's `spec.source.plugin.env` entries prefixed
// with ARGOCD_ENV_, and ARGOCD_APP_SOURCE_PATH set to that directory's path
// in the repository. It reads nothing else, and everything it reads goes
// through an os.Root of the repository: the sidecar holds other files (its
// service account token) that no Application may read through the renderer.
const (
	envCapabilities = "ARGOCD_ENV_CAPABILITIES"
	envSourcePath   = "ARGOCD_APP_SOURCE_PATH"
)

func newArgoCDCommand(s streams) *cobra.Command {
	argocd := &cobra.Command{
		Use:   "argocd",
		Short: "Commands for the Argo CD Config Management Plugin",
		Example: `  # what argocd-cmp-server runs for an Application (examples/argocd/plugin.yaml)
  airunway-render argocd generate`,
		Args: cobra.NoArgs, // an argument is an unknown subcommand
		RunE: func(cmd *cobra.Command, _ []string) error { return usagef("a subcommand is required") },
	}
	argocd.AddCommand(&cobra.Command{
		Use:   "generate",
		Short: "Build or render the application's directory (run by argocd-cmp-server)",
		Long: `Print the objects of the Argo CD application's directory, as
argocd-cmp-server runs it: in the application's directory, with
ARGOCD_APP_SOURCE_PATH set.

A directory with a kustomization is built as ` + "`airunway-render build`" + ` builds
it (kustomize's library, in process): patches, replicas, images and
namespaces apply as ` + "`kustomize build`" + ` applies them. An overlay that runs
airunway-render itself (examples/kustomize/clusters/prod) needs nothing
else; a kustomization that does not is rendered with the capability file
ARGOCD_ENV_CAPABILITIES names (relative to the repository root). A
directory of plain YAML is rendered with that file.

Nothing outside the repository is read, an empty result is an error
(Argo CD would prune the application), and a run longer than two minutes
is stopped with an error.`,
		Example: `  # an Application whose path is a kustomize overlay that runs airunway-render
  ARGOCD_APP_SOURCE_PATH=examples/kustomize/clusters/prod airunway-render argocd generate

  # plain YAML (or a kustomization without the function): name the capability file
  # in the Application: spec.source.plugin.env: [{name: CAPABILITIES, value: clusters/prod/capabilities.yaml}]
  ARGOCD_ENV_CAPABILITIES=clusters/prod/capabilities.yaml ARGOCD_APP_SOURCE_PATH=apps/models airunway-render argocd generate`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return argoGenerate(s.out, s.errOut) },
	})
	return argocd
}

// argoGenerate prints the application's objects. A directory with a
// kustomization is built as kustomize would build it (build, in process),
// patches and all; the kustomization runs the renderer itself, or
// ARGOCD_ENV_CAPABILITIES names the capability file to render the built
// objects with. A directory of plain YAML is rendered with that file.
// Empty output is an error: Argo CD would take it as "no objects" and
// prune the application.
func argoGenerate(stdout, stderr io.Writer) error {
	stop := stopAfter(defaultBuildTimeout, stderr, "Argo CD plugin's generate")
	defer stop()
	app, caps, err := argoFiles()
	if err != nil {
		return fail(err)
	}
	defer app.root.Close()
	out, ok := argoObjects(app, caps, stderr)
	if !ok {
		return exitCode(1)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return fail(errors.New("the application's directory rendered no objects; Argo CD could prune every object of the application, so this is an error (does the Application's `spec.source.path` point at the directory with the ModelDeployments?)"))
	}
	if _, err := stdout.Write(out); err != nil {
		return fail(err)
	}
	return nil
}

// argoObjects is the application's objects as a YAML stream; problems
// go to stderr.
func argoObjects(app rootFiles, caps string, stderr io.Writer) ([]byte, bool) {
	if isKustomization(app, ".") {
		return argoBuild(app, caps, stderr)
	}
	if caps == "" {
		fmt.Fprintf(stderr, "[error] `%s` must name the cluster's capability file, relative to the repository root: set `spec.source.plugin.env` to [{name: CAPABILITIES, value: clusters/<cluster>/capabilities.yaml}] in the Application (or point it at a kustomize overlay that runs airunway-render, such as examples/kustomize/clusters/prod)\n", envCapabilities)
		return nil, false
	}
	err := checkKustomizations(app)
	var files []string
	if err == nil {
		files, err = yamlFiles(app, ".")
	}
	if err != nil {
		reportError(stderr, err)
		return nil, false
	}
	return renderStream(app, caps, files, stderr)
}

// renderStream renders paths with the capability file into a YAML stream.
func renderStream(src files, caps string, paths []string, stderr io.Writer) ([]byte, bool) {
	objects, ok := renderPaths(src, caps, paths, diag.Policy{}, nil, stderr)
	var out bytes.Buffer
	if ok {
		ok = writeStream(&out, objects) == nil
	}
	return out.Bytes(), ok
}

// argoBuild builds the application's kustomization, confined to the
// repository. A kustomization that runs airunway-render gives the objects
// as kustomize prints them; one that does not is rendered with the
// capability file caps names.
func argoBuild(app rootFiles, caps string, stderr io.Writer) ([]byte, bool) {
	top := app.root.Name()
	res, err := buildKustomization(filepath.Join(top, filepath.FromSlash(app.dir)), top)
	switch {
	case err != nil:
		reportError(stderr, fmt.Errorf("kustomize build of the application's directory: %w", err))
		return nil, false
	case res.RunsFunction && caps != "":
		fmt.Fprintf(stderr, "[error] `%s` is set, but the application's kustomization runs airunway-render itself, with the capability file it lists: remove CAPABILITIES from the Application's `spec.source.plugin.env`\n", envCapabilities)
		return nil, false
	case res.RunsFunction:
		return res.YAML, true
	case caps == "":
		fmt.Fprintf(stderr, "[error] the application's kustomization does not run airunway-render and `%s` is unset: add the function to its `transformers` (examples/kustomize/clusters/prod), or name the capability file in the Application's `spec.source.plugin.env`\n", envCapabilities)
		return nil, false
	}
	return renderStream(builtFiles{files: app, built: map[string][]byte{stdinName: res.YAML}}, caps, []string{stdinName}, stderr)
}

// argoFiles opens the repository as an os.Root, with names relative to the
// application's directory (the working directory), and returns the name in
// it of the capability file ARGOCD_ENV_CAPABILITIES names ("" when unset).
// That file is relative to the repository root and must stay inside it.
func argoFiles() (app rootFiles, caps string, err error) {
	rel := os.Getenv(envCapabilities)
	if rel != "" && !filepath.IsLocal(filepath.FromSlash(rel)) {
		return app, "", fmt.Errorf("`%s` is %q: it must be a relative path inside the repository, without `..`", envCapabilities, rel)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return app, "", err
	}
	top, dir, err := repoRootOf(cwd, os.Getenv(envSourcePath))
	if err != nil {
		return app, "", err
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return app, "", err
	}
	app = rootFiles{root: root, dir: dir}
	if rel == "" {
		return app, "", nil
	}
	// Named from the application's directory, as problems show it.
	caps = path.Join(strings.Repeat("../", strings.Count(dir, "/")+1), filepath.ToSlash(rel))
	if dir == "." {
		caps = filepath.ToSlash(rel)
	}
	if _, err := root.Stat(filepath.FromSlash(rel)); err != nil {
		_ = root.Close()
		return app, "", fmt.Errorf("`%s` is %q: %v", envCapabilities, rel, outsideOrMissing(err))
	}
	return app, caps, nil
}

// outsideOrMissing words an os.Root error for the user.
func outsideOrMissing(err error) string {
	if safefile.Escapes(err) {
		return escapeMessage
	}
	return fmt.Sprintf("cannot read it: %v", err)
}

// repoRootOf strips the application's source path from the working
// directory, which argocd-cmp-server sets to <repository copy>/<path>, and
// returns the repository root and the source path as a slash path in it.
func repoRootOf(cwd, sourcePath string) (top, dir string, err error) {
	clean := filepath.Clean(filepath.FromSlash(sourcePath))
	if sourcePath == "" || clean == "." {
		return cwd, ".", nil
	}
	if !filepath.IsLocal(clean) || !strings.HasSuffix(cwd, string(filepath.Separator)+clean) {
		return "", "", fmt.Errorf("`%s` is %q, but the working directory %q does not end with it: this command must run in the application's directory, as argocd-cmp-server runs it", envSourcePath, sourcePath, cwd)
	}
	return strings.TrimSuffix(cwd, string(filepath.Separator)+clean), filepath.ToSlash(clean), nil
}

// kustomizationKeys are the only fields a kustomization in the application's
// directory may use: the plugin reads YAML files as they are, so anything
// kustomize would change (patches, namePrefix, images, ...) would be lost
// without a word.
var kustomizationKeys = map[string]bool{"apiVersion": true, "kind": true, "resources": true}

// checkKustomizations rejects kustomization files the plugin cannot honour:
// fields other than a plain resources list, or resources outside the
// directory (a base the plugin would not read).
func checkKustomizations(app rootFiles) error {
	var problems []string
	err := app.walk(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(konfig.RecognizedKustomizationFileNames(), d.Name()) {
			problems = append(problems, checkKustomization(app, p)...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s; in a directory without a kustomization of its own the plugin renders the YAML files as they are: point the Application at the kustomization's directory, which the plugin builds", strings.Join(problems, "; "))
	}
	return nil
}

func checkKustomization(app rootFiles, file string) []string {
	data, err := readObjectFile(app, file)
	if errors.Is(err, errTooLarge) {
		return []string{fmt.Sprintf("%q: is larger than %s; a kustomization must be at most %s", file, hub.FormatBytes(hub.MaxObjectBytes), hub.FormatBytes(hub.MaxObjectBytes))}
	}
	if err != nil {
		return []string{fmt.Sprintf("%q: %s", file, outsideOrMissing(err))}
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
	return append(problems, unlisted(app, file, listed)...)
}

// unlisted names the YAML files beside a kustomization that its resources
// leave out: kustomize would not deploy them, the plugin would.
func unlisted(app rootFiles, file string, listed map[string]bool) []string {
	entries, err := app.readDir(path.Dir(file))
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
