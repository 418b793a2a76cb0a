// Package kaito renders the KAITO provider: one `kaito.sh/v1beta1`
// Workspace per ModelDeployment, field for field as upstream AI Runway's
// KAITO provider renders it (providers/kaito/transformer.go in
// kaito-project/airunway), minus
// ownerReferences. The Workspace has no `spec`: `resource` and `inference`
// sit at the root.
//
// Field mapping:
//   - metadata: name and namespace of the ModelDeployment; the upstream
//     labels with `spec.podTemplate.metadata.labels` merged on top;
//     `spec.podTemplate.metadata.annotations` plus the generated-from marker;
//   - `resource.count` = `spec.scaling.replicas`;
//   - `resource.labelSelector.matchLabels` = `kubernetes.io/os: linux`, then
//     `spec.nodeSelector`, then (KAITO ≥ 0.8, GPUs requested)
//     `nvidia.com/gpu.present: "true"`, which the user cannot turn off;
//   - `resource.instanceType` = the capability file's
//     `nodeAutoProvisioning.gpuInstanceType` (GPUs requested) or
//     `cpuInstanceType`, only when the file declares node auto-provisioning
//     (upstream reads AIRUNWAY_KAITO_* environment variables instead);
//   - engine vllm → `inference.preset.name` = `spec.model.id`;
//   - engine llamacpp → `inference.template`: container `model` running the
//     image with `[<ggufUrl or huggingface://<id>>, --address=:5000]`, port
//     5000, memory/cpu requests, `spec.env` plus HF_TOKEN from the Secret,
//     pod label `airunway.ai/model-deployment`;
//   - `spec.provider.overrides` deep-merged at the root, a null deleting the
//     key (upstream's KAITO semantics).
//
// Version-aware, from the release the capability file declares:
//   - KAITO < 0.8 (0.6.x, 0.7.x): no GPU label is forced (nodes are reused
//     through `resource.preferredNodes`, which overrides may set, or by
//     instance type); a warning explains the CRD's default instance type
//     when neither preferredNodes nor an instance type is given;
//   - KAITO ≥ 0.8: GPU nodes are selected by label (`nvidia.com/gpu.present`
//     forced for GPUs), `resource.preferredNodes` is rendered with a
//     deprecation warning (the controller ignores it), and
//     `resource.instanceType` must be present exactly when the capability
//     file declares node auto-provisioning (KAITO's webhook rule);
//   - KAITO < 0.9: a preset name containing "/" (a Hugging Face id) is an
//     error: those releases accept only registered preset names.
//
// Deliberate differences from upstream, each covered by a test:
//   - `spec.scaling.replicas: 0` is an error (upstream silently runs 1);
//   - the llama.cpp image may come from `spec.engine.image` alone (upstream's
//     compatibility check insists on the legacy `spec.image`), and the
//     capability file's `images.llamacpp` pin is the fallback;
//   - the llama.cpp container gets a GPU limit under
//     `spec.resources.gpu.type` (upstream renders no GPU), the pod template
//     carries `spec.tolerations` and the podTemplate labels and annotations,
//     and `spec.env` entries keep every `valueFrom` form (upstream keeps only
//     secretKeyRef);
//   - presets get the Hugging Face token Secret as
//     `inference.preset.presetOptions.modelAccessSecret` (upstream passes
//     none, so gated presets are refused by KAITO);
//   - a preset with `spec.resources.gpu.type` other than nvidia.com/gpu is an
//     error (KAITO presets can only request NVIDIA GPUs);
//   - a preset model id with characters no preset name or Hugging Face id
//     has is an error: KAITO writes the name into the pods it creates,
//     where the renderer cannot keep `$(...)` literal; the llama.cpp
//     template's model argument and `spec.env` values are escaped
//     (providers.EscapeExpansion);
//   - every field a path does not render is named in a warning instead of
//     being dropped silently;
//   - the `airunway.ai/model-deployment` label cannot be overridden by
//     podTemplate labels;
//   - the version checks above, which upstream (pinned to KAITO 0.10) lacks;
//   - on a Dynamic Resource Allocation pool (capability file
//     `gpu.deviceClassName`) a preset is refused (KAITO requests
//     nvidia.com/gpu for the pods it creates), and a llama.cpp template
//     claims its GPUs from a ResourceClaimTemplate on KAITO 0.8 and later
//     without node auto-provisioning, refused otherwise (dra.go).
package kaito
