package fit

import (
	"encoding/json"
	"fmt"
	"strings"
)

// config is what FromConfig reads of a Hugging Face config.json.
type config struct {
	Architectures    []string `json:"architectures"`
	ModelType        string   `json:"model_type"`
	HiddenSize       int64    `json:"hidden_size"`
	IntermediateSize int64    `json:"intermediate_size"`
	MoEIntermediate  int64    `json:"moe_intermediate_size"`
	SharedIntermed   int64    `json:"shared_expert_intermediate_size"`
	Layers           int64    `json:"num_hidden_layers"`
	Heads            int64    `json:"num_attention_heads"`
	KVHeads          *int64   `json:"num_key_value_heads"`
	HeadDim          int64    `json:"head_dim"`
	Vocab            int64    `json:"vocab_size"`
	MaxPosition      int64    `json:"max_position_embeddings"`
	TieEmbeddings    *bool    `json:"tie_word_embeddings"`
	AttentionBias    *bool    `json:"attention_bias"`
	TorchDType       string   `json:"torch_dtype"`
	DType            string   `json:"dtype"`
	Experts          int64    `json:"num_experts"`
	LocalExperts     int64    `json:"num_local_experts"`
	RoutedExperts    int64    `json:"n_routed_experts"`
	SharedExperts    int64    `json:"n_shared_experts"`
	ExpertsPerToken  int64    `json:"num_experts_per_tok"`
	FirstDense       int64    `json:"first_k_dense_replace"`
	KVLoraRank       int64    `json:"kv_lora_rank"`
	QLoraRank        int64    `json:"q_lora_rank"`
	QKRopeHeadDim    int64    `json:"qk_rope_head_dim"`
	QKNopeHeadDim    int64    `json:"qk_nope_head_dim"`
	VHeadDim         int64    `json:"v_head_dim"`
	SlidingWindow    *int64   `json:"sliding_window"`
	UseSliding       *bool    `json:"use_sliding_window"`
	SlidingPattern   int64    `json:"sliding_window_pattern"`
	LayerTypes       []string `json:"layer_types"`
	HybridPattern    string   `json:"hybrid_override_pattern"`
	TopKExperts      int64    `json:"top_k_experts"`
	InterleaveMoE    int64    `json:"interleave_moe_layer_step"`
	DenseIntermed    int64    `json:"intermediate_size_mlp"`
	ChunkSize        int64    `json:"attention_chunk_size"`
	BlockConfigs     []any    `json:"block_configs"`
	RopeScaling      *rope    `json:"rope_scaling"`
	Quantization     *quant   `json:"quantization_config"`
	TextConfig       *config  `json:"text_config"`
	VisionConfig     *vision  `json:"vision_config"`
}

// vision is what FromConfig reads of a multimodal model's vision
// encoder: a ViT of layers of attention and a plain MLP.
type vision struct {
	Hidden       int64 `json:"hidden_size"`
	EmbedDim     int64 `json:"embed_dim"`
	Intermediate int64 `json:"intermediate_size"`
	Layers       int64 `json:"num_hidden_layers"`
	Depth        int64 `json:"depth"`
}

// params are the encoder's parameters: per layer four h×h attention
// projections and an h×I MLP up and down (4h when the config gives no
// intermediate size).
func (v *vision) params() int64 {
	if v == nil {
		return 0
	}
	h, layers := max(v.Hidden, v.EmbedDim), max(v.Layers, v.Depth)
	inter := v.Intermediate
	if inter == 0 {
		inter = 4 * h
	}
	if h <= 0 || h > 1<<16 || layers <= 0 || layers > 1<<10 || inter > 1<<18 {
		return 0
	}
	return layers * (4*h*h + 2*h*inter)
}

type rope struct {
	RopeType string  `json:"rope_type"`
	Type     string  `json:"type"`
	Factor   float64 `json:"factor"`
	Original int64   `json:"original_max_position_embeddings"`
}

type quant struct {
	Method       string                     `json:"quant_method"`
	Bits         int                        `json:"bits"`
	GroupSize    int                        `json:"group_size"`
	LoadIn4Bit   bool                       `json:"load_in_4bit"`
	LoadIn8Bit   bool                       `json:"load_in_8bit"`
	Format       string                     `json:"format"`
	QuantAlgo    string                     `json:"quant_algo"`
	ConfigGroups map[string]json.RawMessage `json:"config_groups"`
}

// FromConfig derives a model's facts from its config.json and, when not
// nil, its model.safetensors.index.json (whose metadata.total_size is the
// weights' exact size). The parameter count is computed from the
// architecture: embeddings (and an untied output layer), and per layer the
// attention projections (grouped-query or latent), the MLP (every expert
// of a mixture of experts, shared experts, dense first layers) and the
// norms. A config without the fields decoder-only transformers have is an
// error.
func FromConfig(id string, configJSON, indexJSON []byte) (Model, error) {
	var c config
	if err := json.Unmarshal(finiteJSON(configJSON), &c); err != nil {
		return Model{}, fmt.Errorf("config.json: %v", err)
	}
	arch := first(c.Architectures)
	visionParams := c.VisionConfig.params()
	if c.Layers == 0 && c.TextConfig != nil {
		// A multimodal model's language model.
		t := *c.TextConfig
		if t.TorchDType == "" {
			t.TorchDType = c.TorchDType
		}
		if t.Quantization == nil {
			t.Quantization = c.Quantization
		}
		if t.TieEmbeddings == nil {
			t.TieEmbeddings = c.TieEmbeddings
		}
		c = t
	}
	c.defaults()
	if len(c.BlockConfigs) > 0 {
		return Model{}, fmt.Errorf("config.json: block_configs: layers of different shapes (a pruned architecture) are not read")
	}
	if c.HiddenSize <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Vocab <= 0 || c.IntermediateSize <= 0 && c.MoEIntermediate <= 0 {
		return Model{}, fmt.Errorf("config.json: hidden_size, num_hidden_layers, num_attention_heads, vocab_size and intermediate_size are required")
	}
	if err := c.inRange(); err != nil {
		return Model{}, err
	}
	m := Model{ID: id, Architecture: arch, Layers: int(c.Layers), Heads: int(c.Heads), Hidden: int(c.HiddenSize),
		Intermediate: int(c.IntermediateSize), Vocab: int(c.Vocab), Context: int(c.MaxPosition),
		TiedEmbeddings: c.tied()}
	m.KVHeads = int(c.Heads)
	if c.KVHeads != nil && *c.KVHeads > 0 {
		m.KVHeads = int(*c.KVHeads)
	}
	m.HeadDim = int(c.HeadDim)
	if m.HeadDim == 0 {
		m.HeadDim = int(c.HiddenSize / c.Heads)
	}
	m.Experts = int(max(c.Experts, c.LocalExperts, c.RoutedExperts))
	if m.Experts > 0 {
		m.ExpertsPerToken, m.SharedExperts = int(max(c.ExpertsPerToken, c.TopKExperts)), int(c.SharedExperts)
		if c.isLlama4() {
			m.SharedExperts = 1 // every MoE layer of Llama 4 has one shared expert
		}
		m.MoEIntermediate = int(c.MoEIntermediate)
		if m.MoEIntermediate == 0 {
			m.MoEIntermediate = int(c.IntermediateSize)
		}
	}
	if c.KVLoraRank > 0 {
		m.KVLatent = int(c.KVLoraRank + c.QKRopeHeadDim)
	}
	m.SlidingWindow, m.SlidingLayers, m.StateLayers = c.layerKinds()
	if r := c.RopeScaling; r != nil {
		t := r.RopeType
		if t == "" {
			t = r.Type
		}
		m.Rope = &RopeScaling{Type: t, Factor: r.Factor, Original: int(r.Original)}
	}
	// A multimodal model loads its vision encoder too.
	m.Params = c.params() + visionParams
	if m.StateLayers > 0 {
		// Mamba and linear-attention layers have shapes of their own: the
		// parameter count would be a guess.
		m.Params = 0
	}
	m.DType = c.TorchDType
	if m.DType == "" {
		m.DType = c.DType
	}
	if m.DType == "" {
		m.DType = "bfloat16"
	}
	m.Quantization = c.Quantization.facts()
	if indexJSON != nil {
		n, err := IndexTotalSize(indexJSON)
		if err != nil {
			return Model{}, err
		}
		m.WeightBytes = n
	}
	return m, nil
}

// IndexTotalSize reads a model.safetensors.index.json's metadata.total_size:
// the bytes of every tensor of the checkpoint (0 when it gives none).
func IndexTotalSize(indexJSON []byte) (int64, error) {
	var idx struct {
		Metadata struct {
			TotalSize json.Number `json:"total_size"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(indexJSON, &idx); err != nil {
		return 0, fmt.Errorf("model.safetensors.index.json: %v", err)
	}
	if n, err := idx.Metadata.TotalSize.Int64(); err == nil && n > 0 && n < 1<<50 {
		return n, nil
	}
	return 0, nil
}

// inRange bounds every figure FromConfig reads, far above any real model,
// so that the arithmetic stays in int64; the first out of range, in this
// order, is the error.
func (c *config) inRange() error {
	for _, d := range []struct {
		name     string
		v, limit int64
	}{
		{"hidden_size", c.HiddenSize, 1 << 20}, {"intermediate_size", c.IntermediateSize, 1 << 22},
		{"moe_intermediate_size", c.MoEIntermediate, 1 << 22}, {"shared_expert_intermediate_size", c.SharedIntermed, 1 << 22},
		{"num_hidden_layers", c.Layers, 1 << 12}, {"num_attention_heads", c.Heads, 1 << 12},
		{"num_key_value_heads", deref(c.KVHeads), 1 << 12}, {"head_dim", c.HeadDim, 1 << 14}, {"vocab_size", c.Vocab, 1 << 24},
		{"num_experts", max(c.Experts, c.LocalExperts, c.RoutedExperts), 1 << 12}, {"num_experts_per_tok", c.ExpertsPerToken, 1 << 12},
		{"n_shared_experts", c.SharedExperts, 1 << 12}, {"first_k_dense_replace", c.FirstDense, 1 << 12},
		{"max_position_embeddings", c.MaxPosition, 1 << 30}, {"sliding_window", deref(c.SlidingWindow), 1 << 30},
		{"kv_lora_rank", c.KVLoraRank, 1 << 16}, {"q_lora_rank", c.QLoraRank, 1 << 16},
		{"qk_rope_head_dim", c.QKRopeHeadDim, 1 << 14}, {"qk_nope_head_dim", c.QKNopeHeadDim, 1 << 14}, {"v_head_dim", c.VHeadDim, 1 << 14},
	} {
		if d.v < 0 || d.v > d.limit {
			return fmt.Errorf("config.json: %s %d is out of range (0 to %d)", d.name, d.v, d.limit)
		}
	}
	if len(c.LayerTypes) > 1<<12 || len(c.HybridPattern) > 1<<12 {
		return fmt.Errorf("config.json: layer_types or hybrid_override_pattern is longer than %d", 1<<12)
	}
	return nil
}

// layerKinds counts the layers that attend within a window and those that
// keep a state instead of a KV cache, as the model's architecture lays
// them out.
func (c *config) layerKinds() (window, sliding, state int) {
	if c.SlidingWindow != nil && (c.UseSliding == nil || *c.UseSliding) && (c.MaxPosition == 0 || *c.SlidingWindow < c.MaxPosition) {
		// a window as long as the model's context is no window (phi-4)
		window = int(*c.SlidingWindow)
	}
	switch {
	case c.isLlama4() && c.ChunkSize > 0:
		// chunked local attention on three layers of four; every fourth
		// is global (no_rope_layer_interval)
		return int(c.ChunkSize), int(c.Layers - c.Layers/4), 0
	case len(c.LayerTypes) > 0:
		for _, t := range c.LayerTypes {
			switch t {
			case "sliding_attention", "chunked_attention":
				sliding++
			case "full_attention", "attention":
			default: // linear_attention, mamba, …
				state++
			}
		}
		if window == 0 {
			sliding = 0
		}
	case c.HybridPattern != "":
		// Nemotron-H: '*' is an attention layer; every other layer
		// (Mamba, MLP, MoE) keeps no KV cache.
		state = len(c.HybridPattern) - strings.Count(c.HybridPattern, "*")
	case window == 0:
	case c.ModelType == "gemma2":
		sliding = int(c.Layers+1) / 2 // even layers slide
	case c.SlidingPattern > 1:
		// Gemma 3: every pattern-th layer is global.
		sliding = int(c.Layers - c.Layers/c.SlidingPattern)
	case strings.HasPrefix(c.ModelType, "gemma3"):
		sliding = int(c.Layers - c.Layers/6)
	default:
		// A window on every layer (Mistral 7B v0.1): only the window is
		// kept, the whole model slides.
		sliding = int(c.Layers)
	}
	return window, sliding, state
}

// params counts the parameters of the architecture.
func (c *config) params() int64 {
	h := c.HiddenSize
	kv := c.Heads
	if c.KVHeads != nil && *c.KVHeads > 0 {
		kv = *c.KVHeads
	}
	hd := c.HeadDim
	if hd == 0 {
		hd = h / c.Heads
	}
	var attn int64
	if c.KVLoraRank > 0 {
		qk := c.QKNopeHeadDim + c.QKRopeHeadDim
		v := c.VHeadDim
		if v == 0 {
			v = c.QKNopeHeadDim
		}
		if c.QLoraRank > 0 {
			attn += h*c.QLoraRank + c.QLoraRank + c.QLoraRank*c.Heads*qk
		} else {
			attn += h * c.Heads * qk
		}
		attn += h*(c.KVLoraRank+c.QKRopeHeadDim) + c.KVLoraRank + c.KVLoraRank*c.Heads*(c.QKNopeHeadDim+v) + c.Heads*v*h
	} else {
		attn = h*c.Heads*hd + 2*h*kv*hd + c.Heads*hd*h
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
	}
	dense := 3 * h * c.IntermediateSize
	if plainMLP[c.ModelType] {
		dense = 2 * h * c.IntermediateSize
	}
	experts := max(c.Experts, c.LocalExperts, c.RoutedExperts)
	var total int64
	if c.DenseIntermed > 0 {
		dense = 3 * h * c.DenseIntermed
	}
	step := max(c.InterleaveMoE, 1)
	for layer := int64(0); layer < c.Layers; layer++ {
		mlp := dense
		if experts > 0 && layer >= c.FirstDense && (layer+1)%step == 0 {
			inter := c.MoEIntermediate
			if inter == 0 {
				inter = c.IntermediateSize
			}
			mlp = experts*3*h*inter + h*experts // the experts and the router
			shared := c.SharedExperts
			if c.isLlama4() {
				shared = 1
			}
			mlp += shared * 3 * h * inter
			if c.SharedIntermed > 0 {
				mlp += 3*h*c.SharedIntermed + h // Qwen2-MoE's shared expert and its gate
			}
		}
		total += attn + mlp + 2*h
	}
	total += c.Vocab*h + h
	if !c.tied() {
		total += c.Vocab * h
	}
	return total
}

// facts turns a quantization_config into what the weights' size follows
// from; nil when the checkpoint is not quantized.
func (q *quant) facts() *Quantization {
	if q == nil {
		return nil
	}
	method := strings.ToLower(q.Method)
	out := &Quantization{Method: method, Bits: q.Bits, GroupSize: q.GroupSize}
	switch {
	case q.LoadIn4Bit:
		out.Bits = 4
	case q.LoadIn8Bit:
		out.Bits = 8
	case method == "fp8" || method == "fbgemm_fp8":
		out.Bits, out.Float = 8, true
	case method == "mxfp4":
		out.Bits, out.Float, out.GroupSize = 4, true, 32
	case method == "awq" && out.Bits == 0:
		out.Bits = 4
	case method == "modelopt":
		algo := strings.ToUpper(q.QuantAlgo)
		out.Bits, out.Float = 8, true
		if strings.Contains(algo, "FP4") {
			out.Bits, out.GroupSize = 4, 16
		}
	case method == "compressed-tensors":
		out.Bits, out.GroupSize, out.Float = compressedWeights(q)
	}
	if out.Bits == 0 {
		switch {
		case strings.Contains(method, "fp8") || strings.Contains(strings.ToLower(q.Format), "float"):
			out.Bits, out.Float = 8, true
		case strings.Contains(method, "4"):
			out.Bits = 4
		default:
			out.Bits = 8
		}
	}
	return out
}

// compressedWeights reads a compressed-tensors config's weight scheme:
// the bits, group size and whether they are floats, of its first group
// (W8A8, W4A16, FP8-dynamic, NVFP4).
func compressedWeights(q *quant) (bits, group int, float bool) {
	type scheme struct {
		Weights *struct {
			NumBits   int    `json:"num_bits"`
			Type      string `json:"type"`
			Strategy  string `json:"strategy"`
			GroupSize int    `json:"group_size"`
		} `json:"weights"`
	}
	names := make([]string, 0, len(q.ConfigGroups))
	for k := range q.ConfigGroups {
		names = append(names, k)
	}
	// The first group by name: most checkpoints have one, group_0.
	if len(names) == 0 {
		return 0, 0, false
	}
	name := names[0]
	for _, n := range names {
		name = min(name, n)
	}
	var s scheme
	if err := json.Unmarshal(q.ConfigGroups[name], &s); err != nil || s.Weights == nil {
		return 0, 0, false
	}
	group = s.Weights.GroupSize
	if s.Weights.Strategy == "channel" || s.Weights.Strategy == "tensor" {
		group = 0
	}
	return s.Weights.NumBits, group, s.Weights.Type == "float"
}

// typeDefaults are the values a model type's configuration class in
// transformers takes for a field its config.json leaves out (Gemma 3's
// text configs are short): Gemma3TextConfig's defaults, read from
// huggingface/transformers src/transformers/models/gemma3/
// configuration_gemma3.py at 008f5c8c (4.50).
var typeDefaults = map[string]config{
	"gemma3_text": {Vocab: 262208, HiddenSize: 2304, IntermediateSize: 9216, Layers: 26, Heads: 8, KVHeads: ptr(4),
		HeadDim: 256, MaxPosition: 131072, SlidingWindow: ptr(4096), SlidingPattern: 6, TieEmbeddings: ptrBool(true)},
}

// defaults fills what the config leaves to its class's defaults.
func (c *config) defaults() {
	d, ok := typeDefaults[c.ModelType]
	if !ok {
		return
	}
	fill := func(v *int64, def int64) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&c.Vocab, d.Vocab)
	fill(&c.HiddenSize, d.HiddenSize)
	fill(&c.IntermediateSize, d.IntermediateSize)
	fill(&c.Layers, d.Layers)
	fill(&c.Heads, d.Heads)
	fill(&c.HeadDim, d.HeadDim)
	fill(&c.MaxPosition, d.MaxPosition)
	fill(&c.SlidingPattern, d.SlidingPattern)
	if c.KVHeads == nil {
		c.KVHeads = d.KVHeads
	}
	if c.SlidingWindow == nil {
		c.SlidingWindow = d.SlidingWindow
	}
	if c.TieEmbeddings == nil {
		c.TieEmbeddings = d.TieEmbeddings
	}
}

func ptr(v int64) *int64   { return &v }
func ptrBool(v bool) *bool { return &v }

// plainMLP lists the model types whose MLP has two matrices (an up and a
// down projection around GELU), not a gated three.
var plainMLP = map[string]bool{"phi": true, "gpt2": true, "gpt_neox": true, "gptj": true, "opt": true, "bloom": true,
	"falcon": true, "starcoder2": true, "gpt_bigcode": true}

func (c *config) isLlama4() bool { return strings.HasPrefix(c.ModelType, "llama4") }

// finiteJSON turns the bare Infinity, -Infinity and NaN some configs
// carry (Python's json writes them) into null, outside strings, so that
// the rest of the file decodes.
func finiteJSON(data []byte) []byte {
	var out []byte
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		b := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		default:
			for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
				if strings.HasPrefix(string(data[i:min(i+len(tok), len(data))]), tok) {
					if out == nil {
						out = append([]byte{}, data[:i]...)
					}
					out = append(out, "null"...)
					i += len(tok) - 1
					b = 0
					break
				}
			}
		}
		if out != nil && b != 0 {
			out = append(out, b)
		}
	}
	if out == nil {
		return data
	}
	return out
}

// tied reports whether the output layer is the embedding matrix:
// tie_word_embeddings, or when absent the default of the model type's
// configuration class in transformers (true for Gemma, false for Llama,
// Mistral, Qwen and most others).
func (c *config) tied() bool {
	if c.TieEmbeddings != nil {
		return *c.TieEmbeddings
	}
	return strings.HasPrefix(c.ModelType, "gemma")
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// WithQuantConfig reads NVIDIA ModelOpt's hf_quant_config.json, which
// carries the checkpoint's precision where its config.json has no
// quantization_config: quantization.quant_algo FP8 or NVFP4 (4-bit
// floats with an 8-bit scale per 16).
func WithQuantConfig(m *Model, hfQuantConfig []byte) error {
	var q struct {
		Quantization struct {
			Algo      string `json:"quant_algo"`
			GroupSize int    `json:"group_size"`
			Layers    map[string]struct {
				Algo string `json:"quant_algo"`
			} `json:"quantized_layers"`
		} `json:"quantization"`
	}
	if err := json.Unmarshal(hfQuantConfig, &q); err != nil {
		return fmt.Errorf("hf_quant_config.json: %v", err)
	}
	algo := strings.ToUpper(q.Quantization.Algo)
	if algo == "MIXED_PRECISION" {
		// per-layer algorithms: the one most layers use (ties by name)
		count := map[string]int{}
		for _, l := range q.Quantization.Layers {
			count[strings.ToUpper(l.Algo)]++
		}
		algo = ""
		for a, n := range count {
			if n > count[algo] || n == count[algo] && a < algo {
				algo = a
			}
		}
	}
	switch {
	case strings.Contains(algo, "FP4"):
		m.Quantization = &Quantization{Method: "modelopt", Bits: 4, GroupSize: 16, Float: true}
	case strings.Contains(algo, "FP8"):
		m.Quantization = &Quantization{Method: "modelopt", Bits: 8, Float: true}
	case algo == "" || algo == "NONE":
	default:
		return fmt.Errorf("hf_quant_config.json: quant_algo %q is not read", q.Quantization.Algo)
	}
	return nil
}
