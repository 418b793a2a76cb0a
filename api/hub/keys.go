package hub

// Provider names: the values of `spec.provider.name` and of a capability
// file's `spec.providers[].name`. Each provider package reports its own
// through providers.Provider.Name; this is the one place they are spelt.
const (
	ProviderDynamo  = "dynamo"
	ProviderKAITO   = "kaito"
	ProviderKubeRay = "kuberay"
	ProviderLLMD    = "llmd"
	ProviderVLLM    = "vllm"
)

// Labels of the output contract: every generated object carries them, the
// gateway's InferencePool and the status reporter select on them. The
// first four are upstream AI Runway's provider labels.
const (
	LabelManagedBy       = "airunway.ai/managed-by"
	LabelDeployment      = "airunway.ai/deployment"
	LabelModelSource     = "airunway.ai/model-source"
	LabelEngineType      = "airunway.ai/engine-type"
	LabelModelDeployment = "airunway.ai/model-deployment"
	ManagedByValue       = "airunway"
)

// Annotations of the output contract.
const (
	// AnnotationGeneratedFrom marks an object as rendered from the named
	// ModelDeployment; objects carrying it are replaced on every run, which
	// is what makes rendering idempotent and prunes orphans.
	AnnotationGeneratedFrom = "render.airunway.ai/generated-from"

	// The renderer's decisions, written on each ModelDeployment; the status
	// reporter copies them into status, and a later render keeps an
	// automatic choice it finds there.
	AnnotationEngine         = "render.airunway.ai/engine"
	AnnotationEngineReason   = "render.airunway.ai/engine-reason"
	AnnotationProvider       = "render.airunway.ai/provider"
	AnnotationProviderReason = "render.airunway.ai/provider-reason"
	AnnotationNodePool       = "render.airunway.ai/node-pool"
	AnnotationNodePoolReason = "render.airunway.ai/node-pool-reason"
	// AnnotationProviderVersion is the operator release the objects were
	// rendered for, as the capability file declares it; absent for a
	// provider without an operator (vllm).
	AnnotationProviderVersion = "render.airunway.ai/provider-version"
	// AnnotationServedName is the model name the rendered server answers
	// to, what clients send as OpenAI's `model`: spec.model.servedName,
	// else the id, unless the provider decides it (KAITO); absent when the
	// server answers to any name (llama.cpp). `preview` holds it across an
	// upgrade: a change breaks every client.
	AnnotationServedName = "render.airunway.ai/served-name"
	// AnnotationEndpoint is the Service and port, "service:port" in the
	// model's namespace, that clients call in the cluster: the one the
	// provider renders or its operator creates, and the status reporter
	// reports once it runs.
	AnnotationEndpoint = "render.airunway.ai/endpoint"
	// AnnotationAPIFormats lists, comma-separated, the API formats the
	// model's engine answers through its provider (EngineCapability
	// APIFormats): what the gateway routes to it, the status reporter
	// reports in status.gateway.apiFormats and `preview` holds across an
	// upgrade (a format lost breaks its clients).
	AnnotationAPIFormats = "render.airunway.ai/api-formats"
	// AnnotationWorkload is the kind of the provider's primary object
	// where the provider renders one of several (KAITO: InferenceSet);
	// absent for its only or default kind. The status reporter reads the
	// health of that kind.
	AnnotationWorkload = "render.airunway.ai/workload"
	// AnnotationHardwareFit is the memory fit's verdict on the model's
	// pool (fit.Status: fits, tight, short-context, not-checked), and
	// AnnotationHardwareFitReason its one-line account; the status
	// reporter writes them as the HardwareCompatible condition.
	AnnotationHardwareFit       = "render.airunway.ai/hardware-fit"
	AnnotationHardwareFitReason = "render.airunway.ai/hardware-fit-reason"

	// LabelNodePool names, on a Node generated from a capability file
	// (`capabilities nodes`, the cluster twin), the pool it belongs to:
	// the value a model's AnnotationNodePool is checked against.
	LabelNodePool = "render.airunway.ai/node-pool"

	// AnnotationReconcilePause tells an upstream AI Runway controller in the
	// same cluster to leave the ModelDeployment to GitOps.
	AnnotationReconcilePause = "airunway.ai/reconcile-paused"

	// AnnotationDynamoTestBackend with the value MockerBackend asks for
	// Dynamo's test-only mocker, which serves no real model.
	AnnotationDynamoTestBackend = "airunway.ai/dynamo-test-backend"
	MockerBackend               = "mocker"
)

// Annotations of a fleet (docs/plan.md, "A fleet of clusters").
const (
	// AnnotationCluster names the cluster of the fleet a model runs in:
	// `airunway-render plan --fleet --write` records it, a reviewer sees it
	// in the pull request, and a render for another cluster's capability
	// file (`metadata.name`) leaves the model out.
	AnnotationCluster = "airunway.ai/cluster"
	// AnnotationClusterSelector is a v1alpha1 model's cluster selector, in
	// label-selector syntax (`region in (us-east1,us-west1),tier!=spot`),
	// matched against the capability files' `metadata.labels`; v1alpha2
	// has `spec.placement.clusterSelector`.
	AnnotationClusterSelector = "airunway.ai/cluster-selector"
)
