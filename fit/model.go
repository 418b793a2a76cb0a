package fit

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Model holds the facts about a model that its memory needs follow from.
type Model struct {
	// ID is the Hugging Face repository the facts are about.
	ID string `json:"id"`
	// Params is the number of parameters (every expert of a mixture of
	// experts: all of them sit in GPU memory).
	Params int64 `json:"params,omitempty"`
	// DType is what a weight is stored as: bfloat16, float16, float32,
	// fp8, int8, int4.
	DType string `json:"dtype"`
	// Layers, KVHeads and HeadDim size the KV cache; zero when unknown.
	Layers  int `json:"layers,omitempty"`
	KVHeads int `json:"kvHeads,omitempty"`
	HeadDim int `json:"headDim,omitempty"`
	// KVLatent, for multi-head latent attention (DeepSeek V3), is what
	// one token keeps per layer instead of keys and values:
	// kv_lora_rank + qk_rope_head_dim.
	KVLatent int `json:"kvLatent,omitempty"`
	// Context is the model's default context length (its
	// max_position_embeddings), what an engine serves when not told less.
	Context int `json:"context,omitempty"`
	// WeightBytes, when known (a safetensors index's metadata.total_size),
	// wins over Params × the dtype's size.
	WeightBytes int64 `json:"weightBytes,omitempty"`
	// Source says where the facts came from, for messages.
	Source string `json:"-"`
	// FromID is true when the facts were read from the model id alone
	// (its size), and are an assumption.
	FromID bool `json:"-"`
}

// BytesPerParam is the size of one weight of a dtype; unknown names count
// as 2 bytes (bf16, what most open-weight models ship as). An int4 weight
// carries its group's scales besides: 0.5 byte plus one 16-bit scale and
// zero point per 128 weights.
func BytesPerParam(dtype string) float64 {
	switch strings.ToLower(dtype) {
	case "float32", "fp32":
		// Engines serve a float32 checkpoint in 16 bits by default
		// (vLLM's --dtype auto).
		return 2
	case "fp8", "int8", "float8":
		return 1
	case "int4", "fp4", "nvfp4":
		return 0.5 + 4.0/128
	}
	return 2
}

// Weights returns the bytes the weights take in GPU memory.
func (m *Model) Weights() int64 {
	if m.WeightBytes > 0 {
		return m.WeightBytes
	}
	return int64(float64(m.Params) * BytesPerParam(m.DType))
}

// KVPerToken returns the bytes of KV cache one token takes, with
// kvBytes bytes per element: 2 (a key and a value) × layers × KV heads ×
// head size × bytes, or layers × the latent size × bytes for latent
// attention; 0 when the model's shape is unknown.
func (m *Model) KVPerToken(kvBytes float64) int64 {
	if m.KVLatent > 0 {
		return int64(float64(m.Layers*m.KVLatent) * kvBytes)
	}
	return int64(2 * float64(m.Layers*m.KVHeads*m.HeadDim) * kvBytes)
}

// config is what FromConfig reads of a Hugging Face config.json.
type config struct {
	ModelType          string  `json:"model_type"`
	HiddenSize         int64   `json:"hidden_size"`
	IntermediateSize   int64   `json:"intermediate_size"`
	MoEIntermediate    int64   `json:"moe_intermediate_size"`
	Layers             int64   `json:"num_hidden_layers"`
	Heads              int64   `json:"num_attention_heads"`
	KVHeads            int64   `json:"num_key_value_heads"`
	HeadDim            int64   `json:"head_dim"`
	Vocab              int64   `json:"vocab_size"`
	MaxPosition        int64   `json:"max_position_embeddings"`
	TieEmbeddings      bool    `json:"tie_word_embeddings"`
	AttentionBias      *bool   `json:"attention_bias"`
	TorchDType         string  `json:"torch_dtype"`
	DType              string  `json:"dtype"`
	Experts            int64   `json:"num_experts"`
	LocalExperts       int64   `json:"num_local_experts"`
	QuantizationConfig *quant  `json:"quantization_config"`
	TextConfig         *config `json:"text_config"`
}

type quant struct {
	Method     string `json:"quant_method"`
	Bits       int    `json:"bits"`
	LoadIn4Bit bool   `json:"load_in_4bit"`
	LoadIn8Bit bool   `json:"load_in_8bit"`
}

// FromConfig derives a model's facts from its config.json and, when not
// nil, its model.safetensors.index.json (whose metadata.total_size is the
// weights' exact size). The parameter count is computed from the
// architecture: embeddings (and an untied output layer), and per layer the
// attention projections, the MLP (every expert of a mixture of experts)
// and the norms. It covers decoder-only transformers with grouped-query
// attention (Llama, Qwen, Mistral, Mixtral and their kin); a config
// without the fields those have is an error.
func FromConfig(id string, configJSON, indexJSON []byte) (Model, error) {
	var c config
	if err := json.Unmarshal(configJSON, &c); err != nil {
		return Model{}, fmt.Errorf("config.json: %v", err)
	}
	if c.Layers == 0 && c.TextConfig != nil {
		// A multimodal model's language model.
		t := *c.TextConfig
		if t.TorchDType == "" {
			t.TorchDType = c.TorchDType
		}
		if t.QuantizationConfig == nil {
			t.QuantizationConfig = c.QuantizationConfig
		}
		c = t
	}
	if c.HiddenSize <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Vocab <= 0 || c.IntermediateSize <= 0 && c.MoEIntermediate <= 0 {
		return Model{}, fmt.Errorf("config.json: hidden_size, num_hidden_layers, num_attention_heads, vocab_size and intermediate_size are required")
	}
	// Bounds far above any real model keep the arithmetic in int64.
	for _, d := range []struct {
		name  string
		v     int64
		limit int64
	}{{"hidden_size", c.HiddenSize, 1 << 20}, {"intermediate_size", c.IntermediateSize, 1 << 22}, {"moe_intermediate_size", c.MoEIntermediate, 1 << 22},
		{"num_hidden_layers", c.Layers, 1 << 12}, {"num_attention_heads", c.Heads, 1 << 12}, {"num_key_value_heads", c.KVHeads, 1 << 12},
		{"head_dim", c.HeadDim, 1 << 14}, {"vocab_size", c.Vocab, 1 << 24}, {"num_experts", max(c.Experts, c.LocalExperts), 1 << 12},
		{"max_position_embeddings", c.MaxPosition, 1 << 30}} {
		if d.v < 0 || d.v > d.limit {
			return Model{}, fmt.Errorf("config.json: %s %d is out of range (0 to %d)", d.name, d.v, d.limit)
		}
	}
	kv := c.KVHeads
	if kv == 0 {
		kv = c.Heads
	}
	hd := c.HeadDim
	if hd == 0 {
		hd = c.HiddenSize / c.Heads
	}
	h := c.HiddenSize
	attn := h*c.Heads*hd + 2*h*kv*hd + c.Heads*hd*h
	bias := c.ModelType == "qwen2" || c.ModelType == "qwen2_moe"
	if c.AttentionBias != nil {
		bias = *c.AttentionBias
	}
	if bias {
		attn += (c.Heads + 2*kv) * hd
	}
	if strings.HasPrefix(c.ModelType, "qwen3") {
		attn += 2 * hd // q_norm and k_norm
	}
	experts := max(c.Experts, c.LocalExperts)
	var mlp int64
	switch {
	case experts > 0:
		inter := c.MoEIntermediate
		if inter == 0 {
			inter = c.IntermediateSize
		}
		mlp = experts*3*h*inter + h*experts // the experts and the router
	default:
		mlp = 3 * h * c.IntermediateSize
	}
	params := c.Layers*(attn+mlp+2*h) + c.Vocab*h + h
	if !c.TieEmbeddings {
		params += c.Vocab * h
	}
	dtype := c.TorchDType
	if dtype == "" {
		dtype = c.DType
	}
	if q := c.QuantizationConfig; q != nil {
		switch {
		case q.LoadIn4Bit || q.Bits == 4 || q.Method == "awq":
			dtype = "int4"
		case q.LoadIn8Bit || q.Bits == 8:
			dtype = "int8"
		case strings.Contains(q.Method, "fp8"):
			dtype = "fp8"
		}
	}
	if dtype == "" {
		dtype = "bfloat16"
	}
	m := Model{ID: id, Params: params, DType: dtype, Layers: int(c.Layers), KVHeads: int(kv), HeadDim: int(hd), Context: int(c.MaxPosition)}
	if indexJSON != nil {
		var idx struct {
			Metadata struct {
				TotalSize json.Number `json:"total_size"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(indexJSON, &idx); err != nil {
			return Model{}, fmt.Errorf("model.safetensors.index.json: %v", err)
		}
		if n, err := idx.Metadata.TotalSize.Int64(); err == nil && n > 0 {
			m.WeightBytes = n
		}
	}
	return m, nil
}
