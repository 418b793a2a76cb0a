// Package fit estimates whether one replica of a model fits the GPUs it
// is placed on (issue 36): what the replica needs against what it gets.
//
// Needed, per replica (Compute):
//
//	weights   = parameters × bytes per parameter (bf16/fp16 2, fp8/int8 1,
//	            int4 0.5 + a 16-bit scale and zero point per 128 weights),
//	            or a safetensors index's metadata.total_size when known
//	overhead  = OverheadMiB (1 GiB) per GPU: CUDA context, CUDA graphs,
//	            the engine's profiling activations
//	KV cache  = one sequence of the context length ×
//	            2 × layers × KV heads × head size × 2 bytes
//	            (1 with --kv-cache-dtype fp8)
//
// The context length is `spec.engine.contextLength`, else the one the
// engine args set (--max-model-len, --context-length), else the model's
// max_position_embeddings: what vLLM serves when not told less, and vLLM
// refuses to start when its KV cache cannot hold one such sequence.
// Available = GPUs per replica × the pool's `gpu.memoryMiB` × the
// engine's share: vLLM's --gpu-memory-utilization (0.9 by default);
// SGLang's --mem-fraction-static (0.85 assumed: its default depends on the
// GPU); TensorRT-LLM 0.9 (its KV cache takes 0.9 of what the weights leave
// free). Tensor and pipeline parallelism split weights and KV cache across
// the replica's GPUs, so the sums are per replica, GPUs times the pool's
// memory; each GPU's own overhead is counted once per GPU.
//
// The model's facts come, in order, from:
//
//  1. a local directory the caller read (ReadDir: its config.json and
//     model.safetensors.index.json only, each at most 8 MiB, offline);
//     render.Options.Models carries them by model id;
//  2. the catalog (catalog.json, embedded): rows derived by
//     hack/derive-model-catalog from public copies of the models'
//     config.json, then from KAITO's generated model list (the
//     checkpoint's size, the context limit, the attention shape) for the
//     models no config covers; each source pinned by repository, commit,
//     path and sha256, with the copies kept in the repository so that a
//     test re-derives every row offline (hack/derive-model-catalog's tests
//     also hold the parameter counts to the publishers' stated sizes, and
//     the two sources to each other). A KV cache is counted only for
//     full-attention architectures and DeepSeek V3's latent attention:
//     sliding-window and hybrid models keep far less than their shape
//     suggests, and carry their weights only;
//  3. the size in the model id (FromID: -8B, -0.6B, -8x7B as 0.8 × 8 × 7B,
//     -30B-A3B as 30B, a quantization the name announces), without a KV
//     cache, as an assumption the renderer notes.
//
// The estimate is a lower bound on purpose: a false "does not fit" stops
// a model that would run, so the overhead is the low end of what engines
// take, and anything above Tight (90%) of what the GPUs give is only a
// warning. render decides what to report (render/fit.go); this package
// knows no ModelDeployment, no provider and no cluster.
package fit
