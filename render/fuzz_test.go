package render

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
)

// FuzzRender fuzzes the YAML text of a ModelDeployment (any YAML stream,
// so also several objects) and, when not empty, of a capability file given
// as Options.Capabilities.
//
// Invariants:
//   - no panic, and no input runs longer than fuzzcheck.Timeout;
//   - a capability file that does not resolve reports errors with messages;
//   - either res.Problems has an error and res.Items is nil, or every
//     generated object is valid against the real schema of its kind at the
//     declared release, and rendering res.Items again gives the same
//     problems-free result byte for byte (idempotence).
//
// Seeds: the ModelDeployments (with their capability file) of every golden
// case and example, and the hostile inputs in testdata/fuzz/FuzzRender.
func FuzzRender(f *testing.F) {
	for _, s := range fuzzRenderSeeds(f) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, model, capsYAML string) {
		fuzzcheck.Bounded(t, func() error { return checkRender(model, capsYAML) })
	})
}

func checkRender(model, capsYAML string) error {
	// Read as the CLI reads a file (kio.FromBytes would also expand
	// anchors, which is slow on deep nesting and not what any entry point
	// does).
	items, err := (&kio.ByteReader{Reader: strings.NewReader(model), SetAnnotations: map[string]string{kioutil.PathAnnotation: "models/md.yaml"}}).Read()
	if err != nil {
		return nil // not YAML: nothing reaches Render
	}
	opts := Options{}
	caps := capabilities.Default()
	if strings.TrimSpace(capsYAML) != "" {
		node, err := yaml.Parse(capsYAML)
		if err != nil {
			return nil
		}
		resolved, problems := capabilities.ResolveNode(node)
		if err := fuzzcheck.ErrorsHaveMessages(problems); err != nil {
			return err
		}
		if problems.HasErrors() {
			return nil
		}
		opts.Capabilities, caps = resolved, resolved
	}

	res := Render(items, opts)
	if err := fuzzcheck.ErrorsHaveMessages(res.Problems); err != nil {
		return err
	}
	if res.Problems.HasErrors() {
		if res.Items != nil {
			return fmt.Errorf("%d items returned along with errors: %v", len(res.Items), res.Problems.Errors())
		}
		return nil
	}

	overridden := fuzzcheck.ModelsWithOverrides(res.Items)
	for _, n := range res.Items {
		from := n.GetAnnotations()[hub.AnnotationGeneratedFrom]
		// Weakened: overrides are free JSON merged into the object (the API
		// server, not the renderer, rejects unknown fields they add), so the
		// objects of a ModelDeployment with overrides are not checked.
		if from == "" || overridden[from] {
			continue
		}
		if problems := schemacheck.RenderedNode(n, caps); len(problems) > 0 {
			return fmt.Errorf("generated %s %s/%s fails schema validation:\n  %s\nobject:\n%s",
				n.GetKind(), n.GetNamespace(), n.GetName(), strings.Join(problems, "\n  "), n.MustString())
		}
	}

	first, err := fuzzText(res.Items)
	if err != nil {
		return err
	}
	again := Render(res.Items, opts)
	if again.Problems.HasErrors() {
		return fmt.Errorf("rendering the output again fails: %v\noutput:\n%s", again.Problems.Errors(), first)
	}
	second, err := fuzzText(again.Items)
	if err != nil {
		return err
	}
	if first != second {
		return fmt.Errorf("rendering the output again changes it:\n--- first\n%s\n--- second\n%s", first, second)
	}
	return nil
}

// fuzzText is the output as a reviewer sees it, comments and all.
func fuzzText(items []*yaml.RNode) (string, error) {
	var b strings.Builder
	for _, n := range items {
		s, err := n.String()
		if err != nil {
			return "", fmt.Errorf("cannot serialise %s %s: %v", n.GetKind(), n.GetName(), err)
		}
		b.WriteString("---\n" + s)
	}
	return b.String(), nil
}

// fuzzRenderSeeds pairs the ModelDeployment documents of every golden case
// and example directory with the capability file next to them ("" for
// none), and the example ModelDeployments also with every example
// capability file.
func fuzzRenderSeeds(tb testing.TB) [][2]string {
	var seeds [][2]string
	cases, err := filepath.Glob("../golden/testdata/*")
	if err != nil || len(cases) == 0 {
		tb.Fatalf("no golden cases to seed from: %v", err)
	}
	for _, dir := range cases {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		cfgs, _ := filepath.Glob(filepath.Join(dir, "functionConfig", "*.yaml"))
		models, caps := fuzzSplitDocs(tb, files, "expected.yaml")
		_, cfgCaps := fuzzSplitDocs(tb, cfgs, "")
		if len(cfgCaps) > 0 {
			caps = cfgCaps
		}
		c := ""
		if len(caps) > 0 {
			c = caps[0]
		}
		if len(models) > 0 {
			seeds = append(seeds, [2]string{strings.Join(models, "---\n"), c})
		}
	}

	byDir := map[string][]string{}
	var exampleCaps []string
	_ = filepath.WalkDir("../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		models, caps := fuzzSplitDocs(tb, []string{path}, "")
		byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], models...)
		exampleCaps = append(exampleCaps, caps...)
		return nil
	})
	dirs := make([]string, 0, len(byDir))
	for dir, models := range byDir {
		if len(models) > 0 {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		for _, m := range byDir[dir] {
			seeds = append(seeds, [2]string{m, ""})
			for _, c := range exampleCaps {
				seeds = append(seeds, [2]string{m, c})
			}
		}
	}
	def, err := os.ReadFile("../capabilities/default.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	if len(dirs) > 0 {
		seeds = append(seeds, [2]string{byDir[dirs[0]][0], string(def)})
	}
	return seeds
}

// fuzzSplitDocs returns the ModelDeployment and ClusterCapabilities
// documents of files (except the one named skip) as YAML text.
func fuzzSplitDocs(tb testing.TB, files []string, skip string) (models, caps []string) {
	for _, file := range files {
		if filepath.Base(file) == skip {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(data)), OmitReaderAnnotations: true}).Read()
		if err != nil {
			continue // not every example YAML is a KRM stream
		}
		for _, n := range nodes {
			switch n.GetKind() {
			case hub.KindModelDeployment:
				models = append(models, n.MustString())
			case hub.KindClusterCapabilities:
				caps = append(caps, n.MustString())
			}
		}
	}
	return models, caps
}
