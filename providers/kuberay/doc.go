// Package kuberay renders the KubeRay provider: one ray.io/v1 RayService
// that runs vLLM under Ray Serve, field for field as upstream AI Runway's
// KubeRay provider renders it (providers/kuberay/transformer.go in
// kaito-project/airunway), minus
// ownerReferences.
//
// Field mapping:
//   - metadata: the MD's name and namespace; labels managed-by, deployment,
//     model-source, engine-type, model-deployment and the podTemplate
//     labels; annotations the podTemplate annotations and the
//     generated-from marker;
//   - spec.serveConfigV2: upstream's fixed Serve config, one application
//     `llm` whose deployment `VLLMDeployment` runs scaling.replicas
//     replicas;
//   - head group (rayStartParams dashboard-host 0.0.0.0): container
//     ray-head, limits cpu 4 and resources.memory (default 16Gi), env
//     MODEL_ID, VLLM_ENGINE_ARGS (EngineArgs), spec.env, HF_TOKEN;
//   - worker groups, fixed size (replicas = min = max), rayStartParams {}:
//     aggregated `gpu-workers` sized by scaling.replicas and resources;
//     disaggregated `prefill-workers` then `decode-workers` sized by
//     scaling.prefill/decode; container ray-worker, limits memory (default
//     32Gi) and `<gpu.type>: <count>`;
//   - image: engine.image > spec.image > the capability file's images.vllm
//     > rayproject/ray-llm:2.55.0-py311-cu128.
//
// The rendered fields are the same in every supported KubeRay release
// (1.3 to 1.7): rayStartParams is always written because 1.3's schema
// requires it; nothing deprecated (serviceUnhealthySecondThreshold,
// deploymentUnhealthySecondThreshold) or newer than 1.3 is rendered. What
// differs by release is the names the operator accepts (checkName).
//
// Deliberate differences from upstream, each covered by a test:
//
//   - worker pods get spec.nodeSelector and spec.tolerations (upstream
//     drops both); the head pod, which needs no GPU, gets neither;
//
//   - worker containers get spec.env and the HF_TOKEN Secret (upstream:
//     head only, although vLLM downloads the weights in the workers);
//
//   - spec.env keeps every valueFrom source (upstream keeps secretKeyRef
//     only), a plaintext HF_TOKEN gives way to the Secret, and a user
//     MODEL_ID or VLLM_ENGINE_ARGS replaces the generated one;
//
//   - VLLM_ENGINE_ARGS also carries --enforce-eager, prefix caching
//     (--no-enable-prefix-caching for an explicit false) and
//     engine.extraArgs, which upstream drops; a derived flag steps aside
//     when the user sets it; invalid arg keys and arguments with whitespace
//     (the variable is split on spaces) are errors;
//
//   - a replica shards over its worker pod's N GPUs (upstream renders no
//     parallelism, and vLLM loads the model on one GPU): VLLM_ENGINE_ARGS
//     carries --tensor-parallel-size N, the serve config a STRICT_PACK
//     placement group of N GPU bundles (ReplicaPlacement), workers with
//     N > 1 a memory-backed /dev/shm; a parallelism flag that contradicts
//     N is an error (providers.CheckParallelism);
//
//   - spec.provider.overrides are deep-merged into the RayService, null
//     deleting (upstream KubeRay applies none);
//
//   - podTemplate labels and annotations also go on the Ray pod templates
//     (upstream: RayService only), and cannot replace the airunway.ai labels
//     the renderer sets;
//
//   - scaling.replicas 0 renders num_replicas 0 and an empty worker group,
//     with a warning (upstream silently runs 1);
//
//   - the capability file may pin the image (images.vllm);
//
//   - names the declared KubeRay release cannot run are errors at render
//     time: from 1.4 the operator rejects names over 47 characters or not
//     DNS-1035; 1.3 fails on names over 46 (the ray.io/cluster pod label)
//     and renames the serve Service of names over 40 or starting with a
//     digit (warning);
//
//   - the compatibility check reports every problem, and checks decode GPUs
//     as well as prefill;
//
//   - resource quantities are written in canonical form (1.5Gi as 1536Mi;
//     upstream copies the string).
//
//   - spec.resources.cpu is the workers' cpu request (upstream ignores it);
//     without it the workers request the engine's default
//     (providers.Placement.FillRequests), so every model-server pod
//     requests cpu and memory.
//
//   - a worker group placed on a Dynamic Resource Allocation pool (capability
//     file `gpu.deviceClassName`) claims its GPUs from a ResourceClaimTemplate
//     of its own instead of requesting the extended resource, and its
//     rayStartParams get `num-gpus` (KubeRay derives it from a GPU limit
//     only; dra.go); KubeRay 1.3.0 cannot carry the claim and is refused.
//
// Ignored, as upstream, with a warning naming the field:
// spec.model.storage.volumes. The disaggregated mode
// gets a warning too: the Serve config does not split prefill from decode.
package kuberay
