// Package kuberay renders the KubeRay provider: one ray.io/v1 RayService
// that runs vLLM under Ray Serve LLM, its Ray cluster field for field as
// upstream AI Runway's KubeRay provider renders it
// (providers/kuberay/transformer.go in kaito-project/airunway), minus
// ownerReferences, and a Serve config that the Ray image can run.
//
// Field mapping:
//   - metadata: the MD's name and namespace; labels managed-by, deployment,
//     model-source, engine-type, model-deployment and the podTemplate
//     labels; annotations the podTemplate annotations and the
//     generated-from marker;
//   - spec.serveConfigV2 (ServeConfig): one application `llm` built by Ray
//     Serve LLM's `ray.serve.llm:build_openai_app`, whose one LLMConfig
//     loads spec.model.id under the served name, with the engine arguments
//     as engine_kwargs (EngineKwargs) and scaling.replicas replicas;
//   - head group (rayStartParams dashboard-host 0.0.0.0): container
//     ray-head, limits cpu 4 and resources.memory (default 16Gi), env
//     spec.env, HF_TOKEN;
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
//   - the Serve config: upstream imports `vllm_serve:deployment` with the
//     model in MODEL_ID and the flags in VLLM_ENGINE_ARGS, a module of
//     KubeRay's vLLM sample that no Ray image carries (the sample fetches
//     it through runtime_env.working_dir), so its application never
//     deploys; here it is Ray Serve LLM's builder, as KubeRay's own Ray
//     Serve LLM sample (ray-operator/config/samples/
//     ray-service.llm-serve.yaml) and docs.ray.io serve/llm run it;
//     arguments Ray Serve LLM refuses in engine_kwargs (model,
//     served_model_name, another executor backend, one key of a JSON flag)
//     are errors, and a user MODEL_ID or VLLM_ENGINE_ARGS in spec.env gets
//     a warning: nothing reads it;
//
//   - worker pods get spec.nodeSelector and spec.tolerations (upstream
//     drops both); the head pod, which needs no GPU, gets neither;
//
//   - worker containers get spec.env and the HF_TOKEN Secret (upstream:
//     head only, although vLLM downloads the weights in the workers);
//
//   - spec.env keeps every valueFrom source (upstream keeps secretKeyRef
//     only), and a plaintext HF_TOKEN gives way to the Secret;
//
//   - the engine arguments also carry enforce_eager, prefix caching
//     (false for an explicit false) and engine.extraArgs, which upstream
//     drops; a derived argument steps aside when the user sets it;
//
//   - a replica shards over its worker pod's N GPUs (upstream renders no
//     parallelism, and vLLM loads the model on one GPU): engine_kwargs
//     carry tensor_parallel_size N, the LLMConfig a STRICT_PACK placement
//     group of N GPU bundles, workers with N > 1 a memory-backed
//     /dev/shm; a parallelism flag that contradicts N is an error
//     (providers.CheckParallelism);
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
