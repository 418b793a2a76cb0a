package gateway

import (
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// The objects by which the endpoint picker knows a LoRA adapter changed
// with the Inference Extension's releases:
//
//	before v1.0    an InferenceModel per model name (modelName, targetModels)
//	v1.0 to v1.5   an InferenceObjective (a priority) a request selects by
//	               the x-gateway-inference-objective header
//	v1.6 on        none: the picker reads the request's model alone
//
// (GAIE: api/v1alpha2 at v0.5.1, apix/v1alpha2 at v1.0.0–v1.5.0, removed
// by #2973 in v1.6.0.)
const (
	ObjectiveHeader    = "x-gateway-inference-objective"
	AdapterAPIVersion  = PoolGroupV1Alpha2 + "/v1alpha2"
	KindInferenceModel = "InferenceModel"
	KindObjective      = "InferenceObjective"
)

// The releases that changed them.
var (
	objectivesSince     = version.MustParseGeneric("1.0.0")
	objectivesRemovedIn = version.MustParseGeneric("1.6.0")
)

// adapterKindFor is the kind that names each adapter to the picker for the
// declared Inference Extension release; "" when none (no adapters, no
// release declared, or v1.6 and later). newPlan decides it once.
func (pl *plan) adapterKindFor() string {
	if len(pl.md.Spec.Adapters) == 0 || pl.caps.InferenceExtensionVersion == "" {
		return ""
	}
	v, err := hub.ParseRelease(pl.caps.InferenceExtensionVersion)
	if err != nil {
		return "" // refused when the capability file was resolved
	}
	switch {
	case v.LessThan(objectivesSince):
		return KindInferenceModel
	case v.LessThan(objectivesRemovedIn):
		return KindObjective
	}
	return ""
}

// adapterObjectName names an adapter's InferenceModel or InferenceObjective.
func (pl *plan) adapterObjectName(a hub.Adapter) string { return pl.md.Name + "-" + a.Name }

// adapterObjects are one InferenceModel or InferenceObjective per adapter,
// beside the pool they refer to.
func (pl *plan) adapterObjects() []providers.Object {
	kind := pl.adapterKind
	if kind == "" {
		return nil
	}
	poolRef := map[string]any{"group": pl.group, "kind": PoolKind, "name": pl.pool.name}
	var out []providers.Object
	for _, a := range pl.md.Spec.Adapters {
		spec := map[string]any{"poolRef": poolRef}
		if kind == KindInferenceModel {
			spec["modelName"] = a.Name
			spec["targetModels"] = []any{map[string]any{"name": a.Name}}
		}
		out = append(out, providers.Object{
			"apiVersion": AdapterAPIVersion,
			"kind":       kind,
			"metadata":   pl.meta(pl.adapterObjectName(a), pl.pool.namespace, pl.objectLabels()),
			"spec":       spec,
		})
	}
	return out
}
