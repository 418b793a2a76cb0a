package diag

import (
	"fmt"
	"slices"
	"strings"
)

// Code names a class of warning, so that a team can silence the ones it
// has decided to live with, or make them fatal in CI. Codes are part of
// the output contract: they never change meaning, and a removed one stays
// accepted (and silent). A struct, not a string: List.Warnf takes one
// first, and a plain string there (a field path) must not compile.
type Code struct{ name string }

// String is the code as users write it.
func (c Code) String() string { return c.name }

// The warning codes. docs/troubleshooting.md lists them, generated from
// Codes.
var (
	IgnoredField        = Code{"ignored-field"}
	DeprecatedField     = Code{"deprecated-field"}
	DefaultCapabilities = Code{"default-capabilities"}
	UnpinnedRelease     = Code{"unpinned-release"}
	FloatingImage       = Code{"floating-image"}
	IdleGPUs            = Code{"idle-gpus"}
	CPUOnGPUPool        = Code{"cpu-on-gpu-pool"}
	UntoleratedTaint    = Code{"untolerated-taint"}
	KAITOInstanceType   = Code{"kaito-instance-type"}
	ScaleToZero         = Code{"scale-to-zero"}
	StickySelection     = Code{"sticky-selection"}
	NotReadyProvider    = Code{"not-ready-provider"}
	TrustRemoteCode     = Code{"trust-remote-code"}
	ReadOnlyCache       = Code{"read-only-cache"}
	ServiceName         = Code{"service-name"}
	GatewayAPIVersion   = Code{"gateway-api-version"}
	NoModels            = Code{"no-models"}
	CapabilitiesInput   = Code{"capabilities-input"}
	ModelCatalogInput   = Code{"model-catalog-input"}
	NoNamespace         = Code{"no-namespace"}
	UnrenderedModels    = Code{"unrendered-models"}
	TightFit            = Code{"tight-fit"}
	UnknownModel        = Code{"unknown-model"}
	UncalibratedFit     = Code{"uncalibrated-fit"}
	KAITONodes          = Code{"kaito-nodes"}
	UncheckedEngineArgs = Code{"unchecked-engine-args"}
	Unassigned          = Code{"unassigned-model"}
	EmptyCluster        = Code{"empty-cluster"}
	GatedModel          = Code{"gated-model"}
	LLMDWithoutGateway  = Code{"llmd-without-gateway"}
	NoModelCache        = Code{"no-model-cache"}
	UnplannedModels     = Code{"unplanned-models"}
)

// FleetSkipped marks the note of a render for one cluster of a fleet that
// says which models it left to other clusters. It is information, not a
// warning (no policy applies to it), but unlike other information it is
// printed on stderr too: a render that quietly leaves models out would
// look like one that lost them.
var FleetSkipped = Code{"fleet-skipped"}

// Codes describes every warning code, in the order docs list them.
var Codes = []struct {
	Code  Code
	About string
}{
	{IgnoredField, "a field the chosen provider or engine has nowhere to put, and drops"},
	{DeprecatedField, "a field that still works but has a replacement (`airunway-render migrate` moves `spec.image`)"},
	{DefaultCapabilities, "the CLI renders without a capability file, for the embedded default cluster"},
	{UnpinnedRelease, "a provider in the capability file without `version`: the newest supported release is assumed"},
	{FloatingImage, "the model server would run a floating default image tag (a nightly build)"},
	{IdleGPUs, "the model's pods leave more than half of the GPUs of the nodes they need idle"},
	{CPUOnGPUPool, "a CPU-only workload lands on a GPU pool because the cluster declares no CPU pool"},
	{UntoleratedTaint, "the operator's pods will not tolerate the chosen pool's taints and may stay Pending"},
	{KAITOInstanceType, "KAITO before 0.8 uses only nodes of one instance type"},
	{ScaleToZero, "replicas: 0 renders a workload that serves nothing"},
	{StickySelection, "a provider or engine chosen by an earlier render is kept, or had to change"},
	{NotReadyProvider, "a provider the capability file marks not ready is rendered because the model names it"},
	{TrustRemoteCode, "the model repository may run its own code in the model server"},
	{ReadOnlyCache, "a read-only model or compilation cache that the engine cannot fill"},
	{ServiceName, "the operator renames the Services it derives from a long model name"},
	{GatewayAPIVersion, "a field the declared Gateway API release does not serve is left out of the HTTPRoute"},
	{NoModels, "no ModelDeployment among the inputs"},
	{CapabilitiesInput, "a ClusterCapabilities among the inputs is ignored, or consumed without local-config"},
	{ModelCatalogInput, "a ModelCatalog among the inputs is consumed without local-config (docs/will-it-run.md)"},
	{NoNamespace, "a ModelDeployment without `metadata.namespace`: its objects land wherever they are applied"},
	{UnrenderedModels, "`build` of a kustomization that declares no airunway-render prints its ModelDeployments unrendered"},
	{TightFit, "vLLM's KV cache holds one sequence of the context by less than the estimate's measured error; (SGLang, TensorRT-LLM) one replica's estimated needs exceed 90% of what its GPUs give, or its KV cache cannot hold one full sequence (docs/will-it-run.md)"},
	{UnknownModel, "the renderer has no facts about the model (or only the size in its id): its memory fit is not checked; give them in a ModelCatalog (docs/will-it-run.md)"},
	{UncalibratedFit, "the engine (SGLang, TensorRT-LLM) has no start-up arithmetic of its own here, or vLLM's engine arguments set what its arithmetic does not follow (--enable-lora, --speculative-config, another --quantization …): a \"fits\" is an estimate (docs/will-it-run.md)"},
	{KAITONodes, "KAITO's node estimator will spread one replica over several nodes of the pool (docs/will-it-run.md#kaito)"},
	{UncheckedEngineArgs, "engine arguments are not checked against the server's options: the image's release is not known (a floating tag, another image) or has no option table"},
	{Unassigned, "a model assigned to no cluster beside models that are: every cluster of the fleet its selector matches renders it (docs/plan.md#a-fleet-of-clusters)"},
	{EmptyCluster, "every model of the input is assigned to other clusters: the capability file's `metadata.name` may be misspelt, or the cluster has no model yet"},
	{GatedModel, "a gated Hugging Face model without a token, whose weights only a model cache volume may already hold (without one, an error)"},
	{LLMDWithoutGateway, "the llmd provider without a gateway renders plain vLLM Deployments: none of llm-d's routing runs"},
	{NoModelCache, "each start of a replica downloads the weights for more than a quarter of an hour, and no model cache volume keeps them"},
	{UnplannedModels, "`plan --fleet`: a cluster's kustomization deploys models the planned paths do not hold, whose GPUs and costs the plan leaves out"},
}

// CodeNames lists the codes' names.
func CodeNames() []string {
	names := make([]string, len(Codes))
	for i, c := range Codes {
		names[i] = c.Code.String()
	}
	return names
}

// Policy says what to do with warnings: drop those of the Ignore codes,
// and make the rest errors when AsErrors is set.
type Policy struct {
	Ignore   []Code
	AsErrors bool
}

// Apply returns the list with the policy applied. A warning made an error
// says so, so that nobody hunts for a rule that was broken.
func (l List) Apply(p Policy) List {
	if len(p.Ignore) == 0 && !p.AsErrors {
		return l
	}
	out := make(List, 0, len(l))
	for _, pr := range l {
		if pr.Severity != Warning {
			out = append(out, pr)
			continue
		}
		if slices.Contains(p.Ignore, pr.Code) {
			continue
		}
		if p.AsErrors {
			pr.Severity = Error
			pr.Message += " (a warning, made an error by warnings-as-errors)"
		}
		out = append(out, pr)
	}
	return out
}

// ParseCodes checks warning codes a user wrote and returns them, or an
// error naming the unknown one and the known codes.
func ParseCodes(names []string) ([]Code, error) {
	var out []Code
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i := slices.Index(CodeNames(), n)
		if i < 0 {
			return nil, fmt.Errorf("%q is not a warning code: must be one of %s", n, quoteAll(CodeNames()))
		}
		out = append(out, Codes[i].Code)
	}
	return out, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
