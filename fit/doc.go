// Package fit predicts what an inference engine does with one replica of
// a model on its GPUs: whether it starts, and what it has left for the
// KV cache. render decides what to report (render/fitvllm.go,
// render/fit.go, render/fitkaito.go); this package knows no
// ModelDeployment, no provider and no cluster.
//
// # vLLM: its own start-up, release by release
//
// VLLMRules.StartUp repeats what vLLM's worker does before it serves
// (vllm.go, kvcache.go; the derivation is docs/vllm-startup-arithmetic.md):
//
//  1. the checks that refuse a configuration before any memory is
//     counted (Refuses): a --max-model-len above what the model derives,
//     attention heads, KV heads or a padded vocabulary that the tensor
//     parallel size does not divide, more pipeline stages than layers;
//  2. per GPU, of the device's total (gpu.go: the total CUDA reports,
//     not the label): usable = total × --gpu-memory-utilization; the KV
//     cache gets usable − weights − non-torch memory − the profiling
//     run's activation peak (− the CUDA graphs, where the release
//     subtracts them);
//  3. the KV cache as tokens and as concurrency at --max-model-len,
//     grouped the way vLLM groups sliding-window and full-attention
//     layers, and the refusal when it holds no memory or not one
//     sequence of --max-model-len.
//
// The weights (weights.go) follow the checkpoint: its safetensors size
// when known, else parameters × the quantization's bytes, split across
// tensor and pipeline ranks, with KV heads replicated when fewer than
// the tensor parallel size. The constants that differ between releases
// (the default utilization and batch sizes, what the sampler and the
// forward pass keep, whether CUDA graphs come out of the KV cache) are
// grouped by the releases that share them (vllmrules.go); VLLMRelease
// maps an image tag to its group, and an unknown or nightly tag to the
// newest.
//
// The prediction is held to vLLM's own logs (calibration.go,
// calibration/vllm-startup-logs.yaml): each row quotes a published
// start-up log's lines and its source, and the test asserts the KV cache
// within max(3%, 512 MiB) of what the log prints, and the refusals word
// for word. docs/will-it-run.md shows the table and its gaps.
//
// # Facts about a model
//
// The facts (Model, model.go) come, in order, from:
//
//  1. a ModelCatalog in the repository, or a local directory the caller
//     read (ReadDir: config.json, hf_quant_config.json and
//     model.safetensors.index.json only, each at most 8 MiB, offline);
//     render.Options.Models carries them by model id;
//  2. the embedded catalog (catalog.json): rows derived by
//     hack/derive-model-catalog from pinned public copies of the
//     models' config.json, then from KAITO's model list for the models
//     no config covers; each source named by repository, commit, path
//     and sha256 (Entry.From), with the copies kept in the repository so
//     that a test re-derives every row offline;
//  3. the size in the model id (FromID: -8B, -8x7B, -30B-A3B), without
//     an attention shape: weights only, reported as an assumption and
//     never as "fits".
//
// # Other engines and KAITO
//
// SGLang and TensorRT-LLM are estimated, not calibrated (estimate.go):
// weights, 1 GiB per GPU and one sequence's KV cache against the
// engine's memory share; render reports such a verdict as
// uncalibrated. A KAITO preset is not estimated this way:
// KAITORelease (kaito.go) repeats KAITO's own node estimator, release
// by release, with KAITO's own figures for the model
// (kaito_presets.json, derived by hack/derive-kaito-sizing).
package fit
