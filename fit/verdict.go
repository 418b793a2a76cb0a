package fit

import "math"

// Status is what the memory fit found for one replica.
type Status string

// The statuses of a Verdict.
const (
	// Fits: the estimate is at most Tight of what the GPUs give.
	StatusFits Status = "fits"
	// Tight: it fits, above Tight of what the GPUs give (tight-fit).
	StatusTight Status = "tight"
	// ShortContext: the weights fit, but a KV cache for one sequence of
	// the context does not; an engine other than vLLM serves shorter
	// sequences (a tight-fit warning).
	StatusShortContext Status = "short-context"
	// DoesNotFit: the render fails.
	StatusDoesNotFit Status = "does-not-fit"
	// NotChecked: Reason says why.
	StatusNotChecked Status = "not-checked"
)

// Verdict is the memory fit of one placed component of one model, as the
// renderer found it (render.Result.Fits): what `plan` prints in its memory
// table and `preview` compares before and after an upgrade. The renderer
// fills it; this package only names its fields.
type Verdict struct {
	// Namespace and Name of the ModelDeployment.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// ModelID is its spec.model.id.
	ModelID string `json:"modelId,omitempty"`
	// Component: main, prefill or decode.
	Component string `json:"component,omitempty"`
	// Pool the component is placed on.
	Pool string `json:"pool,omitempty"`
	// GPUs of one replica (all its nodes').
	GPUs int `json:"gpusPerReplica,omitempty"`
	// NeededMiB and AvailableMiB per replica (Estimate); 0 when not
	// checked.
	NeededMiB    int64 `json:"neededMiB,omitempty"`
	AvailableMiB int64 `json:"availableMiB,omitempty"`
	// Source of the model's facts (Model.Source).
	Source string `json:"source,omitempty"`
	Status Status `json:"status"`
	// Reason the fit was not checked, or the engine's refusal.
	Reason string `json:"reason,omitempty"`
	// Engine names the arithmetic held: "vLLM v0.19.0" (its release's
	// start-up rules), empty for the lower bound of other engines.
	Engine string `json:"engine,omitempty"`
	// PerGPU is one GPU's memory at start-up, as the engine accounts it
	// (vLLM).
	PerGPU *PerGPUMiB `json:"perGPU,omitempty"`
	// KVCacheTokens is the engine's "GPU KV cache size" for the replica;
	// MaxConcurrency how many requests of ContextLength tokens it holds
	// at once.
	KVCacheTokens  int64   `json:"kvCacheTokens,omitempty"`
	MaxConcurrency float64 `json:"maxConcurrency,omitempty"`
	ContextLength  int     `json:"contextLength,omitempty"`
}

// PerGPUMiB is PerGPU in MiB: of TotalMiB (what the engine sees of the
// GPU), UsableMiB (× --gpu-memory-utilization) holds the weights, the
// memory outside torch, the profiling run's activation peak, and what is
// left is the KV cache (KVCacheMiB: vLLM's "Available KV cache memory").
// CUDAGraphMiB is taken from the KV cache only where the release does so
// (CUDAGraphSubtracted); otherwise it comes out of the rest of the GPU.
type PerGPUMiB struct {
	TotalMiB            int64 `json:"totalMiB"`
	UsableMiB           int64 `json:"usableMiB"`
	WeightsMiB          int64 `json:"weightsMiB"`
	NonTorchMiB         int64 `json:"nonTorchMiB"`
	ActivationMiB       int64 `json:"activationMiB"`
	CUDAGraphMiB        int64 `json:"cudaGraphMiB"`
	CUDAGraphSubtracted bool  `json:"cudaGraphSubtracted,omitempty"`
	KVCacheMiB          int64 `json:"kvCacheMiB"`
}

// MiB turns one GPU's start-up memory into MiB, each rounded to the
// nearest; the KV cache is what the rounded figures leave, so that the
// figures printed add up (unless a KV cache size set by hand replaced
// the subtraction).
func (p PerGPU) MiB() *PerGPUMiB {
	m := func(b int64) int64 { return int64(math.Round(float64(b) / mib)) }
	out := &PerGPUMiB{TotalMiB: m(p.Total), UsableMiB: m(p.Usable), WeightsMiB: m(p.Weights), NonTorchMiB: m(p.NonTorch),
		ActivationMiB: m(p.Activation), CUDAGraphMiB: m(p.CUDAGraph), CUDAGraphSubtracted: p.CUDAGraphSubtracted, KVCacheMiB: m(p.KVCache)}
	rest, restMiB := p.Usable-p.Weights-p.NonTorch-p.Activation, out.UsableMiB-out.WeightsMiB-out.NonTorchMiB-out.ActivationMiB
	if p.CUDAGraphSubtracted {
		rest, restMiB = rest-p.CUDAGraph, restMiB-out.CUDAGraphMiB
	}
	if rest == p.KVCache {
		out.KVCacheMiB = restMiB
	}
	return out
}

// Checked reports whether the fit was estimated.
func (v Verdict) Checked() bool { return v.Status != StatusNotChecked }

// HeadroomPercent is the share of the available memory the estimate
// leaves free, rounded towards zero (negative when it does not fit); 0
// when not checked.
func (v Verdict) HeadroomPercent() int {
	if !v.Checked() || v.AvailableMiB <= 0 {
		return 0
	}
	return int((v.AvailableMiB - v.NeededMiB) * 100 / v.AvailableMiB)
}
