package fit

import (
	"fmt"
	"math"
	"strings"

	"github.com/airunway-render/airunway-render/internal/wording"
)

// Launch is how vLLM is started for one replica: what its command line
// sets (zero: the release's default) and the parallelism the renderer
// gives it.
type Launch struct {
	// TP and PP are the tensor and pipeline parallel sizes (≥ 1).
	TP, PP int
	// Utilization is --gpu-memory-utilization (0: the release's 0.9).
	Utilization float64
	// MaxModelLen is --max-model-len (0: derived from the model).
	MaxModelLen int
	// MaxNumBatchedTokens and MaxNumSeqs are --max-num-batched-tokens
	// and --max-num-seqs (0: the release's defaults for the OpenAI
	// server on this GPU).
	MaxNumBatchedTokens, MaxNumSeqs int
	// KVCacheDType is --kv-cache-dtype ("" or auto: the model's dtype).
	KVCacheDType string
	// Quantization is --quantization ("": the checkpoint's).
	Quantization string
	// DType is --dtype ("" or auto: the checkpoint's, float32 served in
	// 16 bits).
	DType string
	// KVCacheMemoryBytes is --kv-cache-memory-bytes: the KV cache's size
	// set by hand, which skips the profile's subtraction.
	KVCacheMemoryBytes int64
	// BlockSize is --block-size (0: 16).
	BlockSize int
}

// PerGPU is one GPU's memory at start-up, in bytes, as vLLM accounts it
// (its worker's determine_available_memory): of Total, Usable =
// Total × utilization; KVCache = Usable − Weights − NonTorch − Activation
// (− CUDAGraph where the release subtracts it).
type PerGPU struct {
	Total, Usable, Weights, NonTorch, Activation, CUDAGraph, KVCache int64
	// CUDAGraphSubtracted: the release takes CUDAGraph out of the KV
	// cache; otherwise the graphs come out of 1 − utilization.
	CUDAGraphSubtracted bool
}

// Startup is what vLLM does at start-up with one replica of a model on
// its GPUs: the memory of each GPU (the first stage's first rank, whose
// lines a log shows first), the KV cache's tokens and concurrency, or the
// refusal that stops it.
type Startup struct {
	// Rules names the release whose arithmetic this is.
	Rules               string
	MaxModelLen         int
	MaxNumBatchedTokens int
	MaxNumSeqs          int
	PerGPU              PerGPU
	// KVTokens is vLLM's "GPU KV cache size: N tokens" (the stage with
	// the fewest blocks); MaxConcurrency its "Maximum concurrency for
	// MaxModelLen tokens per request".
	KVTokens       int64
	MaxConcurrency float64
	// MaxServable is the longest --max-model-len whose one sequence the
	// KV cache holds: what vLLM accepts (0 when nothing fits).
	MaxServable int
	// Refusal is why vLLM would not start; nil when it starts.
	Refusal *Refusal
	// Notes are assumptions the arithmetic made (the GPU's total from
	// its label, an unknown release's nearest rules).
	Notes []string
}

// Refusal is one of vLLM's start-up refusals, with its own wording.
type Refusal struct {
	// Reason is a word for tests and JSON: max-model-len, heads,
	// kv-heads, vocabulary, no-memory, one-sequence.
	Reason string
	// Message is what vLLM prints, with this model's figures, when
	// Verbatim; otherwise what its check asserts, in words.
	Message  string
	Verbatim bool
}

// Quoted is the message as a sentence may carry it: in quotes when it is
// vLLM's own wording.
func (r *Refusal) Quoted() string {
	if r.Verbatim {
		return fmt.Sprintf("%q", r.Message)
	}
	return r.Message
}

// Refusal reasons.
const (
	RefusedMaxModelLen = "max-model-len"
	RefusedHeads       = "heads"
	RefusedKVHeads     = "kv-heads"
	RefusedVocabulary  = "vocabulary"
	RefusedNoMemory    = "no-memory"
	RefusedOneSequence = "one-sequence"
	RefusedPipeline    = "pipeline"
)

// StartUp repeats vLLM's start-up for one replica of m on GPUs like g,
// by the rules of release r.
func (r *VLLMRules) StartUp(m Model, l Launch, g GPU) Startup {
	userBatched := l.MaxNumBatchedTokens
	l = r.defaults(l, g)
	s := Startup{Rules: r.Name, MaxNumBatchedTokens: l.MaxNumBatchedTokens, MaxNumSeqs: l.MaxNumSeqs}
	if !g.Measured {
		s.Notes = append(s.Notes, "the GPU's total memory is "+g.TotalFrom)
	}
	if m.Vocab == 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("the model's facts give no vocabulary: the profiling run's sampler is assumed at %s entries", wording.Thousands(assumedVocab)))
	}
	derived := m.DerivedMaxLen()
	s.MaxModelLen = l.MaxModelLen
	if s.MaxModelLen == 0 {
		s.MaxModelLen = derived
	}
	if r.BatchedCappedBySeqsLen && userBatched == 0 && s.MaxModelLen > 0 {
		l.MaxNumBatchedTokens = min(l.MaxNumBatchedTokens, l.MaxNumSeqs*s.MaxModelLen)
		s.MaxNumBatchedTokens = l.MaxNumBatchedTokens
	}
	if s.Refusal = r.refuseConfig(&m, l, derived); s.Refusal != nil {
		return s
	}
	kvBytes := r.kvElementBytes(&m, l)
	var worst int64 = -1
	for stage := 0; stage < l.PP; stage++ {
		p := PerGPU{Total: g.TotalBytes}
		p.Usable = int64(float64(g.TotalBytes) * l.Utilization)
		p.Weights = stageWeights(&m, l, l.TP, l.PP, stage)
		p.NonTorch = r.nonTorch(l, g)
		p.Activation = r.activation(&m, l, stage)
		p.CUDAGraph = r.cudaGraphs(&m, l)
		p.CUDAGraphSubtracted = r.SubtractsCUDAGraphs && !r.runsOnV2(&m)
		p.KVCache = p.Usable - p.Weights - p.NonTorch - p.Activation
		if p.CUDAGraphSubtracted {
			p.KVCache -= p.CUDAGraph
		}
		if l.KVCacheMemoryBytes > 0 {
			p.KVCache = l.KVCacheMemoryBytes
		}
		if stage == 0 {
			s.PerGPU = p
		}
		if worst < 0 || p.KVCache < worst {
			worst = p.KVCache
		}
	}
	if worst <= 0 {
		s.Refusal = &Refusal{Reason: RefusedNoMemory, Message: r.noMemoryMessage(worst), Verbatim: true}
		return s
	}
	layout := r.kvLayout(&m, l, kvBytes)
	if layout.perLayerToken <= 0 {
		// No shape: the memory is known, its tokens are not.
		s.Notes = append(s.Notes, "the KV cache's tokens are not predicted: the model's attention shape is not known, or it keeps state layers (Mamba, linear attention)")
		return s
	}
	s.KVTokens = layout.tokens(worst, l.BlockSize)
	concurrency := layout.concurrency(worst, s.MaxModelLen, l.BlockSize)
	s.MaxConcurrency = math.Floor(concurrency*100) / 100
	if r.TokensFromConcurrency {
		s.KVTokens = int64(concurrency * float64(s.MaxModelLen))
	}
	s.MaxServable = layout.longest(worst, l.BlockSize)
	if need := layout.sequenceBytes(s.MaxModelLen, l.BlockSize); need > worst {
		s.Refusal = &Refusal{Reason: RefusedOneSequence, Message: r.oneSequenceMessage(s.MaxModelLen, need, worst, s.MaxServable), Verbatim: true}
	}
	return s
}

// defaults fills what the command line left to the release.
func (r *VLLMRules) defaults(l Launch, g GPU) Launch {
	l.TP, l.PP = max(l.TP, 1), max(l.PP, 1)
	if l.Utilization <= 0 {
		l.Utilization = r.DefaultUtilization
	}
	if l.BlockSize <= 0 {
		l.BlockSize = 16
	}
	big := float64(g.TotalBytes) >= 70*gib && !strings.Contains(strings.ToLower(g.Product), "a100")
	if l.MaxNumBatchedTokens == 0 {
		l.MaxNumBatchedTokens = r.BatchedTokensSmall
		if big {
			l.MaxNumBatchedTokens = r.BatchedTokensBig
		}
	}
	if l.MaxNumSeqs == 0 {
		l.MaxNumSeqs = r.SeqsSmall
		if big {
			l.MaxNumSeqs = r.SeqsBig
		}
		if r.SeqsCappedByBatched {
			l.MaxNumSeqs = min(l.MaxNumSeqs, l.MaxNumBatchedTokens)
		}
	}
	return l
}

// DerivedMaxLen is the longest sequence vLLM lets the model serve
// (_get_and_verify_max_len): max_position_embeddings, times the rope
// scaling factor for the types that stretch it (not su, longrope or
// llama3, whose max_position_embeddings already is the stretched
// length, and not Gemma 3); yarn multiplies the original length.
func (m *Model) DerivedMaxLen() int {
	n := float64(m.Context)
	if r := m.Rope; r != nil && !strings.HasPrefix(strings.ToLower(m.Architecture), "gemma3") {
		switch strings.ToLower(r.Type) {
		case "su", "longrope", "llama3", "default", "":
		default:
			f := r.Factor
			if f <= 0 {
				f = 1
			}
			if strings.EqualFold(r.Type, "yarn") && r.Original > 0 {
				n = float64(r.Original)
			}
			n *= f
		}
	}
	return int(n)
}

// Refuses is the refusal vLLM makes before it counts memory (the
// length, the heads, the vocabulary, the KV heads), nil when none.
func (r *VLLMRules) Refuses(m Model, l Launch) *Refusal {
	l.TP, l.PP = max(l.TP, 1), max(l.PP, 1)
	return r.refuseConfig(&m, l, m.DerivedMaxLen())
}

// refuseConfig repeats the checks vLLM makes before it loads a weight:
// the length against the derived one, the heads against the tensor
// parallel size (ModelConfig.verify_with_parallel_config), then those
// that fail while the model is built: the padded vocabulary split over
// the ranks (VocabParallelEmbedding), the KV heads (each attention
// layer's assertion: KV heads divisible by TP, or TP by them).
func (r *VLLMRules) refuseConfig(m *Model, l Launch, derived int) *Refusal {
	if l.MaxModelLen > 0 && derived > 0 && l.MaxModelLen > derived {
		return &Refusal{Reason: RefusedMaxModelLen, Verbatim: true, Message: fmt.Sprintf("User-specified max_model_len (%d) is greater than the derived max_model_len (max_position_embeddings=%d or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", l.MaxModelLen, derived)}
	}
	if m.Heads > 0 && m.Heads%l.TP != 0 {
		return &Refusal{Reason: RefusedHeads, Verbatim: true, Message: fmt.Sprintf("Total number of attention heads (%d) must be divisible by tensor parallel size (%d).", m.Heads, l.TP)}
	}
	if l.PP > 1 && m.Layers > 0 && l.PP > m.Layers {
		return &Refusal{Reason: RefusedPipeline, Message: fmt.Sprintf("pipeline parallel size %d is larger than the model's %d layers: a stage would hold none", l.PP, m.Layers)}
	}
	if m.Vocab > 0 && padVocab(m.Vocab)%l.TP != 0 {
		return &Refusal{Reason: RefusedVocabulary, Verbatim: true, Message: fmt.Sprintf("%d is not divisible by %d", padVocab(m.Vocab), l.TP)}
	}
	if m.KVLatent == 0 && m.KVHeads > 0 {
		if m.KVHeads >= l.TP && m.KVHeads%l.TP != 0 || m.KVHeads < l.TP && l.TP%m.KVHeads != 0 {
			return &Refusal{Reason: RefusedKVHeads, Message: fmt.Sprintf("an AssertionError: the attention layer asserts that its %d KV heads divide by the tensor parallel size %d, or it by them", m.KVHeads, l.TP)}
		}
	}
	return nil
}

// kvElementBytes is one key or value element: 1 with an fp8 KV cache,
// 4 for a model served in float32, else 2.
func (r *VLLMRules) kvElementBytes(m *Model, l Launch) int64 {
	switch d := strings.ToLower(l.KVCacheDType); {
	case strings.HasPrefix(d, "fp8"):
		return 1
	case strings.EqualFold(l.DType, "float32") || strings.EqualFold(l.DType, "float"):
		return 4
	}
	return 2
}

// nonTorch is memory the profile finds outside torch's allocator: CUDA
// and cuBLAS workspaces, and with tensor parallelism NCCL's and the
// custom all-reduce's buffers.
func (r *VLLMRules) nonTorch(l Launch, g GPU) int64 {
	switch {
	case l.TP > 2 && g.PCIe:
		return int64(r.NonTorchTPPCIeGiB * gib)
	case l.TP > 1:
		return int64(r.NonTorchTPGiB * gib)
	case l.PP > 1:
		return int64(r.NonTorchPPGiB * gib)
	}
	return int64(r.NonTorchGiB * gib)
}

// activation is the torch peak of the profiling run (gpu_model_runner's
// profile_run): a forward pass of max_num_batched_tokens tokens, then
// the sampler on max_num_seqs rows of logits (on the last stage only).
// The peak is the larger of the two, plus a mixture of experts' kernel
// workspaces, which stay allocated.
func (r *VLLMRules) activation(m *Model, l Launch, stage int) int64 {
	tokens := float64(l.MaxNumBatchedTokens)
	var sampler float64
	if stage == l.PP-1 {
		sampler = r.SamplerBytesPerLogit * float64(l.MaxNumSeqs) * float64(vocabOrAssumed(m))
	}
	// A mixture of experts runs its MLP in the fused-MoE kernels counted
	// below. The dense layers some keep (DeepSeek's first_k_dense_replace)
	// are left out: their peak stays under the sampler's at vLLM's default
	// batch sizes (DeepSeek-V3 at TP 8: 0.3 GiB against 1.9 GiB).
	inter := float64(m.Intermediate)
	if m.Experts > 0 {
		inter = 0
	}
	// the MLP's gate and up projections, their product and the hidden
	// state and residual it reads, in 16 bits.
	elem := 2.0
	if d := strings.ToLower(l.DType); d == "float32" || d == "float" {
		elem = 4
	}
	forward := tokens*(3*inter/float64(l.TP)+2*float64(m.Hidden))*elem + r.ForwardBaseGiB*gib
	peak := math.Max(sampler, forward)
	if m.Experts > 0 && m.ExpertsPerToken > 0 && m.MoEIntermediate > 0 && !r.moeWithoutWorkspace(m) {
		n := float64(m.MoEIntermediate) / float64(l.TP)
		peak += tokens * float64(m.ExpertsPerToken) * (math.Max(2*n, float64(m.Hidden)) + n) * 2
	}
	return int64(peak + r.ActivationBaseGiB*gib)
}

// assumedVocab is the vocabulary assumed for a model whose facts give
// none (a list's row): Qwen's 151,936, larger than most.
const assumedVocab = 151936

func vocabOrAssumed(m *Model) int {
	if m.Vocab > 0 {
		return m.Vocab
	}
	return assumedVocab
}

// moeWithoutWorkspace: MXFP4 experts (gpt-oss) run kernels that keep no
// fused-MoE workspace.
func (r *VLLMRules) moeWithoutWorkspace(m *Model) bool {
	return m.Quantization != nil && strings.EqualFold(m.Quantization.Method, "mxfp4")
}

// cudaGraphs estimates what capturing the CUDA graphs takes: the
// release's figure per GPU, more with tensor parallelism.
func (r *VLLMRules) cudaGraphs(m *Model, l Launch) int64 {
	if l.TP > 1 {
		return int64(r.CUDAGraphTPGiB * gib)
	}
	return int64(r.CUDAGraphGiB * gib)
}

func (r *VLLMRules) noMemoryMessage(kv int64) string {
	return "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
}

func (r *VLLMRules) oneSequenceMessage(maxLen int, need, have int64, longest int) string {
	whose := "model's"
	if r.ModelsApostrophe {
		whose = "models's"
	}
	estimate := ""
	if r.NamesEstimatedLength && longest > 0 {
		estimate = fmt.Sprintf(" Based on the available memory, the estimated maximum model length is %d.", longest)
	}
	return fmt.Sprintf("To serve at least one request with the %s max seq len (%d), (%.2f GiB KV cache is needed, which is larger than the available KV cache memory (%.2f GiB).%s Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
		whose, maxLen, float64(need)/gib, float64(have)/gib, estimate)
}
