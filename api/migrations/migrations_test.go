package migrations

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/v1alpha1"
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
