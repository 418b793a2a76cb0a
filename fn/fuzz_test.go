package fn

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"

	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
)

// FuzzResourceList feeds arbitrary bytes to the KRM function as its stdin.
//
// Invariants:
//   - no panic, and no input runs longer than fuzzcheck.Timeout;
//   - the function accepts exactly the inputs sdk.ParseResourceList
//     accepts; on any other it exits 1 with an [error] stdin line;
//   - stdout is byte for byte what the SDK's ResourceList.ToYAML writes
//     for the same processed list (resourceListWriter's contract);
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
		fuzzcheck.Bounded(t, func() error { return checkResourceList(in) })
	})
}

func checkResourceList(in []byte) error {
	var stdout, stderr bytes.Buffer
	code := Run(bytes.NewReader(in), &stdout, &stderr)
	// The function reads what the SDK reads, and refuses the rest.
	_, sdkErr := sdkParse(in)
	if _, err := readResourceList(in); (err == nil) != (sdkErr == nil) {
		return fmt.Errorf("readResourceList: %v; sdk.ParseResourceList: %v", err, sdkErr)
	}
	if sdkErr != nil && (code != 1 || !strings.Contains(stderr.String(), "[error] stdin: cannot read the ResourceList: ")) {
		return fmt.Errorf("exit %d on input the SDK refuses (%v); stderr: %s", code, sdkErr, stderr.String())
	}
	if want, ok := sdkEncoding(in); ok && !bytes.Equal(stdout.Bytes(), want) {
		return fmt.Errorf("stdout differs from the SDK's encoding of the same ResourceList\n--- SDK\n%s\n--- stdout\n%s", want, stdout.Bytes())
	}
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
	input, err := sdkParse(in)
	if err != nil {
		return fmt.Errorf("exit 0 on input the SDK cannot parse: %v", err)
	}
	caps, err := fuzzDeclaredCapabilities(input)
	if err != nil {
		return err
	}
	nodes := rl.Items.CopyToResourceNodes()
	overridden := fuzzcheck.ModelsWithOverrides(nodes)
	for _, n := range nodes {
		from := n.GetAnnotations()[hub.AnnotationGeneratedFrom]
		// Weakened: overrides are free JSON merged into the object (the API
		// server, not the renderer, rejects unknown fields they add), so the
		// objects of a ModelDeployment with overrides are not checked.
		if from == "" || overridden[from] {
			continue
		}
		if problems := schemacheck.RenderedNode(n, caps); len(problems) > 0 {
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
	if input, err := sdkParse(in); err == nil {
		for _, n := range input.Items.CopyToResourceNodes() {
			had[fuzzGeneratedKey(n)] = true
		}
	}
	for _, n := range rl.Items.CopyToResourceNodes() {
		if n.GetAnnotations()[hub.AnnotationGeneratedFrom] == "" {
			continue
		}
		if !had[fuzzGeneratedKey(n)] {
			return fmt.Errorf("exit 1 but stdout has a generated %s %s/%s that is not in the input", n.GetKind(), n.GetNamespace(), n.GetName())
		}
	}
	return nil
}

func fuzzGeneratedKey(n *yaml.RNode) string {
	return strings.Join([]string{n.GetApiVersion(), n.GetKind(), n.GetNamespace(), n.GetName(), n.GetAnnotations()[hub.AnnotationGeneratedFrom]}, "\x00")
}

// fuzzDeclaredCapabilities returns what the function rendered with: a
// ClusterCapabilities function config, else the one such input item, else
// the embedded default (as Processor and render.Render choose).
func fuzzDeclaredCapabilities(rl *sdk.ResourceList) (*capabilities.Resolved, error) {
	var node *yaml.RNode
	if cfg := rl.FunctionConfig; cfg != nil && !cfg.IsEmpty() && cfg.GetKind() == hub.KindClusterCapabilities {
		node = cfg.CopyToResourceNode()
	} else {
		for _, n := range rl.Items.CopyToResourceNodes() {
			group, _, _ := strings.Cut(n.GetApiVersion(), "/")
			if group == hub.Group && n.GetKind() == hub.KindClusterCapabilities && n.GetAnnotations()[hub.AnnotationGeneratedFrom] == "" {
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
			if n.GetKind() == hub.KindClusterCapabilities {
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
			hasModel = hasModel || n.GetKind() == hub.KindModelDeployment
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
