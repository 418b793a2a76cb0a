package fit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	m, ok := Lookup("meta-llama/llama-3.3-70b-instruct")
	require.True(t, ok)
	require.Equal(t, "meta-llama/Llama-3.3-70B-Instruct", m.ID)
	require.Equal(t, 80, m.Layers)
	require.Equal(t, "the model catalog (fit/catalog.json)", m.Source)
	_, ok = Lookup("example/unknown-7B")
	require.False(t, ok)
}

// TestCompute: the instance. Llama 3.3 70B (141 GB of bf16
// weights) needs far more than one L4 (23034 MiB, 0.9 of it for vLLM) or
// two; Llama 3.1 8B at 8192 tokens fits one.
func TestCompute(t *testing.T) {
	vllm := EngineSettings("vllm", nil, nil)
	big, _ := Lookup("meta-llama/Llama-3.3-70B-Instruct")
	for _, gpus := range []int{1, 2} {
		e := Compute(big, vllm, 0, gpus, 23034)
		require.False(t, e.Fits(), "%d GPUs: %+v", gpus, e)
		require.Equal(t, int64(134575), e.Weights, "KAITO list's checkpoint size of Llama 3.3 70B")
		require.Equal(t, 131072, e.Context)
		require.Equal(t, int64(40960), e.KV) // 320 KiB a token
	}
	small, _ := Lookup("meta-llama/Llama-3.1-8B-Instruct")
	e := Compute(small, vllm, 8192, 1, 23034)
	require.True(t, e.Fits(), "%+v", e)
	require.False(t, e.IsTight(), "%+v", e)
	require.Equal(t, int64(1024), e.KV) // 128 KiB a token
	// Its default 131072 tokens need 16 GiB of KV cache: vLLM refuses.
	require.False(t, Compute(small, vllm, 0, 1, 23034).Fits())
	// fp8 KV cache halves it.
	require.Equal(t, int64(512), Compute(small, EngineSettings("vllm", map[string]string{"kv-cache-dtype": "fp8"}, nil), 8192, 1, 23034).KV)
	// Unknown shape: no KV cache counted.
	id, ok := FromID("example/Thing-7B")
	require.True(t, ok)
	e = Compute(id, vllm, 4096, 1, 23034)
	require.False(t, e.KVKnown)
	require.Zero(t, e.KV)
}

func TestEngineSettings(t *testing.T) {
	s := EngineSettings("vllm", map[string]string{"gpu-memory-utilization": "0.95", "max-model-len": "4096"}, nil)
	require.Equal(t, 0.95, s.Utilization)
	require.Equal(t, "--gpu-memory-utilization 0.95", s.UtilizationFrom)
	require.Equal(t, 4096, s.Context)
	s = EngineSettings("vllm", nil, []string{"--gpu-memory-utilization=0.5", "--max-model-len", "2048"})
	require.Equal(t, 0.5, s.Utilization)
	require.Equal(t, 2048, s.Context)
	s = EngineSettings("vllm", map[string]string{"gpu-memory-utilization": "lots"}, nil)
	require.Equal(t, 0.9, s.Utilization)
	require.Contains(t, s.UtilizationFrom, "vLLM's default")
	s = EngineSettings("sglang", map[string]string{"mem-fraction-static": "0.7", "context-length": "1000"}, nil)
	require.Equal(t, 0.7, s.Utilization)
	require.Equal(t, 1000, s.Context)
	require.Equal(t, 0.85, EngineSettings("sglang", nil, nil).Utilization)
}

func TestFromID(t *testing.T) {
	for id, want := range map[string]int64{
		"meta-llama/Llama-3.1-8B-Instruct":     8e9,
		"Qwen/Qwen3-0.6B":                      6e8,
		"mistralai/Mixtral-8x7B-Instruct-v0.1": 44.8e9,
		"Qwen/Qwen3-30B-A3B":                   30e9,
		"HuggingFaceTB/SmolLM2-135M":           135e6,
		"Qwen/Qwen2.5-1.5B-Instruct":           1.5e9,
		"org/model-7b":                         7e9,
	} {
		m, ok := FromID(id)
		require.True(t, ok, id)
		require.Equal(t, want, m.Params, id)
		require.True(t, m.FromID)
	}
	for _, id := range []string{"microsoft/phi-4", "Qwen/Qwen2.5-0.5B-Instruct-AWQ-v2-3B", "google/gemma-3-4b-it"} {
		_, ok := FromID(id)
		require.True(t, ok || id == "microsoft/phi-4", id)
	}
	_, ok := FromID("microsoft/phi-4")
	require.False(t, ok)
	m, _ := FromID("Qwen/Qwen2.5-72B-Instruct-AWQ")
	require.Equal(t, "int4", m.DType)
	m, _ = FromID("bartowski/Llama-3.2-3B-Instruct-GGUF")
	require.Equal(t, "int4", m.DType)
	require.Contains(t, m.Source, "GGUF")
	m, _ = FromID("Qwen/Qwen3-32B-FP8")
	require.Equal(t, "fp8", m.DType)
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile("../hack/derive-model-catalog/sources/meta-llama--Meta-Llama-3.1-8B_config.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	m, err := ReadDir("mine/llama", dir)
	require.NoError(t, err)
	require.Equal(t, int64(8030261248), m.Params)
	require.Contains(t, m.Source, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(`{"metadata":{"total_size":16060522496}}`), 0o644))
	m, err = ReadDir("mine/llama", dir)
	require.NoError(t, err)
	require.Equal(t, int64(16060522496), m.Weights())
	require.NoError(t, os.Remove(filepath.Join(dir, "model.safetensors.index.json")))
	quant, err := os.ReadFile("../hack/derive-model-catalog/sources/Qwen--Qwen3-32B-FP8-Static-PerTensor_hf_quant_config.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hf_quant_config.json"), quant, 0o644))
	m, err = ReadDir("mine/llama", dir)
	require.NoError(t, err)
	require.Equal(t, &Quantization{Method: "modelopt", Bits: 8, Float: true}, m.Quantization,
		"a ModelOpt checkpoint's precision is read from hf_quant_config.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hf_quant_config.json"), []byte(`{"quantization":{"quant_algo":"W3A9"}}`), 0o644))
	_, err = ReadDir("mine/llama", dir)
	require.ErrorContains(t, err, `quant_algo "W3A9" is not read`)
	_, err = ReadDir("x", t.TempDir())
	require.Error(t, err)
	_, err = FromConfig("x", []byte(`{"hidden_size":4096,"intermediate_size":1,"num_hidden_layers":1000000000,"num_attention_heads":32,"vocab_size":1}`), nil)
	require.ErrorContains(t, err, "num_hidden_layers 1000000000 is out of range")
	big := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(big, "config.json"), make([]byte, maxFileBytes+1), 0o644))
	_, err = ReadDir("x", big)
	require.ErrorContains(t, err, "larger than")
}
