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
