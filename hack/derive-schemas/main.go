// Command derive-schemas turns the upstream provider CRDs (kept outside this
// repository, in ../shared/crds) into the small JSON schema files under
// schemas/ that internal/schemacheck embeds.
//
// The upstream CRD files are data we did not write and are mostly prose
// (descriptions make some of them 1.6 MB), so instead of copying them we
// derive only what validation needs: each served version's openAPIV3Schema
// with the description keywords removed, plus provenance (source path and its
// sha256) in a generated schemas/README.md.
//
// Usage (from the repository root):
//
//	go run ./hack/derive-schemas -crds ../shared/crds -out schemas
//	go run ./hack/derive-schemas -crds ../shared/crds -out schemas -check
//
// The output is deterministic (sorted, no timestamps), so running it twice
// gives identical bytes and -check can be used to detect drift in CI.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// regenerateCommand is written into the generated README so readers know how
// the files were produced.
const regenerateCommand = "go run ./hack/derive-schemas -crds ../shared/crds -out schemas"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without os.Exit, so tests can drive it.
func run(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("derive-schemas", flag.ContinueOnError)
	fset.SetOutput(stderr)
	crdsDir := fset.String("crds", "../shared/crds", "directory holding the upstream CRD YAML files, one subdirectory per provider")
	outDir := fset.String("out", "schemas", "directory to write the derived schema files into")
	check := fset.Bool("check", false, "do not write; exit 1 if the files on disk differ from what would be written")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if fset.NArg() != 0 {
		fmt.Fprintf(stderr, "derive-schemas: unexpected arguments: %v\n", fset.Args())
		return 2
	}

	files, err := derive(*crdsDir)
	if err != nil {
		fmt.Fprintf(stderr, "derive-schemas: %v\n", err)
		return 2
	}

	if *check {
		diffs, err := compare(*outDir, files)
		if err != nil {
			fmt.Fprintf(stderr, "derive-schemas: %v\n", err)
			return 2
		}
		if len(diffs) > 0 {
			fmt.Fprintf(stderr, "derive-schemas: %d file(s) in %s are out of date; run: %s\n", len(diffs), *outDir, regenerateCommand)
			for _, d := range diffs {
				fmt.Fprintf(stderr, "  %s\n", d)
			}
			return 1
		}
		fmt.Fprintf(stdout, "derive-schemas: %s is up to date (%d files)\n", *outDir, len(files))
		return 0
	}

	if err := write(*outDir, files); err != nil {
		fmt.Fprintf(stderr, "derive-schemas: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "derive-schemas: wrote %d files to %s\n", len(files), *outDir)
	return 0
}

// derivedSchema describes one output JSON file.
type derivedSchema struct {
	OutPath    string // relative to the output dir, slash separated
	Source     string // relative to the crds dir, slash separated
	SourceSHA  string
	Group      string
	Kind       string
	Version    string
	Release    string
	Served     bool
	Storage    bool
	Deprecated bool
	Size       int
}

// derive reads every CRD under crdsDir and returns the output files keyed by
// their slash-separated path relative to the output directory (README.md
// included).
func derive(crdsDir string) (map[string][]byte, error) {
	st, err := os.Stat(crdsDir)
	if err != nil {
		return nil, fmt.Errorf("CRD directory %q is not available (%v); it is expected to hold the upstream CRDs, see the -crds flag", crdsDir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("CRD directory %q is not a directory", crdsDir)
	}

	var sources []string
	err = filepath.WalkDir(crdsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".yaml") {
			sources = append(sources, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no *.yaml files found under %q", crdsDir)
	}
	sort.Strings(sources)

	files := map[string][]byte{}
	var entries []derivedSchema
	for _, src := range sources {
		rel, err := filepath.Rel(crdsDir, src)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		out, err := deriveFile(src, rel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		for _, o := range out {
			if _, dup := files[o.entry.OutPath]; dup {
				return nil, fmt.Errorf("%s: output %s is produced by more than one source file", rel, o.entry.OutPath)
			}
			files[o.entry.OutPath] = o.data
			entries = append(entries, o.entry)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].OutPath < entries[j].OutPath })
	files["README.md"] = readme(entries)
	return files, nil
}

type output struct {
	entry derivedSchema
	data  []byte
}

func deriveFile(src, rel string) ([]output, error) {
	raw, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)

	provider, _, ok := strings.Cut(rel, "/")
	if !ok {
		return nil, errors.New("CRD files must live in a provider subdirectory (e.g. kaito/workspace-v0.10.0.yaml)")
	}
	release, err := releaseFromFilename(path.Base(rel))
	if err != nil {
		return nil, err
	}

	var outs []output
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		// Strict, so a field our apiextensions types do not know fails loudly
		// instead of silently vanishing from the derived schema.
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			return nil, err
		}
		if crd.Kind == "" && crd.APIVersion == "" {
			continue // comment-only document, e.g. an SPDX header before "---"
		}
		if crd.Kind != "CustomResourceDefinition" || crd.APIVersion != "apiextensions.k8s.io/v1" {
			return nil, fmt.Errorf("unexpected document %s %s, want apiextensions.k8s.io/v1 CustomResourceDefinition", crd.APIVersion, crd.Kind)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("version %s has no openAPIV3Schema", v.Name)
			}
			schema := v.Schema.OpenAPIV3Schema.DeepCopy()
			stripDescriptions(schema)
			e := derivedSchema{
				OutPath: fmt.Sprintf("%s/%s_%s_%s_%s.json", provider, crd.Spec.Group,
					strings.ToLower(crd.Spec.Names.Kind), v.Name, release),
				Source:     rel,
				SourceSHA:  hex.EncodeToString(sum[:]),
				Group:      crd.Spec.Group,
				Kind:       crd.Spec.Names.Kind,
				Version:    v.Name,
				Release:    release,
				Served:     v.Served,
				Storage:    v.Storage,
				Deprecated: v.Deprecated,
			}
			data, err := encode(map[string]any{
				"group":           e.Group,
				"kind":            e.Kind,
				"version":         e.Version,
				"release":         e.Release,
				"source":          e.Source,
				"served":          e.Served,
				"storage":         e.Storage,
				"deprecated":      e.Deprecated,
				"openAPIV3Schema": schema,
			})
			if err != nil {
				return nil, err
			}
			e.Size = len(data)
			outs = append(outs, output{entry: e, data: data})
		}
	}
	if len(outs) == 0 {
		return nil, errors.New("no CustomResourceDefinition found")
	}
	return outs, nil
}

var (
	// A semver tag, optionally with an rc/alpha/beta pre-release, optionally
	// followed by a local marker word such as "-deprecated" that is not part
	// of the upstream tag.
	semverRelease = regexp.MustCompile(`^.*-(v\d+\.\d+\.\d+(?:-(?:rc|alpha|beta)\.?\d+)?)(?:-[a-z]+)?$`)
	// An untagged branch snapshot: main-<short commit>.
	branchRelease = regexp.MustCompile(`-(main-[0-9a-f]{7,40})$`)
)

// releaseFromFilename extracts the upstream release from a CRD file name of
// the form <kind>-<group/version hint>-<release>.yaml. The hint itself can
// look like a version (v1, v1alpha2), so only a full vX.Y.Z counts.
func releaseFromFilename(name string) (string, error) {
	base := strings.TrimSuffix(name, ".yaml")
	if m := branchRelease.FindStringSubmatch(base); m != nil {
		return m[1], nil
	}
	if m := semverRelease.FindStringSubmatch(base); m != nil {
		return m[1], nil
	}
	return "", fmt.Errorf("cannot find a release (-vX.Y.Z or -main-<commit>) in file name %q", name)
}

// stripDescriptions clears the description keyword on every schema node.
// Walking the typed structure (rather than deleting "description" keys from a
// generic map) means a property *named* description, which lives as a key of
// Properties, is kept, and default/example values are left untouched.
func stripDescriptions(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.Description = ""
	if s.Items != nil {
		stripDescriptions(s.Items.Schema)
		stripSlice(s.Items.JSONSchemas)
	}
	stripSlice(s.AllOf)
	stripSlice(s.OneOf)
	stripSlice(s.AnyOf)
	stripDescriptions(s.Not)
	stripMap(s.Properties)
	stripMap(s.PatternProperties)
	stripMap(s.Definitions)
	if s.AdditionalProperties != nil {
		stripDescriptions(s.AdditionalProperties.Schema)
	}
	if s.AdditionalItems != nil {
		stripDescriptions(s.AdditionalItems.Schema)
	}
	for k, d := range s.Dependencies {
		stripDescriptions(d.Schema)
		s.Dependencies[k] = d
	}
}

func stripSlice(ss []apiextensionsv1.JSONSchemaProps) {
	for i := range ss {
		stripDescriptions(&ss[i])
	}
}

func stripMap(m map[string]apiextensionsv1.JSONSchemaProps) {
	for k, v := range m {
		stripDescriptions(&v)
		m[k] = v
	}
}

// encode renders v as 2-space indented JSON with sorted keys. The typed
// schema is round-tripped through map[string]any because encoding/json sorts
// map keys but emits struct fields in declaration order; UseNumber keeps
// large integers (e.g. int64 maximums) exact.
func encode(v any) ([]byte, error) {
	typed, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(typed))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep CEL rules such as "a < b && c" readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func readme(entries []derivedSchema) []byte {
	var b strings.Builder
	b.WriteString("# Derived provider CRD schemas\n\n")
	b.WriteString("Generated by `hack/derive-schemas`; do not edit by hand.\n\n")
	b.WriteString("Every `*.json` file here is derived from an upstream CustomResourceDefinition listed below: ")
	b.WriteString("one file per entry of `spec.versions`, holding that version's `openAPIV3Schema` with every ")
	b.WriteString("`description` keyword removed (validation rules, enums, defaults and `x-kubernetes-*` extensions are kept), ")
	b.WriteString("plus the group, kind, version, release and served/storage/deprecated flags. ")
	b.WriteString("The upstream CRDs are kept unmodified outside this repository in `../shared/crds` ")
	b.WriteString("(see its README.md for each file's repository, path and tag); all of them are licensed under the Apache License 2.0. ")
	b.WriteString("The source sha256 below identifies the exact upstream file each schema was derived from. ")
	b.WriteString("To regenerate, run from the repository root:\n\n")
	b.WriteString("```sh\n" + regenerateCommand + "\n```\n\n")
	b.WriteString("Add `-check` to only compare (exit status 1 when the files here differ).\n\n")
	b.WriteString("| File | Source | Group | Kind | Version | Release | Served | Storage | Deprecated | Bytes | Source sha256 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	total := 0
	for _, e := range entries {
		total += e.Size
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s | %s | %s | %t | %t | %t | %d | `%s` |\n",
			e.OutPath, e.Source, e.Group, e.Kind, e.Version, e.Release, e.Served, e.Storage, e.Deprecated, e.Size, e.SourceSHA)
	}
	fmt.Fprintf(&b, "\nTotal: %d schema files, %d bytes.\n", len(entries), total)
	return []byte(b.String())
}

// isGenerated reports whether a file under the output dir is one this
// program owns (so stale ones may be removed or reported). Hand-written files
// such as schemas/embed.go are never touched.
func isGenerated(rel string) bool {
	if rel == "README.md" {
		return true
	}
	dir, file := path.Split(rel)
	return strings.Count(dir, "/") == 1 && strings.HasSuffix(file, ".json")
}

// existing lists the generated-looking files currently under outDir.
func existing(outDir string) (map[string]bool, error) {
	found := map[string]bool{}
	err := filepath.WalkDir(outDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == outDir {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(outDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if isGenerated(rel) {
			found[rel] = true
		}
		return nil
	})
	return found, err
}

// compare returns a sorted description of every difference between files
// and the generated files under outDir.
func compare(outDir string, files map[string][]byte) ([]string, error) {
	onDisk, err := existing(outDir)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(outDir, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			diffs = append(diffs, "missing: "+rel)
		case err != nil:
			return nil, err
		case !bytes.Equal(got, want):
			diffs = append(diffs, "differs: "+rel)
		}
	}
	for rel := range onDisk {
		if _, ok := files[rel]; !ok {
			diffs = append(diffs, "stale:   "+rel)
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

// write writes files under outDir and removes generated files that are no
// longer produced, so the directory mirrors the CRD set exactly.
func write(outDir string, files map[string][]byte) error {
	onDisk, err := existing(outDir)
	if err != nil {
		return err
	}
	for rel := range onDisk {
		if _, ok := files[rel]; !ok {
			if err := os.Remove(filepath.Join(outDir, filepath.FromSlash(rel))); err != nil {
				return err
			}
		}
	}
	for rel, data := range files {
		p := filepath.Join(outDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
