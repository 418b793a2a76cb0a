package fit

import (
	"strings"
)

// Model holds the facts about a model that its memory needs follow from:
// what a Hugging Face config.json and safetensors index say, in the
// catalog's (and a ModelCatalog's) names.
type Model struct {
	// ID is the Hugging Face repository the facts are about.
	ID string `json:"id"`
	// Architecture is config.json's architectures[0] (LlamaForCausalLM).
	Architecture string `json:"architecture,omitempty"`
	// Params is the number of parameters (every expert of a mixture of
	// experts: all of them sit in GPU memory).
	Params int64 `json:"params,omitempty"`
	// DType is what an unquantized weight is stored as: bfloat16,
	// float16, float32. A quantized checkpoint names its method in
	// Quantization; older rows say fp8, int8 or int4 here.
	DType string `json:"dtype"`
	// Quantization of the checkpoint's linear layers, nil when none.
	Quantization *Quantization `json:"quantization,omitempty"`
	// Layers, Heads (attention heads), KVHeads and HeadDim shape the
	// attention and its KV cache; zero when unknown.
	Layers  int `json:"layers,omitempty"`
	Heads   int `json:"heads,omitempty"`
	KVHeads int `json:"kvHeads,omitempty"`
	HeadDim int `json:"headDim,omitempty"`
	// Hidden, Intermediate and Vocab: hidden_size, intermediate_size and
	// vocab_size. The vocabulary sizes the logits of the engine's
	// profiling run; hidden and intermediate its activations.
	Hidden       int `json:"hiddenSize,omitempty"`
	Intermediate int `json:"intermediateSize,omitempty"`
	Vocab        int `json:"vocabSize,omitempty"`
	// TiedEmbeddings: the output layer is the embedding matrix.
	TiedEmbeddings bool `json:"tiedEmbeddings,omitempty"`
	// Experts, ExpertsPerToken and MoEIntermediate describe a mixture
	// of experts (num_experts or num_local_experts or n_routed_experts,
	// num_experts_per_tok, moe_intermediate_size); SharedExperts the
	// experts every token uses (DeepSeek's n_shared_experts).
	Experts         int `json:"experts,omitempty"`
	ExpertsPerToken int `json:"expertsPerToken,omitempty"`
	MoEIntermediate int `json:"moeIntermediateSize,omitempty"`
	SharedExperts   int `json:"sharedExperts,omitempty"`
	// KVLatent, for multi-head latent attention (DeepSeek V2/V3), is what
	// one token keeps per layer instead of keys and values:
	// kv_lora_rank + qk_rope_head_dim.
	KVLatent int `json:"kvLatent,omitempty"`
	// SlidingWindow is the window of the layers that attend to the last
	// SlidingWindow tokens only; SlidingLayers how many of Layers do
	// (Gemma 2 half, Gemma 3 five in six, gpt-oss half). Zero: every
	// layer attends to the whole sequence.
	SlidingWindow int `json:"slidingWindow,omitempty"`
	SlidingLayers int `json:"slidingLayers,omitempty"`
	// StateLayers are layers that keep a fixed-size state instead of a
	// KV cache (Mamba, linear attention) in a hybrid model.
	StateLayers int `json:"stateLayers,omitempty"`
	// Context is the model's max_position_embeddings.
	Context int `json:"context,omitempty"`
	// Rope is the rope_scaling that stretches Context, when any.
	Rope *RopeScaling `json:"ropeScaling,omitempty"`
	// WeightBytes, when known (a safetensors index's metadata.total_size,
	// a list's checkpoint size), wins over Params × the dtype's size.
	WeightBytes int64 `json:"weightBytes,omitempty"`
	// Gated is true when the Hugging Face repository asks every user to
	// accept its licence: downloading it needs a token. Nil: not known.
	Gated *bool `json:"gated,omitempty"`
	// Source says where the facts came from, for messages.
	Source string `json:"-"`
	// FromID is true when the facts were read from the model id alone
	// (its size), and are an assumption.
	FromID bool `json:"-"`
}

// RopeScaling is config.json's rope_scaling, as far as it sets the
// longest sequence the model takes.
type RopeScaling struct {
	// Type is rope_type (or type): linear, dynamic, yarn, llama3,
	// longrope, su, mrope, default.
	Type   string  `json:"type"`
	Factor float64 `json:"factor,omitempty"`
	// Original is original_max_position_embeddings, when set.
	Original int `json:"originalMaxPositionEmbeddings,omitempty"`
}

// Quantization is how a checkpoint stores its linear layers.
type Quantization struct {
	// Method is quantization_config.quant_method: fp8, awq, gptq,
	// compressed-tensors, mxfp4, bitsandbytes, modelopt …
	Method string `json:"method"`
	// Bits per quantized weight (4 or 8; 0 when the method says).
	Bits int `json:"bits,omitempty"`
	// GroupSize is how many weights share a scale (-1: a channel).
	GroupSize int `json:"groupSize,omitempty"`
	// Float is true for floating-point weights (fp8, fp4, mxfp4).
	Float bool `json:"float,omitempty"`
}

// Weights returns the bytes the weights take in GPU memory, for the whole
// model (all its GPUs): the checkpoint's size when known, else the
// parameters at the dtype's size.
func (m *Model) Weights() int64 {
	if m.WeightBytes > 0 {
		return m.WeightBytes
	}
	if q := m.Quantization; q != nil && m.Params > 0 && m.Vocab > 0 && m.Hidden > 0 {
		embed := m.EmbeddingParams()
		return int64(float64(embed)*2 + float64(m.Params-embed)*q.BytesPerWeight())
	}
	return int64(float64(m.Params) * BytesPerParam(m.DType))
}

// EmbeddingParams are the parameters of the input embeddings and of an
// untied output layer: kept in 16 bits by every quantization method here.
func (m *Model) EmbeddingParams() int64 {
	n := int64(m.Vocab) * int64(m.Hidden)
	if !m.TiedEmbeddings {
		n *= 2
	}
	return n
}

// BytesPerWeight is what one quantized weight takes with its scales.
func (q *Quantization) BytesPerWeight() float64 {
	bits := q.Bits
	if bits == 0 {
		switch strings.ToLower(q.Method) {
		case "mxfp4", "nvfp4", "fp4":
			bits = 4
		default:
			bits = 8
		}
	}
	b := float64(bits) / 8
	if bits < 8 {
		// a 16-bit scale (and a packed zero point) per group of 128, or
		// the group size the checkpoint gives; MXFP4 an 8-bit scale per 32.
		group := 128.0
		if q.GroupSize > 0 {
			group = float64(q.GroupSize)
		}
		switch {
		case strings.EqualFold(q.Method, "mxfp4"):
			return b + 1.0/32 // an 8-bit scale per 32
		case q.Float && bits == 4:
			return b + 1.0/float64(max(q.GroupSize, 16)) // NVFP4: an 8-bit scale per 16
		}
		return b + (2+float64(bits)/8)/group
	}
	return b
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

// KVPerToken returns the bytes of KV cache one token takes in every
// layer that keeps the whole sequence, with kvBytes bytes per element:
// 2 (a key and a value) × layers × KV heads × head size × bytes, or
// layers × the latent size × bytes for latent attention; 0 when the
// model's shape is unknown. Sliding-window and state layers are left
// out: they keep a bounded amount whatever the sequence's length.
func (m *Model) KVPerToken(kvBytes float64) int64 {
	layers := m.Layers - m.SlidingLayers - m.StateLayers
	if layers < 0 {
		layers = 0
	}
	if m.KVLatent > 0 {
		return int64(float64(layers*m.KVLatent) * kvBytes)
	}
	return int64(2 * float64(layers*m.KVHeads*m.HeadDim) * kvBytes)
}

// HasShape reports whether the attention's shape is known well enough to
// size a KV cache.
func (m *Model) HasShape() bool {
	return m.Layers > 0 && (m.KVLatent > 0 || m.KVHeads > 0 && m.HeadDim > 0)
}
