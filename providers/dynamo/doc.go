// Package dynamo renders the NVIDIA Dynamo provider: one nvidia.com/v1alpha1
// DynamoGraphDeployment named like the ModelDeployment, field for field as
// upstream AI Runway's Dynamo transformer renders it
// (providers/dynamo/transformer.go in kaito-project/airunway), plus the managed
// PersistentVolumeClaims and the `<name>-model-download` Job that upstream's
// controller creates imperatively before it (controller/pkg/storage/pvc.go
// and download.go), minus ownerReferences.
//
// Field mapping (services are named Vllm* for every engine, as upstream):
//   - metadata: the common labels plus `airunway.ai/model-id` (sanitised
//     `spec.model.id`); `spec.backendFramework` is the engine;
//   - topology: `Epp` (endpoint picker; the operator creates the
//     InferencePool `<name>-pool`) and a `frontendSidecar` on every worker,
//     or the standalone `Frontend` service;
//   - workers: `VllmWorker` (aggregated) or `VllmPrefillWorker` +
//     `VllmDecodeWorker` (disaggregated, with `--disaggregation-mode`, and
//     for vLLM the NIXL `--kv-transfer-config` and
//     `VLLM_NIXL_SIDE_CHANNEL_HOST`); command `python3 -m dynamo.<engine>`;
//     args from model id, servedName, contextLength, trustRemoteCode,
//     prefix caching, enforceEager and sorted `engine.args`; resources under
//     Dynamo's `gpu` key (limits and requests), memory and cpu as limits;
//     nodeSelector and tolerations in `extraPodSpec`; `envFromSecret` for
//     the Hugging Face token; `spec.pvcs` (`create: false`), volumeMounts and
//     HF_HOME for the model cache;
//   - overrides: typed keys `routerMode`, `frontend.*`, `epp.*`, then the
//     rest deep-merged into the object root (multi-node:
//     `spec.services.VllmWorker.multinode.nodeCount`);
//   - v1alpha2 autoscaling: the autoscaled worker opts into its
//     DynamoGraphDeploymentScalingAdapter, which a ScaledObject or HPA
//     scales (providers/internal/autoscale);
//   - v1alpha2 LoRA adapters (adapters.go): the workers get vLLM's LoRA
//     flags, DYN_LORA_ENABLED and a `modelRef` named after the
//     ModelDeployment, and each adapter a nvidia.com/v1alpha1 DynamoModel
//     `<name>-<adapter>` whose baseModelName is that modelRef, which the
//     operator loads into those workers; a digest of the adapters on the
//     workers' pods rolls them when a source changes; vllm backend, Dynamo
//     1.3 (disaggregated 1.4) and later;
//   - a worker placed on a Dynamic Resource Allocation pool (capability
//     file `gpu.deviceClassName`) claims its GPUs through Dynamo's own
//     `resources.claims` and `extraPodSpec.resourceClaims` from a
//     ResourceClaimTemplate per worker, without a `gpu` count (dra.go); a
//     multinode worker there needs Dynamo 1.4;
//   - mocker mode (`airunway.ai/dynamo-test-backend: mocker` with
//     `spec.provider.name: dynamo`): `python3 -m dynamo.mocker` in the
//     dynamo-planner image, no GPU, always the Frontend.
//
// Deliberate differences from upstream, each covered by a test:
//   - workers shard over their GPUs (replicaGPUs; upstream and the
//     operator set no parallelism): vllm `--tensor-parallel-size` per node
//     and `--pipeline-parallel-size` across the nodes of a multinode
//     worker, sglang `--tp-size` and trtllm `--tensor-parallel-size` over
//     every GPU; a size in `engine.args`/`extraArgs` that contradicts them
//     is an error. /dev/shm is the operator's (`sharedMemory`, 8Gi);
//   - the Epp topology is rendered only when the capability file declares
//     the Gateway API Inference Extension and `spec.gateway.enabled` is not
//     false; otherwise the Frontend (upstream picks the Epp unless disabled,
//     leaving clusters without GAIE with no Frontend);
//   - image tags follow the Dynamo release the capability file declares;
//     `images.<engine>` pins the engine's default image (the frontend
//     sidecar runs the vllm default image, so `images.vllm` pins it), and
//     `engine.image`/`spec.image` win over both;
//   - the typed override keys are consumed, not merged into the object
//     root where the CRD schema rejects them; an unknown key under
//     `frontend`/`epp` is an error, a key for a component the topology lacks
//     a warning; a null in overrides deletes the key, as for every provider;
//   - `engine.extraArgs` are appended last, verbatim, and `spec.env` is set
//     on the workers (a plaintext HF_TOKEN gives way to the token Secret;
//     HF_HOME and the NIXL host step aside when the user sets them); every
//     user string in a container (worker args, `spec.env` values, HF_HOME,
//     the download Job's model id, `routerMode`) is escaped for the
//     kubelet (providers.EscapeExpansion), and a worker that overrides
//     spread over several nodes takes shell-neutral user tokens only,
//     because the operator runs its arguments through `sh -c`
//     (multinode.go);
//   - `resources.gpu.type` other than nvidia.com/gpu is rendered as Dynamo's
//     `gpuType` next to the `gpu` count;
//   - `scaling.replicas: 0` scales the worker to zero, with a warning;
//   - an explicit `enablePrefixCaching: false` renders
//     `--no-enable-prefix-caching` (vLLM) or `--disable-radix-cache` (SGLang);
//   - `readOnly` is not rendered in volumeMounts (Dynamo's VolumeMount has no
//     such field, the API server drops it); a warning says so;
//   - every pod gets `spec.podTemplate.metadata` and the
//     `airunway.ai/model-deployment` label through `extraPodMetadata`;
//   - no `--model ""` and no empty model-id label for a custom model
//     without id; empty `resources` maps are omitted;
//   - managed PVCs and the download Job are plain manifests ordered by
//     Argo CD sync waves (Job and its PVC in wave -1, other PVCs with the
//     graph) with a Flux force annotation on the immutable Job;
//   - warnings where upstream is silent: the dropped `connector` arg, the
//     ignored mocker image and args, trtllm-ignored flags, a mocker
//     annotation without `spec.provider.name: dynamo` (upstream's provider
//     honours the annotation alone, its core controller does not).
package dynamo
