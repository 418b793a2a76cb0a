// Package llmd renders the llm-d provider: plain apps/v1 Deployments running
// the vLLM OpenAI-compatible server and ClusterIP Services in front of them,
// field for field as upstream AI Runway's llm-d provider renders them
// (providers/llmd/transformer.go in kaito-project/airunway), minus ownerReferences. llm-d's own part, the
// endpoint picker and InferencePool, belongs to the gateway objects and is
// not rendered here.
//
// Objects: aggregated `[Deployment <md>, Service <md>]`; disaggregated
// `[Deployment <md>-decode, Deployment <md>-prefill, Service <md>-decode,
// Service <md>-prefill]`. Selector `{airunway.ai/deployment: <md>, app:
// <deployment name>}`, which podTemplate labels cannot override. Container
// `vllm`: image engine.image > spec.image > capability pin `images.vllm` >
// vllm/vllm-openai:v0.19.1; no command; port http 8000; args `--model`,
// `--served-model-name`, `--max-model-len`, `--trust-remote-code`, prefix
// caching (always one of `--enable-prefix-caching` and
// `--no-enable-prefix-caching`), `--enforce-eager`, `--tensor-parallel-size`
// (more than one GPU), `--kv-transfer-config` (PyNccl consumer on decode,
// producer on prefill), `engine.args` sorted, `engine.extraArgs`; GPUs and
// memory as limits and requests, cpu as a request (component GPUs and
// memory in disaggregated mode); `spec.env` then HF_TOKEN; nodeSelector and
// tolerations; a memory-backed /dev/shm for more than one GPU (upstream
// mounts none). Overrides are merged into each Deployment, never a
// Service. No other volumes, as upstream. A parallelism
// flag that contradicts a server's GPUs is an error. Nothing depends on the llm-d
// release (0.6 to 0.10 render the same model servers).
//
// Deliberate differences from upstream, each covered by a test:
//   - every model server has a startup probe (one hour) and a readiness
//     probe on vLLM's /health:8000, and no liveness probe (upstream renders
//     no probes, so its pods are Ready, and routed to, while the model
//     still loads; see probes);
//   - the GPU resource name is `gpu.type` of `spec.resources` or of the
//     component (upstream always uses nvidia.com/gpu);
//   - without an engine object, prefix caching takes the CRD default and
//     renders `--enable-prefix-caching` (upstream reads the missing value
//     as false and renders `--no-enable-prefix-caching`);
//   - `scaling.replicas: 0` scales the Deployment to zero with a warning
//     (upstream runs one replica); component replicas 0 also warn;
//   - pod templates carry `airunway.ai/model-deployment` (the InferencePool
//     selector), decode pods only in disaggregated mode, as upstream's
//     pod patching reaches only the pods behind the endpoint Service;
//   - a derived flag steps aside when the user sets the same flag in
//     `engine.args` or `engine.extraArgs` (upstream emits both; vLLM keeps
//     the later, the user's, so the server runs the same);
//   - any env `valueFrom` is passed through and wins over `value`, and a
//     plaintext HF_TOKEN gives way to the Secret (upstream keeps only
//     secretKeyRef and emits both HF_TOKEN entries);
//   - a null in overrides deletes the key, as for every provider, and
//     replacing `spec` or `spec.template` with a non-object is refused like
//     `spec.template.spec` itself;
//   - no `--model` flag for a model without an id (upstream renders an
//     empty value);
//   - names that make the generated Service names invalid are refused;
//   - ignored fields (storage, resources and replicas of the other serving
//     mode) are named in warnings.
package llmd
