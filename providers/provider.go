package providers

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
)

// Object is one rendered Kubernetes object.
type Object = map[string]any

// Request is everything a provider may read.
type Request struct {
	// MD is defaulted and validated; providers must not modify it.
	MD *hub.ModelDeployment
	// Engine is the resolved engine type.
	Engine string
	// Provider is the capability file's entry for this provider, never nil.
	Provider *hub.ResolvedProvider
	// Caps is the whole resolved capability file, never nil.
	Caps *hub.ResolvedCapabilities
	// GatewayEnabled is the engine's gateway decision for this model
	// (hub.ModelDeployment.GatewayEnabled): it is served through the
	// cluster's Gateway API Inference Extension. The gateway objects and
	// a provider's own topology (Dynamo's Epp) both follow it.
	GatewayEnabled bool
	// Placement says which node pool each component runs on; use
	// Placement.For(component) for a pod's nodeSelector and tolerations.
	Placement *Placement
	// StartupSeconds is how long a model server may take to start: the
	// weights' download at the cluster's rate, their load and the
	// engine's start-up (the engine's decision, render/startup.go); 0 when
	// the model's size is not known. Providers that write the startup
	// probe give it at least this long.
	StartupSeconds int32
}

// NodeSpanner is implemented by providers whose replicas can span several
// nodes (Dynamo's multinode workers): each replica is then that many pods,
// one per node, each with the component's GPUs.
type NodeSpanner interface {
	NodesPerPod(md *hub.ModelDeployment, component string) int32
}

// ServerImager is implemented by providers whose model server is the
// engine image's own entrypoint, fed `spec.engine.args` and
// `spec.engine.extraArgs` as its command line (vLLM's OpenAI server). The
// engine checks those arguments against the options of the release the
// image runs, and sizes the memory by that release's rules, so it must
// know the image that runs when neither the model nor the capability
// file names one.
type ServerImager interface {
	ServerImage() ServerImage
}

// ServerImage is the model server image a provider runs by default.
type ServerImage struct {
	// Default runs when neither `spec.engine.image` nor the capability
	// file's `images.vllm` is set.
	Default string
	// DefaultWarned: the provider warns itself (floating-image) when
	// Default runs, so the engine does not say again that its release
	// cannot be known.
	DefaultWarned bool
}

// MemoryFitter is implemented by providers whose operator sizes a model's
// nodes itself and ignores the GPUs the ModelDeployment asks for (KAITO's
// node estimator for its presets): the engine then holds the model to the
// provider's sizing instead of its own GPU-memory arithmetic.
type MemoryFitter interface {
	// CheckFit returns the verdict of each GPU component and the problems
	// that sizing finds, as the operator would report them. facts is the
	// engine's lookup of a model's facts (ModelCatalogs, --model-dir, the
	// built-in catalog, the size in the id).
	CheckFit(req *Request, facts ModelFacts) ([]fit.Verdict, diag.List)
}

// ModelFacts looks up what the renderer knows of a model by its id:
// the facts, where they come from ("model-catalog", "model-dir",
// "catalog", "id") and whether any are known.
type ModelFacts func(id string) (m fit.Model, origin string, known bool)

// Detector is implemented by providers that `capabilities discover` and
// the reporter's drift find in a cluster by what is installed: the CRD of
// the kind they render, else a Deployment of theirs. A provider without it
// renders plain Kubernetes workloads, needs nothing installed, and is
// listed in every discovered capability file.
type Detector interface {
	Detection() Detection
}

// Detection is how a provider shows in a cluster.
type Detection struct {
	// CRD is the CustomResourceDefinition of the kind the provider
	// renders, whose presence says the provider is installed; empty for a
	// provider without one, which is found by its Deployment alone.
	CRD string
	// Images are repository suffixes of its Deployment's image, whose tag
	// is the release (with or without a leading v).
	Images []string
	// Names are `app.kubernetes.io/name` values of its Deployment.
	Names []string
	// Chart is the Helm chart name; its `helm.sh/chart` label ends in the
	// chart version, which is the release.
	Chart string
	// VersionArg is an argument prefix of the Deployment's containers
	// whose value is the release ("--operator-version=").
	VersionArg string
	// Runs and NoRelease word the note on a provider without a CRD, found
	// by its Deployment, whose release does not show: "<Runs> runs
	// (Deployment ns/name); <NoRelease>: set `version`".
	Runs, NoRelease string
}

// UpgradeNoter is implemented by providers whose operator, when upgraded,
// changes what already runs beyond what the rendered objects show (KAITO
// 0.8 moves every Workspace to a StatefulSet). `airunway-render preview`
// lists the notes next to the object differences.
type UpgradeNoter interface {
	// UpgradeNotes says what moving the operator from one release to
	// another does to the workloads it runs.
	UpgradeNotes(from, to *version.Version) []UpgradeNote
}

// UpgradeNote is one fact of an operator upgrade a reviewer must know.
type UpgradeNote struct {
	// Breaking: the workloads are recreated or restarted whatever the
	// rendered objects show.
	Breaking bool
	Message  string
}

// ChangeRules is implemented by providers whose own kinds have fields an
// update cannot change, or whose change replaces the model servers' pods:
// `airunway-render preview` flags such changes between two renders. The
// rules of Kubernetes' own kinds (Deployment, StatefulSet, ...) are the
// cli's; a provider states those of the kinds it renders.
type ChangeRules interface {
	// ChangeRules returns the rules keyed by kind.
	ChangeRules() map[string]KindChangeRules
}

// KindChangeRules is what an update of one kind's objects cannot do, and
// what it restarts.
type KindChangeRules struct {
	// Immutable lists the fields the API server or the operator's
	// admission webhook refuses to change: such a change fails to apply
	// until the object is deleted and created again.
	Immutable []ImmutableField
	// Exclusive names two fields of which an object has one for good:
	// switching from one to the other is refused. Empty when none.
	Exclusive [2]string
	// Restarts lists the fields whose change replaces the model server's
	// pods (not breaking, but GPUs reload weights and, during a rolling
	// update, need room for the new pods).
	Restarts []string
	// NotRolledOut lists the fields whose change the operator accepts but
	// applies only to what it creates afterwards: the running pods keep
	// the old value (a change that looks applied and is not).
	NotRolledOut []NotRolledOut
}

// NotRolledOut is one field whose change reaches new replicas only.
type NotRolledOut struct {
	Path string
	// Why completes "`Path` changes, but ...": who keeps the old value,
	// and how to roll it out.
	Why string
}

// ImmutableField is one field an update cannot change.
type ImmutableField struct {
	// Path is the field's dotted path in the object.
	Path string
	// Why completes "`Path` changes, and ...": who refuses the change.
	Why string
	// OnlyWhenSet: adding the field to an object that lacked it is allowed.
	OnlyWhenSet bool
}

// Provider renders one kind of inference deployment.
type Provider interface {
	// Name is the provider name used in `spec.provider.name`.
	Name() string
	// Check reports what this provider cannot serve, as upstream's provider
	// controllers do before rendering, beyond the engines, serving modes
	// and GPUs of its capability catalogue entry, which the render engine
	// checks for every provider.
	Check(req *Request) diag.List
	// Render returns the provider objects for the ModelDeployment.
	Render(req *Request) ([]Object, diag.List)
}

// FromTyped converts a typed Kubernetes object into an Object, dropping
// what a typed Go struct always serialises but a reviewer must not see:
// null values, `creationTimestamp: null`, empty `status`, `strategy` and
// `resources` objects.
func FromTyped(v any) (Object, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj Object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	prune(obj)
	// Rendered objects state intent only; status belongs to the cluster.
	delete(obj, "status")
	return obj, nil
}

var emptyNoise = map[string]bool{"status": true, "strategy": true, "resources": true, "metadata": true}

func prune(m map[string]any) {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(t)
			if len(t) == 0 && emptyNoise[k] {
				delete(m, k)
			}
		case []any:
			for _, e := range t {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}
