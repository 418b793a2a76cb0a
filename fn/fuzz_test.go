package fn

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/internal/testing/fntest"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
)

// FuzzResourceList feeds arbitrary bytes to the KRM function as its stdin.
//
// Invariants:
//   - no panic, and no input runs longer than fuzzcheck.Timeout;
//   - on input that is no ResourceList (manifest.ReadResourceList, which
//     accepts exactly what the KRM functions SDK accepts: the parity
//     suite of internal/manifest) it exits 1 with an [error] stdin line;
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
	for _, s := range fntest.ResourceListSeeds(f, "..") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzcheck.Bounded(t, func() error { return checkResourceList(in) })
	})
}

func checkResourceList(in []byte) error {
	var stdout, stderr bytes.Buffer
	code := Run(bytes.NewReader(in), &stdout, &stderr)
	if _, err := manifest.ReadResourceList(in); err != nil && (code != 1 || !strings.Contains(stderr.String(), "[error] stdin: cannot read the ResourceList: ")) {
		return fmt.Errorf("exit %d on input that is no ResourceList (%v); stderr: %s", code, err, stderr.String())
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
	rl, err := manifest.ReadResourceList(out)
	if err != nil {
		return fmt.Errorf("exit 0 but stdout is not a ResourceList: %v\n%s", err, out)
	}
	for _, r := range rl.Results {
		if r.Severity == string(diag.Error) {
			return fmt.Errorf("exit 0 with an error result: %s", r.Message)
		}
	}
	input, err := manifest.ReadResourceList(in)
	if err != nil {
		return fmt.Errorf("exit 0 on input that is no ResourceList: %v", err)
	}
	caps, err := fuzzDeclaredCapabilities(input)
	if err != nil {
		return err
	}
	nodes := rl.Items
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
	rl, err := manifest.ReadResourceList(out)
	if err != nil {
		return fmt.Errorf("exit 1 and stdout is not a ResourceList: %v\n%s", err, out)
	}
	had := map[string]bool{}
	if input, err := manifest.ReadResourceList(in); err == nil {
		for _, n := range input.Items {
			had[fuzzGeneratedKey(n)] = true
		}
	}
	for _, n := range rl.Items {
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
func fuzzDeclaredCapabilities(rl *manifest.ResourceList) (*capabilities.Resolved, error) {
	var node *yaml.RNode
	if cfg := rl.FunctionConfig; cfg != nil && len(cfg.Content) > 0 && manifest.StringScalar(manifest.Field(cfg, "kind")) == hub.KindClusterCapabilities {
		node = yaml.NewRNode(cfg).Copy()
	} else {
		for _, n := range rl.Items {
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
