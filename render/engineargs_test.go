package render

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

func TestCheckEngineArgs(t *testing.T) {
	pinned := &hub.ResolvedProvider{Name: hub.ProviderVLLM, Images: map[string]string{hub.EngineVLLM: "vllm/vllm-openai:v0.11.0"}}
	md := func(image string, args map[string]string, extra ...string) *hub.ModelDeployment {
		return &hub.ModelDeployment{Spec: hub.ModelDeploymentSpec{Engine: &hub.EngineSpec{Type: hub.EngineVLLM, Image: image, Args: args, ExtraArgs: extra}}}
	}
	check := func(m *hub.ModelDeployment, provider string, pc *hub.ResolvedProvider) diag.List {
		var l diag.List
		checkEngineArgs(m, hub.EngineVLLM, builtin.ByName()[provider], pc, &l)
		return l
	}

	// An unknown option fails at its field, naming the release and the
	// nearest known option; a known one, its --no- form and a value that
	// only looks like a flag's name pass.
	l := check(md("", map[string]string{"tensor-paralel-size": "2", "max-model-len": "4096", "no-enforce-eager": ""},
		"--enable-chunk-prefill", "--no-enable-prefix-caching", "--served-model-name", "tensor-paralel-size", "-tp", "2"), hub.ProviderVLLM, pinned)
	require.Len(t, l, 2)
	require.Equal(t, "spec.engine.args.tensor-paralel-size", l[0].Field)
	require.Equal(t, `vLLM v0.11.0 has no option "--tensor-paralel-size"; did you mean "--tensor-parallel-size"?`, l[0].Message)
	require.Equal(t, diag.Error, l[0].Severity)
	require.Equal(t, "spec.engine.extraArgs[0]", l[1].Field)
	require.Equal(t, `vLLM v0.11.0 has no option "--enable-chunk-prefill"; did you mean "--enable-chunked-prefill"?`, l[1].Message)

	// spec.engine.image wins over the capability file, as the provider's.
	// vLLM 0.9.1's --enable-auto-tool-choice is store_true: no --no- form.
	l = check(md("vllm/vllm-openai:v0.9.1", map[string]string{"no-enable-auto-tool-choice": ""}), hub.ProviderVLLM, pinned)
	require.Len(t, l, 1)
	require.Equal(t, `vLLM v0.9.1 has no option "--no-enable-auto-tool-choice"; did you mean "--enable-auto-tool-choice"?`, l[0].Message)

	// Each pinned release has its own options: v0.19 dropped --swap-space
	// and has --kv-cache-memory-bytes, which v0.9.0 had not yet.
	l = check(md("vllm/vllm-openai:v0.19.0", map[string]string{"kv-cache-memory-bytes": "8G", "swap-space": "4"}), hub.ProviderVLLM, pinned)
	require.Len(t, l, 1)
	require.Equal(t, "spec.engine.args.swap-space", l[0].Field)
	require.Contains(t, l[0].Message, `vLLM v0.19.0 has no option "--swap-space"`)
	l = check(md("vllm/vllm-openai:v0.9.0", map[string]string{"kv-cache-memory-bytes": "8G", "swap-space": "4"}), hub.ProviderVLLM, pinned)
	require.Len(t, l, 1)
	require.Contains(t, l[0].Message, `vLLM v0.9.0 has no option "--kv-cache-memory-bytes"`)

	// llm-d's default image is vLLM v0.19.1, which has --api-server-count
	// and no longer --swap-space.
	require.Empty(t, check(md("", map[string]string{"api-server-count": "2"}), hub.ProviderLLMD, nil))
	l = check(md("", map[string]string{"swap-space": "4"}), hub.ProviderLLMD, nil)
	require.Len(t, l, 1)
	require.Contains(t, l[0].Message, "vLLM v0.19.1 has no option")

	// The vllm provider's floating default keeps today's floating-image
	// warning (the provider's) and is not checked.
	require.Empty(t, check(md("", map[string]string{"tensor-paralel-size": "2"}), hub.ProviderVLLM, nil))

	// An image whose release cannot be known is not checked, and says so.
	for image, why := range map[string]string{
		"vllm/vllm-openai:latest":                       `spec.engine.image "vllm/vllm-openai:latest": its tag "latest" names no vLLM release`,
		"registry.example.com/vllm/vllm-openai:v0.11.0": `spec.engine.image "registry.example.com/vllm/vllm-openai:v0.11.0": airunway-render does not know which server release the image runs`,
		"vllm/vllm-openai:v0.10.2":                      `spec.engine.image "vllm/vllm-openai:v0.10.2": this release of airunway-render has no option table for vLLM v0.10.2`,
	} {
		l = check(md(image, map[string]string{"tensor-paralel-size": "2"}), hub.ProviderVLLM, pinned)
		require.Len(t, l, 1, image)
		require.Equal(t, diag.Warning, l[0].Severity)
		require.Equal(t, diag.UncheckedEngineArgs, l[0].Code)
		require.Contains(t, l[0].Message, why)
	}

	// Nothing to check, or not a server this check knows: nothing said.
	require.Empty(t, check(md("vllm/vllm-openai:latest", nil), hub.ProviderVLLM, pinned))
	require.Empty(t, check(md("", map[string]string{"tensor-paralel-size": "2"}), hub.ProviderDynamo, pinned))
	require.Empty(t, check(md("", map[string]string{"tensor-paralel-size": "2"}), hub.ProviderKubeRay, pinned))
	// An invalid key is the provider's error, not an unknown option.
	require.Empty(t, check(md("", map[string]string{"-bad": ""}), hub.ProviderVLLM, pinned))
}
