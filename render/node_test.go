package render

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

func TestObjectNode(t *testing.T) {
	n, err := objectNode(map[string]any{
		"z": "last", "a": "true", "port": "8000", "n": 8000.0, "f": 0.5, "b": false,
		"list": []any{"x", 1.0}, "empty": map[string]any{}, "nil": nil,
	})
	require.NoError(t, err)
	out, err := yaml.NewRNode(n).String()
	require.NoError(t, err)
	require.Equal(t, `a: "true"
b: false
empty: {}
f: 0.5
list:
- x
- 1
n: 8000
nil: null
port: "8000"
z: last
`, out)
	_, err = objectNode(map[string]any{"bad": struct{}{}})
	require.ErrorContains(t, err, "bad: cannot emit")
}

// TestSetAnnotationMatchesKyaml holds setAnnotation to what kyaml's
// SetField writes, for values YAML 1.1 reads as other types, plain
// strings, paths, and annotations that already exist with a style.
func TestSetAnnotationMatchesKyaml(t *testing.T) {
	values := []string{"true", "yes", "No", "on", "y", "0", "0755", "0x1F", "1_000", "1.5", "1e3", ".inf", "~", "null", "",
		"190:20:30", "2026-11-22", "a: b", "- x", "[x]", "{a: 1}", "#c", "vllm", "l4", "h100",
		"1 nvidia.com/gpu per pod fits pool l4, the smallest of 2 fitting pools",
		"generated/team-01/deployment_model-00001.yaml", "Models/Generated/x.yaml", "a: b/generated/x.yaml", "multi\nline"}
	inputs := []string{
		"metadata: {name: a}\n",
		"metadata:\n  name: a\n  annotations:\n    k: 'old'\n",
		"metadata:\n  name: a\n  annotations:\n    k: \"old\"\n    other: x\n",
		"metadata:\n  name: a\n  annotations: {k: old}\n",
		"kind: X\n",
	}
	for _, in := range inputs {
		for _, v := range values {
			want, got := yaml.MustParse(in), yaml.MustParse(in)
			nv := yaml.NewScalarRNode(v)
			nv.YNode().Tag = yaml.NodeTagString
			nv.YNode().Style = 0
			if err := want.PipeE(yaml.LookupCreate(yaml.MappingNode, yaml.MetadataField, yaml.AnnotationsField), yaml.SetField("k", nv)); err != nil {
				t.Fatal(err)
			}
			if err := setAnnotation(got, "k", v); err != nil {
				t.Fatal(err)
			}
			if w, g := want.MustString(), got.MustString(); w != g {
				t.Errorf("input %q, value %q:\nkyaml:\n%s\nsetAnnotation:\n%s", in, v, w, g)
			}
		}
	}
}

// TestAnnotateModelLeavesTheModel: annotating a model (which shares all
// but the path to its annotations with its copy) leaves the model as it
// was, the decisions it had included, whether the new ones replace,
// add or drop them; the copy has them.
func TestAnnotateModelLeavesTheModel(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata:\n  name: m\n  annotations:\n    render.airunway.ai/provider: kaito # was\n    render.airunway.ai/engine-reason: old\n    team: a\nspec:\n  model:\n    id: x\n",
		"apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata:\n  name: m\nspec: {}\n",
		"apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nspec: {}\n",
	} {
		node := yaml.MustParse(doc)
		before := node.MustString()
		out, err := annotateModel(node, Decision{Engine: "vllm", Provider: "vllm", ProviderReason: "named"})
		require.NoError(t, err)
		require.Equal(t, before, node.MustString(), "the model changed")
		a := out.GetAnnotations()
		require.Equal(t, "vllm", a[hub.AnnotationProvider])
		require.Equal(t, "true", a[hub.AnnotationReconcilePause])
		require.NotContains(t, a, hub.AnnotationEngineReason, "a decision this render lacks is dropped")
		require.Equal(t, node.GetName(), out.GetName())
		spec, err := out.Pipe(yaml.Lookup("spec"))
		require.NoError(t, err)
		same, err := node.Pipe(yaml.Lookup("spec"))
		require.NoError(t, err)
		require.Same(t, same.YNode(), spec.YNode(), "the rest is shared, not copied")
	}
}
