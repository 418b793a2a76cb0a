// Command derive-schemas turns the upstream provider CRDs (kept outside this
// repository, in ../shared/crds) into the small JSON schema files under
// schemas/ that internal/testing/schemacheck embeds.
//
// The upstream CRD files are data we did not write and are mostly prose
// (descriptions make some of them 1.6 MB), so instead of copying them we
// derive only what validation needs: each served version's openAPIV3Schema
// with the description keywords removed, plus provenance (source path and its
// sha256) in a generated schemas/README.md.
//
// A few CRDs are read from Go modules instead (modules.go): the Gateway API
// releases and channels ../shared/crds does not hold, fetched with
// `go mod download`. Fewer still are pinned Git files (modules.go too): a
// file of a repository whose Go module the proxy does not serve, named by
// commit and sha256 and read from a directory given with -pinned.
//
// Usage (from the repository root):
//
//	go run ./hack/derive-schemas -crds ../shared/crds -out schemas
//	go run ./hack/derive-schemas -crds ../shared/crds -out schemas -check
//	go run ./hack/derive-schemas -crds ../shared/crds -out schemas -modules=false # offline
//	go run ./hack/derive-schemas -crds ../shared/crds -out schemas -pinned DIR    # also the pinned Git files
//
// Besides each version's schema, the JSON files keep what an installable
// CRD needs (names, scope, subresources, printer columns, the API-approval
// annotation), so internal/testing/schemacheck.CRD can rebuild one for envtest
// without ../shared. hack/gencrd builds the ModelDeployment CRD that
// deploy/base installs from the airunway.ai file derived here.
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
	"slices"
	"sort"
	"strconv"
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
	modules := fset.Bool("modules", true, "also derive the CRDs declared in modules.go from their Go modules (runs `go mod download`); "+
		"with -modules=false the files derived from them are left as they are, for offline use")
	pinned := fset.String("pinned", "", "directory holding the pinned Git files of modules.go, each at <repository>/<path>, "+
		"for example DIR/github.com/ai-dynamo/dynamo/deploy/...; without it, or for a repository DIR lacks, the files derived from them are left as they are")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if fset.NArg() != 0 {
		fmt.Fprintf(stderr, "derive-schemas: unexpected arguments: %v\n", fset.Args())
		return 2
	}

	if *pinned != "" {
		if st, err := os.Stat(*pinned); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "derive-schemas: -pinned: %q is not a directory\n", *pinned)
			return 2
		}
	}
	d, err := derive(*crdsDir, *outDir, sourceOptions{modules: *modules, pinnedDir: *pinned})
	if err != nil {
		fmt.Fprintf(stderr, "derive-schemas: %v\n", err)
		return 2
	}
	files := d.files

	if *check {
		diffs, err := compare(*outDir, files, d.kept)
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
		fmt.Fprintf(stdout, "derive-schemas: %s is up to date (%d files%s)\n", *outDir, len(files), keptNote(d.kept))
		return 0
	}

	if err := write(*outDir, files, d.kept); err != nil {
		fmt.Fprintf(stderr, "derive-schemas: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "derive-schemas: wrote %d files to %s%s\n", len(files), *outDir, keptNote(d.kept))
	return 0
}

func keptNote(kept map[string]bool) string {
	if len(kept) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d module-derived or pinned files not re-derived (-modules=false, or no -pinned)", len(kept))
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
	Channel    string // Gateway API release channel; "" for other CRDs
	Served     bool
	Storage    bool
	Deprecated bool
	Size       int
}

// derived is everything derive produces: the output files keyed by their
// slash-separated path relative to the output directory (README.md
// included), and the module-derived files that were not re-derived
// (-modules=false) and must be kept as they are.
type derived struct {
	files map[string][]byte
	kept  map[string]bool
}

// sourceOptions says which sources of modules.go a run reads: the Go
// modules (modules) and the pinned Git files (from pinnedDir, when set).
type sourceOptions struct {
	modules   bool
	pinnedDir string
}

// derive reads every CRD under crdsDir and the sources of modules.go that
// opts selects. The files derived from the others, already in outDir, are
// kept and their README rows carried over, so an offline run changes
// nothing they describe.
func derive(crdsDir, outDir string, opts sourceOptions) (*derived, error) {
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

	d := &derived{files: map[string][]byte{}, kept: map[string]bool{}}
	var entries []derivedSchema
	add := func(source string, outs []output) error {
		for _, o := range outs {
			if _, dup := d.files[o.entry.OutPath]; dup || d.kept[o.entry.OutPath] {
				return fmt.Errorf("%s: output %s is produced by more than one source", source, o.entry.OutPath)
			}
			d.files[o.entry.OutPath] = o.data
			entries = append(entries, o.entry)
		}
		return nil
	}
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
		if err := add(rel, out); err != nil {
			return nil, err
		}
	}

	var skipped []moduleJob
	for _, j := range moduleJobs(moduleSources) {
		var out []output
		var err error
		switch {
		case j.pinned() && pinnedPresent(opts.pinnedDir, j.Module):
			out, err = deriveModule(j, pinnedFetcher(opts.pinnedDir))
		case !j.pinned() && opts.modules:
			out, err = deriveModule(j, fetchModule)
		default:
			skipped = append(skipped, j)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", j.source(), err)
		}
		if err := add(j.source(), out); err != nil {
			return nil, err
		}
	}
	carried, err := carryOver(outDir, skipped)
	if err != nil {
		return nil, err
	}
	for _, e := range carried {
		if _, dup := d.files[e.OutPath]; dup || d.kept[e.OutPath] {
			return nil, fmt.Errorf("%s: output %s is produced by more than one source", e.Source, e.OutPath)
		}
		d.kept[e.OutPath] = true
		entries = append(entries, e)
	}

	sort.Slice(entries, func(i, j int) bool { return entries[i].OutPath < entries[j].OutPath })
	d.files["README.md"] = readme(entries, moduleSources)
	return d, nil
}

type output struct {
	entry derivedSchema
	data  []byte
}

// origin says where CRD bytes came from and what they must contain.
type origin struct {
	Provider string // schemas/ subdirectory, before the channel suffix
	Source   string // as shown in the README and the "source" key
	Release  string
	Channel  string
	Group    string   // when set, every CRD must be of this group
	Kind     string   // when set, every CRD must be of this kind
	Versions []string // when set, only these spec.versions are derived, and each must exist
}

func deriveFile(src, rel string) ([]output, error) {
	raw, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	provider, _, ok := strings.Cut(rel, "/")
	if !ok {
		return nil, errors.New("CRD files must live in a provider subdirectory (e.g. kaito/workspace-v0.10.0.yaml)")
	}
	release, err := releaseFromFilename(path.Base(rel))
	if err != nil {
		return nil, err
	}
	channel, err := channelFromFilename(path.Base(rel))
	if err != nil {
		return nil, err
	}
	return deriveCRDs(raw, origin{Provider: provider, Source: rel, Release: release, Channel: channel})
}

// Gateway API stamps every CRD with its bundle version and channel; checking
// them catches a mislabelled source (an experimental file named standard, or
// the wrong release) before it is validated against as the other one.
const (
	channelAnnotation       = "gateway.networking.k8s.io/channel"
	bundleVersionAnnotation = "gateway.networking.k8s.io/bundle-version"
)

func deriveCRDs(raw []byte, o origin) ([]output, error) {
	sum := sha256.Sum256(raw)
	found := map[string]bool{}
	keep := func(version string) bool { return len(o.Versions) == 0 || slices.Contains(o.Versions, version) }

	crds, err := readCRDs(raw)
	if err != nil {
		return nil, err
	}
	var outs []output
	for _, crd := range crds {
		if o.Group != "" && crd.Spec.Group != o.Group {
			return nil, fmt.Errorf("CRD group must be %q, not %q", o.Group, crd.Spec.Group)
		}
		if o.Kind != "" && crd.Spec.Names.Kind != o.Kind {
			return nil, fmt.Errorf("CRD kind must be %q, not %q", o.Kind, crd.Spec.Names.Kind)
		}
		if c, ok := crd.Annotations[channelAnnotation]; ok && c != o.Channel {
			return nil, fmt.Errorf("annotation %s is %q, but the source must be channel %q", channelAnnotation, c, o.Channel)
		}
		if r, ok := crd.Annotations[bundleVersionAnnotation]; ok && r != o.Release {
			return nil, fmt.Errorf("annotation %s is %q, but the source must be release %q", bundleVersionAnnotation, r, o.Release)
		}
		for _, v := range crd.Spec.Versions {
			if !keep(v.Name) {
				continue // not declared: left out to keep schemas/ small
			}
			found[v.Name] = true
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("version %s has no openAPIV3Schema", v.Name)
			}
			schema := v.Schema.OpenAPIV3Schema.DeepCopy()
			stripDescriptions(schema)
			e := derivedSchema{
				OutPath:    outPath(o.Provider, o.Channel, crd.Spec.Group, crd.Spec.Names.Kind, v.Name, o.Release),
				Source:     o.Source,
				SourceSHA:  hex.EncodeToString(sum[:]),
				Group:      crd.Spec.Group,
				Kind:       crd.Spec.Names.Kind,
				Version:    v.Name,
				Release:    o.Release,
				Channel:    o.Channel,
				Served:     v.Served,
				Storage:    v.Storage,
				Deprecated: v.Deprecated,
			}
			doc := map[string]any{
				"group":           e.Group,
				"kind":            e.Kind,
				"version":         e.Version,
				"release":         e.Release,
				"source":          e.Source,
				"served":          e.Served,
				"storage":         e.Storage,
				"deprecated":      e.Deprecated,
				"openAPIV3Schema": schema,
				// What internal/testing/schemacheck needs, besides the schema, to
				// rebuild an installable CRD (schemacheck.CRD).
				"names": crd.Spec.Names,
				"scope": crd.Spec.Scope,
			}
			// Optional keys only when set, so the files stay small and a
			// version without them reads the same as upstream.
			if e.Channel != "" {
				doc["channel"] = e.Channel
			}
			if a := keptAnnotations(crd.Annotations); len(a) > 0 {
				doc["annotations"] = a
			}
			if v.Subresources != nil {
				doc["subresources"] = v.Subresources
			}
			if cols := stripColumnDescriptions(v.AdditionalPrinterColumns); len(cols) > 0 {
				doc["additionalPrinterColumns"] = cols
			}
			if len(v.SelectableFields) > 0 {
				doc["selectableFields"] = v.SelectableFields
			}
			data, err := encode(doc)
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
	for _, v := range o.Versions {
		if !found[v] {
			return nil, fmt.Errorf("CRD must have version %q", v)
		}
	}
	return outs, nil
}

// keptAnnotationKeys are the CRD annotations copied into the derived files.
// The API server refuses a CRD of a protected group (*.k8s.io,
// *.kubernetes.io) without api-approved.kubernetes.io; the bundle-version
// and channel stamps are what Gateway API tooling reads to tell which
// bundle is installed. Tooling annotations (controller-gen version, Helm
// resource policy) are left out.
var keptAnnotationKeys = []string{
	"api-approved.kubernetes.io",
	channelAnnotation,
	bundleVersionAnnotation,
	"inference.networking.k8s.io/bundle-version",
	"llm-d.ai/bundle-version",
}

func keptAnnotations(all map[string]string) map[string]string {
	kept := map[string]string{}
	for _, k := range keptAnnotationKeys {
		if v, ok := all[k]; ok {
			kept[k] = v
		}
	}
	return kept
}

// stripColumnDescriptions returns a copy of printer columns without their
// description, which is upstream prose like the schema descriptions.
func stripColumnDescriptions(cols []apiextensionsv1.CustomResourceColumnDefinition) []apiextensionsv1.CustomResourceColumnDefinition {
	if len(cols) == 0 {
		return nil
	}
	out := make([]apiextensionsv1.CustomResourceColumnDefinition, len(cols))
	for i, c := range cols {
		c.Description = ""
		out[i] = c
	}
	return out
}

// readCRDs decodes every CustomResourceDefinition in a multi-document
// YAML file, strictly, so a field our apiextensions types do not know fails
// loudly instead of silently vanishing from what is derived.
func readCRDs(raw []byte) ([]apiextensionsv1.CustomResourceDefinition, error) {
	var crds []apiextensionsv1.CustomResourceDefinition
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return crds, nil
		}
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			return nil, err
		}
		if crd.Kind == "" && crd.APIVersion == "" {
			continue // comment-only document, e.g. an SPDX header before "---"
		}
		if crd.Kind != "CustomResourceDefinition" || crd.APIVersion != "apiextensions.k8s.io/v1" {
			return nil, fmt.Errorf("unexpected document %s %s, want apiextensions.k8s.io/v1 CustomResourceDefinition", crd.APIVersion, crd.Kind)
		}
		crds = append(crds, crd)
	}
}

// outPath is <provider>[-<channel>]/<group>_<kind>_<version>_<release>.json.
// Channels other than standard get their own directory, because the file
// name does not carry the channel and both channels share every release.
func outPath(provider, channel, group, kind, version, release string) string {
	dir := provider
	if channel != "" && channel != "standard" {
		dir += "-" + channel
	}
	return fmt.Sprintf("%s/%s_%s_%s_%s.json", dir, group, strings.ToLower(kind), version, release)
}

// channelFromFilename finds a Gateway API channel word in a CRD file name
// such as httproute-standard-v1.5.1.yaml; "" when there is none.
func channelFromFilename(name string) (string, error) {
	channel := ""
	for _, word := range strings.Split(strings.TrimSuffix(name, ".yaml"), "-") {
		if word != "standard" && word != "experimental" {
			continue
		}
		if channel != "" && channel != word {
			return "", fmt.Errorf("file name %q must not name more than one channel", name)
		}
		channel = word
	}
	return channel, nil
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

func readme(entries []derivedSchema, mods []moduleSource) []byte {
	var b strings.Builder
	b.WriteString("# Derived provider CRD schemas\n\n")
	b.WriteString("Generated by `hack/derive-schemas`; do not edit by hand.\n\n")
	b.WriteString("Every `*.json` file here is derived from an upstream CustomResourceDefinition listed below: ")
	b.WriteString("one file per entry of `spec.versions`, holding that version's `openAPIV3Schema` with every ")
	b.WriteString("`description` keyword removed (validation rules, enums, defaults and `x-kubernetes-*` extensions are kept), ")
	b.WriteString("plus the group, kind, version, release, channel (Gateway API CRDs only) and served/storage/deprecated flags, ")
	b.WriteString("and what `internal/testing/schemacheck` needs to rebuild an installable CRD from them (`schemacheck.CRD`): ")
	b.WriteString("the CRD's `names` (plural, singular, listKind, shortNames, categories) and `scope`, its ")
	b.WriteString("`" + strings.Join(keptAnnotationKeys, "`, `") + "` annotations when present, ")
	b.WriteString("and the version's `subresources`, `additionalPrinterColumns` (descriptions removed) and `selectableFields`. ")
	b.WriteString("Conversion webhooks, deprecation warnings and other annotations are not kept. ")
	if len(mods) > 0 {
		b.WriteString("Most upstream CRDs (all but the module sources below) are ")
	} else {
		b.WriteString("The upstream CRDs are ")
	}
	b.WriteString("kept unmodified outside this repository in `../shared/crds` ")
	b.WriteString("(see its README.md for each file's repository, path and tag); all of them are licensed under the Apache License 2.0. ")
	b.WriteString("The source sha256 below identifies the exact upstream file each schema was derived from. ")
	b.WriteString("To regenerate, run from the repository root:\n\n")
	b.WriteString("```sh\n" + regenerateCommand + "\n```\n\n")
	b.WriteString("Add `-check` to only compare (exit status 1 when the files here differ).\n\n")
	if len(mods) > 0 {
		b.WriteString("## Module sources\n\n")
		b.WriteString("Some CRDs are not in `../shared/crds` but read from the Go modules declared in ")
		b.WriteString("`hack/derive-schemas/modules.go`, as `go mod download -json <module>@<release>` fetches them ")
		b.WriteString("from the Go module proxy (checked against the Go checksum database). Their Source column reads ")
		b.WriteString("`<module>@<release> <path in the module>`, and only the CRD versions declared there are derived. ")
		b.WriteString("The table leaves out the releases and channels `../shared/crds` holds (a file produced twice is an error). ")
		b.WriteString("Standard-channel schemas live in `<provider>/`, other channels in `<provider>-<channel>/` ")
		b.WriteString("(for example `gateway-api-experimental/`). ")
		b.WriteString("`-modules=false` skips them for offline use and keeps the files derived from them as they are.\n\n")
		seen := map[string]bool{}
		var pinned []moduleSource
		for _, m := range mods {
			if m.pinned() {
				pinned = append(pinned, m)
				continue
			}
			if seen[m.Module] {
				continue
			}
			seen[m.Module] = true
			fmt.Fprintf(&b, "- `%s`: %s data from %s.\n", m.Module, m.License, m.Repo)
		}
		b.WriteString("\n")
		if len(pinned) > 0 {
			b.WriteString("### Pinned Git files\n\n")
			b.WriteString("A repository whose Go module the proxy does not serve is read as one file pinned to a commit and ")
			b.WriteString("to the sha256 of its bytes (declared in `hack/derive-schemas/modules.go`, checked before anything is derived). ")
			b.WriteString("Their Source column reads `<repository>@<commit, 12 digits> <path>`. ")
			b.WriteString("A run re-derives them only with `-pinned DIR`, DIR holding each file at `<repository>/<path>` ")
			b.WriteString("(for example from `git -C <clone> show <commit>:<path>`, or the repository's raw file URL at that commit); ")
			b.WriteString("without it, or for a repository DIR does not hold, the files derived from them are kept as they are.\n\n")
			for _, m := range pinned {
				fmt.Fprintf(&b, "- `%s` at `%s`: `%s` (sha256 `%s`), %s.\n", m.Repo, m.Commit, m.File, m.SHA256, m.License)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("| File | Source | Group | Kind | Version | Release | Channel | Served | Storage | Deprecated | Bytes | Source sha256 |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	total := 0
	for _, e := range entries {
		total += e.Size
		b.WriteString(readmeRow(e))
	}
	fmt.Fprintf(&b, "\nTotal: %d schema files, %d bytes.\n", len(entries), total)
	return []byte(b.String())
}

func readmeRow(e derivedSchema) string {
	return fmt.Sprintf("| `%s` | `%s` | `%s` | %s | %s | %s | %s | %t | %t | %t | %d | `%s` |\n",
		e.OutPath, e.Source, e.Group, e.Kind, e.Version, e.Release, e.Channel, e.Served, e.Storage, e.Deprecated, e.Size, e.SourceSHA)
}

// parseReadmeRow is the inverse of readmeRow, for carrying module-derived
// rows over when -modules=false cannot re-derive them.
func parseReadmeRow(line string) (derivedSchema, error) {
	cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
	if len(cells) != 12 {
		return derivedSchema{}, fmt.Errorf("README row %q must have 12 columns", line)
	}
	for i := range cells {
		cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
	}
	var e derivedSchema
	var err error
	e.OutPath, e.Source, e.Group, e.Kind, e.Version, e.Release, e.Channel, e.SourceSHA =
		cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[11]
	bools := []*bool{&e.Served, &e.Storage, &e.Deprecated}
	for i, p := range bools {
		if *p, err = strconv.ParseBool(cells[7+i]); err != nil {
			return derivedSchema{}, fmt.Errorf("README row %q: %w", line, err)
		}
	}
	if e.Size, err = strconv.Atoi(cells[10]); err != nil {
		return derivedSchema{}, fmt.Errorf("README row %q: %w", line, err)
	}
	return e, nil
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
// and the generated files under outDir; kept files are not stale.
func compare(outDir string, files map[string][]byte, kept map[string]bool) ([]string, error) {
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
		if _, ok := files[rel]; !ok && !kept[rel] {
			diffs = append(diffs, "stale:   "+rel)
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

// write writes files under outDir and removes generated files that are no
// longer produced (except kept ones), so the directory mirrors the CRD set
// exactly.
func write(outDir string, files map[string][]byte, kept map[string]bool) error {
	onDisk, err := existing(outDir)
	if err != nil {
		return err
	}
	for rel := range onDisk {
		if _, ok := files[rel]; !ok && !kept[rel] {
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
