package fit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

const mib = 1 << 20

// OverheadMiB is what an engine takes on each GPU besides weights and KV
// cache: the CUDA context, CUDA graphs and the activations of a profiling
// batch. 1 GiB is the low end of what vLLM reports for dense models of
// 1B–70B parameters; a larger real overhead is what the tight-fit warning
// is for.
const OverheadMiB = 1024

// Tight is the share of the available memory above which a fit is tight:
// an estimate is not a measurement, and the engine's activations, a
// longer prompt batch or another CUDA version may take the rest.
const Tight = 0.9

// Engine settings this package knows.
const (
	vllm   = "vllm"
	sglang = "sglang"
	trtllm = "trtllm"
)

// Settings are the engine's memory settings a model's args give.
type Settings struct {
	// Utilization is the share of each GPU's memory the engine uses.
	Utilization float64
	// UtilizationFrom says where it came from: the flag, or the
	// engine's default.
	UtilizationFrom string
	// Context is the context length the args set (--max-model-len,
	// --context-length, --max_seq_len), 0 when they set none.
	Context int
	// KVBytes is the size of one KV cache element: 1 with an fp8 KV
	// cache (--kv-cache-dtype fp8), else 2.
	KVBytes float64
}

// EngineSettings reads the memory settings from a model's engine args
// (spec.engine.args, keys without dashes) and extra args (--flag=value or
// --flag value). vLLM uses --gpu-memory-utilization of each GPU, 0.9 by
// default. SGLang's --mem-fraction-static bounds weights and KV cache
// together; its default depends on the GPU, and 0.85 is assumed, with the
// engine overhead counted inside it. TensorRT-LLM gives the KV cache 0.9
// of what is free after the weights (kv_cache_config's
// free_gpu_memory_fraction); that is taken as a utilisation of 0.9, as for
// vLLM. Other engines get 0.9.
func EngineSettings(engine string, args map[string]string, extra []string) Settings {
	flag := func(names ...string) (string, bool) {
		for _, n := range names {
			if v, ok := args[n]; ok {
				return v, true
			}
		}
		for i, a := range extra {
			for _, n := range names {
				switch {
				case a == "--"+n && i+1 < len(extra):
					return extra[i+1], true
				case strings.HasPrefix(a, "--"+n+"="):
					return strings.TrimPrefix(a, "--"+n+"="), true
				}
			}
		}
		return "", false
	}
	s := Settings{Utilization: 0.9, KVBytes: 2}
	name, def := "--gpu-memory-utilization", "vLLM's default"
	switch engine {
	case sglang:
		name, def, s.Utilization = "--mem-fraction-static", "assumed for SGLang, whose default depends on the GPU", 0.85
	case trtllm:
		name, def = "--free-gpu-memory-fraction", "TensorRT-LLM's default KV cache share, taken as a utilisation"
	case vllm:
	default:
		def = "assumed"
	}
	s.UtilizationFrom = fmt.Sprintf("%s %.2g (%s)", name, s.Utilization, def)
	if v, ok := flag(strings.TrimPrefix(name, "--"), strings.ReplaceAll(strings.TrimPrefix(name, "--"), "-", "_")); ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 && f <= 1 {
			s.Utilization, s.UtilizationFrom = f, fmt.Sprintf("%s %s", name, strings.TrimSpace(v))
		}
	}
	if v, ok := flag("max-model-len", "max_model_len", "context-length", "context_length", "max_seq_len", "max-seq-len"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 && n <= 1<<30 {
			s.Context = n
		}
	}
	if v, ok := flag("kv-cache-dtype", "kv_cache_dtype"); ok && strings.HasPrefix(strings.ToLower(v), "fp8") {
		s.KVBytes = 1
	}
	return s
}

// Estimate is what one replica needs and gets, in MiB.
type Estimate struct {
	Weights, Overhead, KV, Needed, Available int64
	// Context is the sequence length the KV cache must hold.
	Context int
	// KVKnown is false when the model's layer shape is unknown and the KV
	// cache is not counted.
	KVKnown bool
}

// Fits reports whether the replica's GPUs hold what it needs.
func (e Estimate) Fits() bool { return e.Needed <= e.Available }

// IsTight reports whether what it needs is more than Tight of what it
// gets.
func (e Estimate) IsTight() bool { return float64(e.Needed) > Tight*float64(e.Available) }

// Compute estimates one replica of m on gpus GPUs of memoryMiB each:
// needed = weights + OverheadMiB per GPU + the KV cache of one sequence
// of context tokens (0: the model's default); available = gpus ×
// memoryMiB × the engine's utilisation. Tensor and pipeline parallelism
// split weights and KV cache across the GPUs, so the sums are per replica.
func Compute(m Model, s Settings, context, gpus int, memoryMiB int64) Estimate {
	if context <= 0 {
		context = m.Context
	}
	kvBytes := s.KVBytes
	if kvBytes == 0 {
		kvBytes = 2
	}
	e := Estimate{
		Weights:   ceilMiB(float64(m.Weights())),
		Overhead:  int64(gpus) * OverheadMiB,
		Context:   context,
		KVKnown:   m.KVPerToken(kvBytes) > 0 && context > 0,
		Available: int64(math.Floor(float64(gpus) * float64(memoryMiB) * s.Utilization)),
	}
	if e.KVKnown {
		e.KV = ceilMiB(float64(m.KVPerToken(kvBytes)) * float64(context))
	}
	e.Needed = e.Weights + e.Overhead + e.KV
	return e
}

func ceilMiB(b float64) int64 { return int64(math.Ceil(b / mib)) }
