package migrations

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
)

const head = "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: m}\nspec:\n  model: {id: Qwen/Qwen3-0.6B}\n  resources: {gpu: {count: 1}}\n"

// TestApply covers the one migration of v1alpha1 on single objects; the
// CLI's tests run it over files and ResourceLists, and show that a
// migrated model renders to the same objects.
func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name, spec, want, err string
		changes               []string
	}{
		{name: "moved with its comments",
			spec:    "  engine:\n    type: vllm\n    enablePrefixCaching: true\n  # pinned\n  image: repo/vllm:v1 # mirror\n",
			want:    "  engine:\n    type: vllm\n    enablePrefixCaching: true\n    # pinned\n    image: repo/vllm:v1 # mirror\n",
			changes: []string{"moved `spec.image` to `spec.engine.image`"}},
		{name: "the same image twice is merged",
			spec:    "  engine:\n    type: vllm\n    image: repo/vllm:v1\n  image: repo/vllm:v1\n",
			want:    "  engine:\n    type: vllm\n    image: repo/vllm:v1\n",
			changes: []string{"removed `spec.image`, the same as `spec.engine.image`"}},
		{name: "two images are a conflict",
			spec: "  engine: {type: vllm, image: repo/vllm:v2}\n  image: repo/vllm:v1\n",
			err:  "`spec.image` \"repo/vllm:v1\" and `spec.engine.image` \"repo/vllm:v2\" differ"},
		{name: "a move that switches on a default is refused",
			spec: "  image: repo/vllm:v1\n",
			err:  "`spec.engine.enablePrefixCaching` to true (unset before)"},
		{name: "nothing to migrate", spec: "  engine: {type: vllm}\n", want: "  engine: {type: vllm}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := yaml.MustParse(head + tc.spec)
			changes, err := ForVersion(v1alpha1.ToHub)(obj)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.changes, changes)
			require.Equal(t, head+tc.want, obj.MustString())
		})
	}
}

func TestApplyLeavesAnUnreadableSpec(t *testing.T) {
	obj := yaml.MustParse("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nspec: [image]\n")
	changes, err := ForVersion(v1alpha1.ToHub)(obj)
	require.NoError(t, err)
	require.Empty(t, changes)
}

// `migrate --to` moves `spec.placement` into v1alpha1's conversion
// annotation and back, as it moves the other v1alpha2 fields; the fleet's
// own annotations stay where they are.
func TestConvertPlacement(t *testing.T) {
	const v2 = "apiVersion: airunway.ai/v1alpha2\nkind: ModelDeployment\nmetadata:\n  name: m\n  annotations:\n    airunway.ai/cluster: gpu-east\nspec:\n  model: {id: Qwen/Qwen3-0.6B}\n  resources: {gpu: {count: 1}}\n"
	for _, tc := range []struct{ placement, annotation string }{
		{"  placement:\n    clusterSelector:\n      matchLabels:\n        region: us-east1\n      matchExpressions:\n      - key: tier\n        operator: NotIn\n        values:\n        - spot\n",
			`{"placement":{"clusterSelector":{"matchLabels":{"region":"us-east1"},"matchExpressions":[{"key":"tier","operator":"NotIn","values":["spot"]}]}}}`},
		{"  placement: {}\n", `{"placement":{}}`},
	} {
		obj := yaml.MustParse(v2 + tc.placement)
		changes, err := Convert(obj, v1alpha1.APIVersion)
		require.NoError(t, err)
		require.Equal(t, []string{"converted to airunway.ai/v1alpha1", "moved `spec.placement` into annotation airunway.ai/v1alpha2-fields"}, changes)
		require.Equal(t, map[string]string{"airunway.ai/cluster": "gpu-east", v1alpha1.AnnotationV1alpha2Fields: tc.annotation}, obj.GetAnnotations())
		spec, err := obj.Pipe(yaml.Lookup("spec"))
		require.NoError(t, err)
		require.Nil(t, spec.Field("placement"), "no `spec.placement` left")

		changes, err = Convert(obj, v1alpha2.APIVersion)
		require.NoError(t, err)
		require.Equal(t, []string{"converted to airunway.ai/v1alpha2", "moved `spec.placement` out of annotation airunway.ai/v1alpha2-fields"}, changes)
		require.Equal(t, map[string]string{"airunway.ai/cluster": "gpu-east"}, obj.GetAnnotations())
		back, err := yaml.Parse(v2 + tc.placement)
		require.NoError(t, err)
		require.YAMLEq(t, back.MustString(), obj.MustString())
	}
}
