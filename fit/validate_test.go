package fit

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheck: a ModelCatalog row's facts are held to what the fit can use,
// every problem named by its field and what is allowed.
func TestCheck(t *testing.T) {
	ok := Model{ID: "my-org/house-model", Params: 8e9, DType: "bfloat16", Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128, Context: 131072}
	require.Empty(t, ok.Check())
	weightsOnly := Model{ID: "my-org/house-model", DType: "fp8", WeightBytes: 9 << 30}
	require.Empty(t, weightsOnly.Check())

	for _, tc := range []struct {
		name string
		edit func(*Model)
		want []FieldProblem
	}{
		{"no id", func(m *Model) { m.ID = "" }, []FieldProblem{{"id", "is required: the Hugging Face id the facts are about, as models give it in spec.model.id"}}},
		{"id with a space", func(m *Model) { m.ID = "my org/x" }, []FieldProblem{{"id", `"my org/x" must not contain whitespace or control characters: it is a Hugging Face id (owner/name)`}}},
		{"id like a flag", func(m *Model) { m.ID = "-x" }, []FieldProblem{{"id", `"-x" must not start with '-': it is a Hugging Face id (owner/name)`}}},
		{"negative", func(m *Model) { m.KVHeads = -1 }, []FieldProblem{{"kvHeads", "must be between 0 and 4096, got -1"}}},
		{"past the bound", func(m *Model) { m.Context = 1<<30 + 1 }, []FieldProblem{{"context", "must be between 0 and 1073741824, got 1073741825"}}},
		{"no size", func(m *Model) { m.Params = 0 }, []FieldProblem{{"", "gives neither weightBytes nor params: one of them is required, to size the weights (weightBytes, the checkpoint's bytes, wins)"}}},
		{"no dtype", func(m *Model) { m.DType = "" }, []FieldProblem{{"dtype", `is required: one of "bfloat16", "float16", "float32", "bf16", "fp16", "fp32", "float8", "fp8", "int8", "int4", "fp4", "nvfp4"`}}},
		{"unknown dtype", func(m *Model) { m.DType = "bf17" }, []FieldProblem{{"dtype", `must be one of "bfloat16", "float16", "float32", "bf16", "fp16", "fp32", "float8", "fp8", "int8", "int4", "fp4", "nvfp4", got "bf17"`}}},
		{"more sliding layers than layers", func(m *Model) { m.SlidingLayers, m.StateLayers = 30, 4 }, []FieldProblem{{"slidingLayers", "slidingLayers (30) and stateLayers (4) together must be at most layers (32): they count layers of the model"}}},
		{"more experts a token than experts", func(m *Model) { m.Experts, m.ExpertsPerToken = 8, 9 }, []FieldProblem{{"expertsPerToken", "must be at most experts (8), got 9"}}},
		{"more KV heads than heads", func(m *Model) { m.KVHeads = 64 }, []FieldProblem{{"kvHeads", "must be at most heads (32), got 64: several attention heads share a KV head, never the reverse"}}},
		{"quantization without a method", func(m *Model) { m.Quantization = &Quantization{Bits: 4} }, []FieldProblem{{"quantization.method", "is required: the checkpoint's quantization_config.quant_method (fp8, awq, gptq, …)"}}},
		{"quantization out of range", func(m *Model) { m.Quantization = &Quantization{Method: "gptq", Bits: 32, GroupSize: -2} }, []FieldProblem{
			{"quantization.bits", "must be between 0 and 16, got 32"},
			{"quantization.groupSize", "must be -1 (a channel) or between 0 and 1048576, got -2"},
		}},
		{"rope factor", func(m *Model) { m.Rope = &RopeScaling{Type: "yarn", Factor: -4, Original: -1} }, []FieldProblem{
			{"ropeScaling.factor", "must be between 0 and 1024, got -4"},
			{"ropeScaling.originalMaxPositionEmbeddings", "must be between 0 and 1073741824, got -1"},
		}},
		{"several", func(m *Model) { m.Layers, m.Vocab, m.WeightBytes = -1, 1<<24+1, 1<<50+1 }, []FieldProblem{
			{"layers", "must be between 0 and 4096, got -1"},
			{"vocabSize", "must be between 0 and 16777216, got 16777217"},
			{"weightBytes", "must be between 0 and 1125899906842624, got 1125899906842625"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := ok
			tc.edit(&m)
			require.Equal(t, tc.want, m.Check())
		})
	}
}

// TestCheckBoundsAreFromConfigs: each bound a row is held to is the bound
// FromConfig reads the config.json field within, so that catalog add
// never writes a row a render refuses, nor refuses one a config.json
// gives.
func TestCheckBoundsAreFromConfigs(t *testing.T) {
	base, err := os.ReadFile("../hack/derive-model-catalog/sources/Qwen--Qwen3-0.6B_config.json")
	require.NoError(t, err)
	limitRe := regexp.MustCompile(`out of range \(0 to (\d+)\)`)
	for key, field := range map[string]string{
		"hidden_size": "hiddenSize", "intermediate_size": "intermediateSize", "moe_intermediate_size": "moeIntermediateSize",
		"num_hidden_layers": "layers", "num_attention_heads": "heads", "num_key_value_heads": "kvHeads", "head_dim": "headDim",
		"vocab_size": "vocabSize", "num_experts": "experts", "num_experts_per_tok": "expertsPerToken", "n_shared_experts": "sharedExperts",
		"max_position_embeddings": "context", "sliding_window": "slidingWindow",
	} {
		t.Run(key, func(t *testing.T) {
			var cfg map[string]any
			require.NoError(t, json.Unmarshal(base, &cfg))
			cfg[key] = 1 << 40
			js, err := json.Marshal(cfg)
			require.NoError(t, err)
			_, err = FromConfig("x/y", js, nil)
			require.Error(t, err)
			m := limitRe.FindStringSubmatch(err.Error())
			require.NotNil(t, m, "%v", err)
			limit, err := strconv.ParseInt(m[1], 10, 64)
			require.NoError(t, err)
			var bound int64 = -1
			for _, b := range rowBounds {
				if b.field == field {
					bound = b.limit
				}
			}
			require.Equal(t, limit, bound, "the bound of %s (%s)", field, key)
		})
	}
}
