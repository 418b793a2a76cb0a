// Package vllm renders the direct vLLM provider: one apps/v1 Deployment
// running the vLLM OpenAI-compatible server and one ClusterIP Service in
// front of it, field for field as upstream AI Runway's vLLM provider
// renders them (providers/vllm/transformer.go in kaito-project/airunway), minus
// ownerReferences.
//
// Deliberate differences from upstream, each covered by a test:
//   - the GPU resource name is `spec.resources.gpu.type` (upstream always
//     uses nvidia.com/gpu);
//   - an explicit `enablePrefixCaching: false` renders
//     `--no-enable-prefix-caching` (upstream cannot tell it from "absent");
//   - `scaling.replicas: 0` renders a Deployment scaled to zero, with a
//     warning (upstream silently runs one replica);
//   - the pod template carries `airunway.ai/model-deployment`, which
//     upstream patches onto running pods instead;
//   - a null in overrides deletes the key, as for every provider;
//   - the default image may be pinned per cluster in the capability file
//     (`images.vllm`), which replaces upstream's registry digest lookup.
package vllm
