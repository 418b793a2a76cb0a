package fn

import (
	"bytes"
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
	"github.com/airunway-render/airunway-render/gateway"
	"github.com/airunway-render/airunway-render/internal/schemacheck"
	"github.com/airunway-render/airunway-render/providers"
	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzResourceList feeds arbitrary bytes to the KRM function as its stdin.
//
// Invariants:
//   - no panic, and no input runs longer than fuzzInputTimeout;
//   - the exit code is 0 or 1;
//   - exit 0: stdout is a ResourceList without error results, and every
//     object it generated (annotation render.airunway.ai/generated-from) is
//     valid against the real schema of its kind at the release the
//     capability file declares;
//   - exit 1: stderr carries an [error] line, and stdout holds no generated
//     object that was not already in the input: nothing is half-rendered.
//
// Seeds: every golden case's input and expected output, every example
// directory with a ModelDeployment, and the hostile inputs checked in under
// testdata/fuzz/FuzzResourceList.
func FuzzResourceList(f *testing.F) {
	for _, s := range fuzzResourceListSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzBounded(t, func() error { return checkResourceList(in) })
	})
}

func checkResourceList(in []byte) error {
	var stdout, stderr bytes.Buffer
	code := Main(nil, bytes.NewReader(in), &stdout, &stderr)
	switch code {
	case 0:
		return checkSuccess(in, stdout.Bytes())
	case 1:
		if !strings.Contains(stderr.String(), "[error]") {
			return fmt.Errorf("exit 1 without an [error] line on stderr: %q", stderr.String())
		}
		return checkNothingRendered(in, stdout.Bytes())
	default:
		return fmt.Errorf("exit code %d, want 0 or 1; stderr: %s", code, stderr.String())
	}
}

func checkSuccess(in, out []byte) error {
	rl, err := sdk.ParseResourceList(out)
	if err != nil {
		return fmt.Errorf("exit 0 but stdout is not a ResourceList: %v\n%s", err, out)
	}
	for _, r := range rl.Results {
		if r.Severity == sdk.Error {
			return fmt.Errorf("exit 0 with an error result: %s", r.Message)
		}
	}
	input, err := sdk.ParseResourceList(in)
	if err != nil {
		return fmt.Errorf("exit 0 on input the SDK cannot parse: %v", err)
	}
	caps, err := fuzzDeclaredCapabilities(input)
	if err != nil {
		return err
	}
	nodes := rl.Items.CopyToResourceNodes()
	overridden := fuzzModelsWithOverrides(nodes)
	for _, n := range nodes {
		from := n.GetAnnotations()[providers.AnnotationGeneratedFrom]
		// Weakened: overrides are free JSON merged into the object (the API
		// server, not the renderer, rejects unknown fields they add), so the
		// objects of a ModelDeployment with overrides are not checked.
		if from == "" || overridden[from] {
			continue
		}
		if problems := fuzzSchemaProblems(n, caps); len(problems) > 0 {
			return fmt.Errorf("generated %s %s/%s fails schema validation:\n  %s\nobject:\n%s\ninput:\n%s",
				n.GetKind(), n.GetNamespace(), n.GetName(), strings.Join(problems, "\n  "), n.MustString(), in)
		}
	}
	return nil
}

// checkNothingRendered: after a failure every generated object on stdout
// must be one the input already carried (the function returns its input
// items unchanged on error).
func checkNothingRendered(in, out []byte) error {
	if len(bytes.TrimSpace(out)) == 0 {
		return nil
	}
	rl, err := sdk.ParseResourceList(out)
	if err != nil {
		return fmt.Errorf("exit 1 and stdout is not a ResourceList: %v\n%s", err, out)
	}
	had := map[string]bool{}
	if input, err := sdk.ParseResourceList(in); err == nil {
		for _, n := range input.Items.CopyToResourceNodes() {
			had[fuzzGeneratedKey(n)] = true
		}
	}
	for _, n := range rl.Items.CopyToResourceNodes() {
		if n.GetAnnotations()[providers.AnnotationGeneratedFrom] == "" {
			continue
		}
		if !had[fuzzGeneratedKey(n)] {
			return fmt.Errorf("exit 1 but stdout has a generated %s %s/%s that is not in the input", n.GetKind(), n.GetNamespace(), n.GetName())
		}
	}
	return nil
}

func fuzzGeneratedKey(n *yaml.RNode) string {
	return strings.Join([]string{n.GetApiVersion(), n.GetKind(), n.GetNamespace(), n.GetName(), n.GetAnnotations()[providers.AnnotationGeneratedFrom]}, "\x00")
}

// fuzzDeclaredCapabilities returns what the function rendered with: a
// ClusterCapabilities function config, else the one such input item, else
// the embedded default (as Processor and render.Render choose).
func fuzzDeclaredCapabilities(rl *sdk.ResourceList) (*capabilities.Resolved, error) {
	var node *yaml.RNode
	if cfg := rl.FunctionConfig; cfg != nil && !cfg.IsEmpty() && cfg.GetKind() == v1.KindClusterCapabilities {
		node = cfg.CopyToResourceNode()
	} else {
		for _, n := range rl.Items.CopyToResourceNodes() {
			group, _, _ := strings.Cut(n.GetApiVersion(), "/")
			if group == v1.Group && n.GetKind() == v1.KindClusterCapabilities && n.GetAnnotations()[providers.AnnotationGeneratedFrom] == "" {
				node = n
				break
			}
		}
	}
	if node == nil {
		return capabilities.Default(), nil
	}
	caps, problems := capabilities.ResolveNode(node)
	if problems.HasErrors() {
		return nil, fmt.Errorf("exit 0 although the capability file has errors: %v", problems)
	}
	return caps, nil
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

// fuzzResourceListSeeds builds ResourceLists from the golden cases (input
// and expected output) and the example directories.
func fuzzResourceListSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	cases, err := filepath.Glob("../golden/testdata/*")
	if err != nil || len(cases) == 0 {
		tb.Fatalf("no golden cases to seed from: %v", err)
	}
	for _, dir := range cases {
		var items []*yaml.RNode
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, file := range files {
			if filepath.Base(file) == "expected.yaml" {
				continue
			}
			items = append(items, fuzzReadItems(tb, file)...)
		}
		var config *yaml.RNode
		if cfgs, _ := filepath.Glob(filepath.Join(dir, "functionConfig", "*.yaml")); len(cfgs) == 1 {
			if nodes := fuzzReadItems(tb, cfgs[0]); len(nodes) == 1 {
				config = nodes[0]
			}
		}
		seeds = append(seeds, fuzzResourceListText(tb, items, config))
		if out, err := os.ReadFile(filepath.Join(dir, "expected.yaml")); err == nil && len(out) > 0 {
			seeds = append(seeds, out)
		}
	}

	// Examples: every directory holding a ModelDeployment, alone and with
	// each example capability file as the function config.
	byDir := map[string][]*yaml.RNode{}
	var capsFiles []*yaml.RNode
	_ = filepath.WalkDir("../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		for _, n := range fuzzReadItems(tb, path) {
			if n.GetKind() == v1.KindClusterCapabilities {
				capsFiles = append(capsFiles, n)
			}
			byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], n)
		}
		return nil
	})
	dirs := make([]string, 0, len(byDir))
	for dir := range byDir {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		hasModel := false
		for _, n := range byDir[dir] {
			hasModel = hasModel || n.GetKind() == v1.KindModelDeployment
		}
		if !hasModel {
			continue
		}
		seeds = append(seeds, fuzzResourceListText(tb, byDir[dir], nil))
		for _, c := range capsFiles {
			seeds = append(seeds, fuzzResourceListText(tb, byDir[dir], c))
		}
	}
	return seeds
}

// fuzzReadItems reads the YAML documents of a file that look like objects,
// with the kpt path annotation the function sees in a package.
func fuzzReadItems(tb testing.TB, file string) []*yaml.RNode {
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: filepath.Base(file)}}).Read()
	if err != nil {
		return nil // not every example YAML is a KRM stream
	}
	var out []*yaml.RNode
	for _, n := range nodes {
		if n.GetKind() != "" {
			out = append(out, n)
		}
	}
	return out
}

func fuzzResourceListText(tb testing.TB, items []*yaml.RNode, config *yaml.RNode) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, n := range items {
		b.WriteString(fuzzIndent(n.MustString(), "- ", "  "))
	}
	if config != nil {
		b.WriteString("functionConfig:\n" + fuzzIndent(config.MustString(), "  ", "  "))
	}
	return []byte(b.String())
}

func fuzzIndent(s, first, rest string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
