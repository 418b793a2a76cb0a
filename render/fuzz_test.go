package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/gateway"
	"github.com/airunway-render/airunway-render/internal/schemacheck"
	"github.com/airunway-render/airunway-render/providers"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzRender fuzzes the YAML text of a ModelDeployment (any YAML stream,
// so also several objects) and, when not empty, of a capability file given
// as Options.Capabilities.
//
// Invariants:
//   - no panic, and no input runs longer than fuzzInputTimeout;
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
		fuzzBounded(t, func() error { return checkRender(model, capsYAML) })
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
		if err := fuzzErrorsHaveMessages(problems); err != nil {
			return err
		}
		if problems.HasErrors() {
			return nil
		}
		opts.Capabilities, caps = resolved, resolved
	}

	res := Render(items, opts)
	if err := fuzzErrorsHaveMessages(res.Problems); err != nil {
		return err
	}
	if res.Problems.HasErrors() {
		if res.Items != nil {
			return fmt.Errorf("%d items returned along with errors: %v", len(res.Items), res.Problems.Errors())
		}
		return nil
	}

	overridden := fuzzModelsWithOverrides(res.Items)
	for _, n := range res.Items {
		from := n.GetAnnotations()[providers.AnnotationGeneratedFrom]
		// Weakened: overrides are free JSON merged into the object (the API
		// server, not the renderer, rejects unknown fields they add), so the
		// objects of a ModelDeployment with overrides are not checked.
		if from == "" || overridden[from] {
			continue
		}
		if problems := fuzzSchemaProblems(n, caps); len(problems) > 0 {
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

// fuzzErrorsHaveMessages: an error the user cannot read is no error report.
func fuzzErrorsHaveMessages(l diag.List) error {
	for _, p := range l {
		if p.Severity == diag.Error && strings.TrimSpace(p.Message) == "" {
			return fmt.Errorf("error without a message: %+v", p)
		}
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

// fuzzModelsWithOverrides names the ModelDeployments that set
// spec.provider.overrides.
func fuzzModelsWithOverrides(nodes []*yaml.RNode) map[string]bool {
	out := map[string]bool{}
	for _, n := range nodes {
		if n.GetKind() != v1.KindModelDeployment {
			continue
		}
		o, err := n.Pipe(yaml.Lookup("spec", "provider", "overrides"))
		if err == nil && !yaml.IsMissingOrNull(o) && !yaml.IsYNodeEmptyMap(o.YNode()) {
			out[n.GetName()] = true
		}
	}
	return out
}

// fuzzProviderOfGroup maps a provider API group to the provider whose
// declared release selects the schema.
var fuzzProviderOfGroup = map[string]string{"kaito.sh": "kaito", "nvidia.com": "dynamo", "ray.io": "kuberay"}

// fuzzSchemaProblems validates one object as golden/golden_test.go does:
// provider kinds at the declared release, Gateway API kinds at the declared
// bundle and channel, InferencePools at every embedded release of their
// version, built-in kinds by strict decoding.
func fuzzSchemaProblems(n *yaml.RNode, caps *capabilities.Resolved) []string {
	js, err := n.MarshalJSON()
	if err != nil {
		return []string{err.Error()}
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		return []string{err.Error()}
	}
	group, version, _ := strings.Cut(n.GetApiVersion(), "/")
	switch {
	case group == gateway.GatewayGroup:
		if caps.Gateway == nil {
			return []string{"a Gateway API object was rendered without a declared gateway"}
		}
		channel := caps.Gateway.Channel
		if n.GetKind() != "HTTPRoute" || channel == "" {
			channel = gateway.ChannelStandard
		}
		return schemacheck.CheckAtChannel(obj, fuzzRelease(caps.Gateway.GatewayAPIVersion), channel)
	case group == gateway.PoolGroupV1 || group == gateway.PoolGroupV1Alpha2:
		releases := schemacheck.Releases(group, n.GetKind(), version)
		if len(releases) == 0 {
			return []string{"no schema for " + n.GetApiVersion()}
		}
		var problems []string
		for _, r := range releases {
			problems = append(problems, schemacheck.CheckAtVersion(obj, r)...)
		}
		return problems
	default:
		release := ""
		if p := caps.Provider(fuzzProviderOfGroup[group]); p != nil {
			release = fuzzRelease(p.Version)
		}
		problems := schemacheck.CheckAtVersion(obj, release)
		// The oldest embedded schema of a kind can be newer than the oldest
		// release the renderer supports (KAITO: schema v0.6.2, support from
		// 0.6.0): validate against that closest schema instead.
		if len(problems) == 1 && strings.Contains(problems[0], "schema at or below release") {
			if releases := schemacheck.Releases(group, n.GetKind(), version); len(releases) > 0 {
				return schemacheck.CheckAtVersion(obj, releases[0])
			}
		}
		return problems
	}
}

// fuzzRelease spells a capability file's version as schemacheck wants it:
// capability files may write "1.3" for "1.3.0".
func fuzzRelease(version string) string {
	if v, err := capabilities.ParseSemver(version); err == nil {
		return v.String()
	}
	return version
}

// fuzzInputTimeout bounds one input. Go's fuzzer has no per-input timeout:
// without this a hang stalls a worker and never yields a reproducer.
const fuzzInputTimeout = 5 * time.Second

// fuzzKnownPanics are crashes already reported, by a frame of their stack,
// so fuzzing can go on past them. Remove an entry once its bug is fixed.
var fuzzKnownPanics = []struct{ frame, finding string }{}

// fuzzKnown is returned by a check for an input of a class already
// reported, so fuzzing can go on past it; fuzzBounded skips the input.
type fuzzKnown struct{ finding, what string }

func (k fuzzKnown) Error() string {
	return fmt.Sprintf("known finding %s (%s): %s", k.finding, k.finding, k.what)
}

// fuzzBounded runs check in a goroutine and fails on its error, on a panic
// (with the stack, which a recovered panic would otherwise lose) and when
// it runs longer than fuzzInputTimeout.
func fuzzBounded(t *testing.T, check func() error) {
	t.Helper()
	type outcome struct{ msg, stack, known string }
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{msg: fmt.Sprintf("panic: %v", r), stack: string(debug.Stack())}
			}
		}()
		if err := check(); err != nil {
			var k fuzzKnown
			if errors.As(err, &k) {
				done <- outcome{known: k.Error()}
				return
			}
			done <- outcome{msg: err.Error()}
			return
		}
		done <- outcome{}
	}()
	timer := time.NewTimer(fuzzInputTimeout)
	defer timer.Stop()
	select {
	case o := <-done:
		for _, k := range fuzzKnownPanics {
			if o.stack != "" && strings.Contains(o.stack, k.frame) {
				t.Skipf("known finding %s (%s): %s", k.finding, k.finding, o.msg)
			}
		}
		if o.known != "" {
			t.Skip(o.known)
		}
		if o.msg != "" {
			t.Fatalf("%s\n%s", o.msg, o.stack)
		}
	case <-timer.C:
		t.Fatalf("input still running after %s (hang)", fuzzInputTimeout)
	}
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
			case v1.KindModelDeployment:
				models = append(models, n.MustString())
			case v1.KindClusterCapabilities:
				caps = append(caps, n.MustString())
			}
		}
	}
	return models, caps
}
