package nearest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestName(t *testing.T) {
	kinds := []string{"ModelDeployment", "ClusterCapabilities", "InferenceProviderConfig"}
	providers := []string{"dynamo", "kaito", "kuberay", "llmd", "vllm"}
	for _, tc := range []struct {
		word  string
		known []string
		want  string
		ok    bool
	}{
		{"ModelDeploment", kinds, "ModelDeployment", true},
		{"modeldeployment", kinds, "ModelDeployment", true},
		{"ClusterCapability", kinds, "ClusterCapabilities", true},
		{"Deployment", kinds, "", false},
		{"kaitoo", providers, "kaito", true},
		{"vLLM", providers, "vllm", true},
		{"ray", providers, "", false},
		{"kube-ray", providers, "kuberay", true},
		{"nvidia-dynamo", providers, "", false},
	} {
		got, ok := Name(tc.word, tc.known)
		require.Equal(t, tc.ok, ok, tc.word)
		if ok {
			require.Equal(t, tc.want, got, tc.word)
		}
	}
	require.Equal(t, `; did you mean "kaito"?`, Suggestion("kiato", providers))
	require.Empty(t, Suggestion("openai", providers))
}

func TestClosest(t *testing.T) {
	known := []string{"meta-llama/llama-3.1-8b-instruct", "meta-llama/llama-3.3-70b-instruct", "microsoft/phi-4", "qwen/qwen2.5-coder-7b-instruct"}
	require.Equal(t, []string{"meta-llama/llama-3.1-8b-instruct", "meta-llama/llama-3.3-70b-instruct"}, Closest("meta-llama/Llama-3.2-8B-Instruct", known, 2))
	require.Len(t, Closest("x", known, 10), 4)
}
