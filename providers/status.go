package providers

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
)

// Phases a ModelDeployment's status reports, as upstream's enum spells them.
const (
	PhasePending   = "Pending"
	PhaseDeploying = "Deploying"
	PhaseRunning   = "Running"
	PhaseFailed    = "Failed"
)

// Health is what a provider's primary object says about the deployment,
// translated into ModelDeployment terms (upstream-behaviour.md §5).
type Health struct {
	Phase   string
	Message string
	// Replicas and Endpoint are nil when the object does not say.
	Replicas *Replicas
	Endpoint *Endpoint
}

// Replicas of the model server.
type Replicas struct {
	Desired, Ready, Available int32
}

// Endpoint is the in-cluster Service of the model server.
type Endpoint struct {
	Service string
	Port    int32
}

// Primary names the object whose status stands for a ModelDeployment.
type Primary struct {
	GVK  schema.GroupVersionKind
	Name string
	// Kind as upstream names it in messages ("Workspace", "Deployments").
	Noun string
}

// Reporter is implemented by providers whose health the status reporter
// reads back from the cluster.
type Reporter interface {
	// Primary names the primary object of a rendered ModelDeployment.
	Primary(md *v1.ModelDeployment) Primary
	// Health translates the primary object's status.
	Health(obj *unstructured.Unstructured) Health
}

// Condition is a status condition as the providers' CRDs write it.
type Condition struct {
	Type, Status, Reason, Message string
}

// Conditions reads `status.conditions` of an object (any shape errors are
// read as "no conditions": a half-written status is not a failure).
func Conditions(obj *unstructured.Unstructured) map[string]Condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := map[string]Condition{}
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := Condition{Type: str(m["type"]), Status: str(m["status"]), Reason: str(m["reason"]), Message: str(m["message"])}
		if c.Type != "" {
			out[c.Type] = c
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Int32 reads an integer field; absent or mistyped reads as (0, false).
func Int32(obj map[string]any, path ...string) (int32, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if !found || err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return int32(n), true
	case int32:
		return n, true
	case int:
		return int32(n), true
	case float64:
		return int32(n), true
	}
	return 0, false
}
