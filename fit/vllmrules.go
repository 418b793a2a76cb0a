package fit

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// VLLMRules are the start-up arithmetic of a group of vLLM releases that
// size memory alike: their defaults for the OpenAI server and the figures
// their memory profile finds. Each group was read from vLLM's source at
// its release tags (vllm/engine/arg_utils.py, vllm/v1/worker/gpu_worker.py,
// gpu_model_runner.py, vllm/v1/core/kv_cache_utils.py, the memory
// profiler in vllm/utils); the figures a source does not fix (what the
// sampler, the NCCL buffers and the CUDA graphs take) are held to the
// public start-up logs of fit/calibration. docs/will-it-run.md lists the
// lines each rule comes from.
type VLLMRules struct {
	// Name names the group ("vLLM v0.19").
	Name string
	// Releases are the release tags whose source the rules were read
	// from.
	Releases []string
	// DefaultUtilization is --gpu-memory-utilization's default.
	DefaultUtilization float64
	// BatchedTokensBig/SeqsBig are max_num_batched_tokens and
	// max_num_seqs for the OpenAI server on a GPU of at least 70 GiB whose
	// name does not say A100; the Small ones on any other.
	BatchedTokensBig, SeqsBig, BatchedTokensSmall, SeqsSmall int
	// SeqsCappedByBatched: the default max_num_seqs is at most
	// max_num_batched_tokens (v0.10.1); BatchedCappedBySeqsLen: the
	// default max_num_batched_tokens is at most max_num_seqs ×
	// max_model_len (v0.11.1).
	SeqsCappedByBatched, BatchedCappedBySeqsLen bool
	// SamplerBytesPerLogit: the dummy sampler's peak per row and
	// vocabulary entry of the profiling run's logits (a float32 copy, a
	// sort's values and int64 indices, probabilities).
	SamplerBytesPerLogit float64
	// ForwardBaseGiB is what a forward pass holds besides its MLP's
	// activations; ActivationBaseGiB what the profile adds to the larger
	// of the sampler's and the forward pass's peaks.
	ForwardBaseGiB, ActivationBaseGiB float64
	// NonTorchGiB, NonTorchTPGiB, NonTorchPPGiB: memory outside torch
	// at TP 1, with TP > 1 over NVLink or two GPUs (NCCL and the custom
	// all-reduce's buffers), and with PP alone; NonTorchTPPCIeGiB with
	// TP > 2 on GPUs without NVLink, where vLLM's custom all-reduce is
	// off.
	NonTorchGiB, NonTorchTPGiB, NonTorchPPGiB, NonTorchTPPCIeGiB float64
	// CUDAGraphGiB, CUDAGraphTPGiB: the graphs' memory at TP 1 and TP > 1.
	CUDAGraphGiB, CUDAGraphTPGiB float64
	// SubtractsCUDAGraphs: the release takes its estimate of the CUDA
	// graphs out of the KV cache (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
	// on by default), except for the architectures that run on the V2
	// model runner, whose estimate is 0.
	SubtractsCUDAGraphs   bool
	V2RunnerArchitectures []string
	// HybridKVCache: layers of different kinds (full, sliding window)
	// keep their own groups (v0.9.1's hybrid allocator); without it the
	// sliding layers are counted as full attention.
	HybridKVCache bool
	// TokensFromConcurrency: "GPU KV cache size" prints concurrency ×
	// max_model_len (v0.23.0), not blocks × block size.
	TokensFromConcurrency bool
	// Wording of the one-sequence refusal: "models's" up to v0.19,
	// "model's" from v0.23; whether it names the estimated maximum
	// length (not in v0.9.0).
	ModelsApostrophe, NamesEstimatedLength bool
}

// Shared figures, measured on the H100 logs of vLLM 0.19 (the native
// sampler sorts float32 logits with int64 indices: about 15 bytes a
// logit) and held to the other releases' logs.
const (
	nativeSampler = 15.3
	forwardBase   = 0.15
)

// The release groups read from vLLM's source, oldest first: each is the
// group before it with what its releases changed.
var vllmReleases = releaseGroups()

func releaseGroups() []*VLLMRules {
	// v0.9.0: the KV budget is T·u − the torch peak (weights included) −
	// memory outside torch; sliding-window layers are counted as full
	// attention; the refusal names no estimated length (a dangling
	// f-string).
	v090 := &VLLMRules{
		Name: "vLLM v0.9.0", Releases: []string{"v0.9.0", "v0.9.0.1"},
		DefaultUtilization: 0.9, BatchedTokensBig: 8192, SeqsBig: 1024, BatchedTokensSmall: 2048, SeqsSmall: 256,
		SamplerBytesPerLogit: nativeSampler, ForwardBaseGiB: forwardBase, ActivationBaseGiB: 0.6,
		NonTorchGiB: 0.25, NonTorchTPGiB: 2.1, NonTorchPPGiB: 0.07, NonTorchTPPCIeGiB: 0.3,
		CUDAGraphGiB: 0.84, CUDAGraphTPGiB: 1.6, ModelsApostrophe: true,
	}
	// v0.9.1–v0.9.2: memory_profiling's K = T·u − (W + ACT + NT), the
	// snapshot before NCCL starts; the hybrid allocator; FlashInfer's
	// sampler by default. The 0.6 GiB the profile adds is what the one
	// v0.9.2 log (A100 40GB) shows beyond the sampler; the source does
	// not say where it goes.
	v091 := newer(v090, "vLLM v0.9.1–v0.9.2", []string{"v0.9.1", "v0.9.2"}, func(r *VLLMRules) {
		r.HybridKVCache, r.NamesEstimatedLength = true, true
	})
	// v0.10.0–v0.10.1.1: the same source as v0.9.2 (profile_run and the
	// dummy sampler unchanged), but the v0.10.1.1 logs (A100 80GB) show
	// nothing beyond the sampler's peak: no 0.6 GiB.
	v010 := newer(v091, "vLLM v0.10.0–v0.10.1", []string{"v0.10.0", "v0.10.1", "v0.10.1.1"}, func(r *VLLMRules) {
		r.ActivationBaseGiB = 0
	})
	// v0.11.1–v0.15.1: NCCL's buffers come out of the 1 − u margin (the
	// snapshot after NCCL starts), the native sampler, batch defaults
	// capped by max_num_seqs × max_model_len.
	v011 := newer(v010, "vLLM v0.11–v0.15", []string{"v0.11.1", "v0.11.2", "v0.14.0", "v0.14.1", "v0.15.1"}, func(r *VLLMRules) {
		r.SeqsCappedByBatched, r.BatchedCappedBySeqsLen = true, true
	})
	// v0.19: the CUDA graphs are estimated, not subtracted (the
	// environment variable defaults to 0): the figures of v0.11–v0.15,
	// held to their own logs.
	v019 := newer(v011, "vLLM v0.19", []string{"v0.19.0", "v0.19.1"}, nil)
	// v0.23.0–v0.24.0: --gpu-memory-utilization 0.92, and the CUDA
	// graphs' estimate subtracted — but not on the V2 model runner, the
	// default for these architectures, whose estimate is 0; "GPU KV cache
	// size" is concurrency × max_model_len; "model's" in the refusal.
	v023 := newer(v019, "vLLM v0.23–v0.24", []string{"v0.23.0", "v0.24.0"}, func(r *VLLMRules) {
		r.DefaultUtilization, r.SubtractsCUDAGraphs, r.TokensFromConcurrency, r.ModelsApostrophe = 0.92, true, true, false
		r.V2RunnerArchitectures = []string{"LlamaForCausalLM", "MistralForCausalLM", "Qwen3ForCausalLM"}
	})
	return []*VLLMRules{v090, v091, v010, v011, v019, v023}
}

// newer is the group after prev: prev's rules with change applied.
func newer(prev *VLLMRules, name string, releases []string, change func(*VLLMRules)) *VLLMRules {
	r := *prev
	r.Name, r.Releases = name, releases
	if change != nil {
		change(&r)
	}
	return &r
}

// NewestVLLM is the newest release's rules: what an image whose release
// is unknown is held to.
func NewestVLLM() *VLLMRules { return vllmReleases[len(vllmReleases)-1] }

// VLLMReleases lists the groups, oldest first.
func VLLMReleases() []*VLLMRules { return vllmReleases }

// VLLMRelease returns the rules of a vLLM release ("v0.19.0"): its own
// when its source was read (exact); else those of a read release of the
// same minor (v0.11.0 → v0.11.1's), else of the newest group older than
// it (a release between two read ones, or newer than all), or the oldest
// group for an older release.
func VLLMRelease(release string) (r *VLLMRules, exact bool) {
	for _, r := range vllmReleases {
		if slices.Contains(r.Releases, release) {
			return r, true
		}
	}
	want, err := version.ParseGeneric(strings.TrimPrefix(release, "v"))
	if err != nil {
		return NewestVLLM(), false
	}
	for _, r := range vllmReleases {
		for _, tag := range r.Releases {
			v, err := version.ParseGeneric(strings.TrimPrefix(tag, "v"))
			if err == nil && v.Major() == want.Major() && v.Minor() == want.Minor() {
				return r, false
			}
		}
	}
	best := vllmReleases[0]
	for _, r := range vllmReleases {
		first, err := version.ParseGeneric(strings.TrimPrefix(r.Releases[0], "v"))
		if err == nil && !want.LessThan(first) {
			best = r
		}
	}
	return best, false
}

// runsOnV2 reports whether the model runs on the V2 model runner, whose
// CUDA graph estimate is 0.
func (r *VLLMRules) runsOnV2(m *Model) bool {
	return slices.Contains(r.V2RunnerArchitectures, m.Architecture) && m.Experts == 0 && m.Quantization == nil
}
