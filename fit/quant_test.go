package fit

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The quantization cases (46): an FP8 checkpoint keeps its
// embeddings and output layer in 16 bits; --quantization fp8 quantizes a
// 16-bit checkpoint's linear layers as it loads them; a compressed-tensors
// config is read without an index.
func TestQuantizedWeights(t *testing.T) {
	rules, exact := VLLMRelease("v0.19.1")
	require.True(t, exact)
	l40s := NewGPU("NVIDIA-L40S", 46068)
	require.True(t, l40s.Measured)

	fp8, ok := Lookup("Qwen/Qwen3-32B-FP8")
	require.True(t, ok)
	embeddings := float64(2 * fp8.Vocab * fp8.Hidden) // untied: embedding and lm_head
	require.InDelta(t, float64(fp8.Params)+embeddings, float64(fp8.Weights()), 0.01*gib,
		"one byte a weight, and a second byte for each of the 16-bit embeddings and output layer (about 1.45 GiB)")

	bf16, ok := Lookup("Qwen/Qwen3-32B")
	require.True(t, ok)
	launch := Launch{TP: 1, PP: 1, MaxModelLen: 8192}
	st := rules.StartUp(bf16, launch, l40s)
	require.NotNil(t, st.Refusal, "61 GiB of bf16 weights on one L40S")
	require.Equal(t, RefusedNoMemory, st.Refusal.Reason)
	launch.Quantization = "fp8"
	online := rules.StartUp(bf16, launch, l40s)
	require.Nil(t, online.Refusal, "--quantization fp8 loads it in about 32 GiB")
	require.Equal(t, rules.StartUp(fp8, Launch{TP: 1, PP: 1, MaxModelLen: 8192}, l40s).PerGPU.Weights, online.PerGPU.Weights,
		"online fp8 keeps what the FP8 checkpoint keeps")

	// Llama 3.1 8B's shape with a W4A16 compressed-tensors scheme, as
	// RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16 ships it (no
	// public copy of that config.json could be pinned, so it is not a
	// catalog row); vLLM v0.19.0 loads that checkpoint in 5.38 GiB:
	// https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/w4a16-redhatai-lla--h100-80gb--tp1pp1dp1--8192-dtf16.log
	w4a16, err := FromConfig("example/llama-w4a16", []byte(`{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
		"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
		"torch_dtype": "bfloat16", "quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"],
		"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": true}}}, "ignore": ["lm_head"]}}`), nil)
	require.NoError(t, err)
	require.Equal(t, &Quantization{Method: "compressed-tensors", Bits: 4, GroupSize: 128}, w4a16.Quantization)
	weights := float64(w4a16.Weights()) / gib
	require.InDelta(t, 5.38, weights, 0.15, "a W4A16 Llama 3.1 8B")
}
