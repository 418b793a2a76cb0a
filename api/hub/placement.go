package hub

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/airunway-render/airunway-render/diag"
)

// PlacementSpec says where in a fleet of clusters a model may run. A
// fleet's clusters are described by capability files, whose
// `metadata.labels` (region, tier, compliance, …) the selector is matched
// against, so a model states what it needs of a cluster rather than
// naming one: a planner picks the cluster (AnnotationCluster) among those
// that match, and a new cluster with the right labels is eligible without
// editing any model.
type PlacementSpec struct {
	// ClusterSelector selects the clusters of the fleet, by the labels of
	// their capability files, that may run the model; unset or empty,
	// every cluster may.
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
}

// ClusterSelector returns the model's cluster selector:
// `spec.placement.clusterSelector`, else the AnnotationClusterSelector
// annotation (label-selector syntax), else labels.Everything(). It assumes
// ValidateModelDeployment passed (a selector that does not parse, which
// validation refuses, selects nothing).
func (md *ModelDeployment) ClusterSelector() labels.Selector {
	if p := md.Spec.Placement; p != nil && p.ClusterSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.ClusterSelector)
		if err != nil {
			return labels.Nothing()
		}
		return sel
	}
	if raw, ok := md.Annotations[AnnotationClusterSelector]; ok {
		sel, err := labels.Parse(raw)
		if err != nil {
			return labels.Nothing()
		}
		return sel
	}
	return labels.Everything()
}

// AssignedCluster returns the cluster of the fleet a planner assigned the
// model to (AnnotationCluster, a capability file's `metadata.name`), ""
// when none is.
func (md *ModelDeployment) AssignedCluster() string {
	return md.Annotations[AnnotationCluster]
}

// clusterSelectorOperators are the operators of a LabelSelector's
// matchExpressions.
var clusterSelectorOperators = []string{
	string(metav1.LabelSelectorOpIn), string(metav1.LabelSelectorOpNotIn),
	string(metav1.LabelSelectorOpExists), string(metav1.LabelSelectorOpDoesNotExist),
}

// validatePlacement checks the model's cluster selector, written either
// as `spec.placement.clusterSelector` (checked as the API server checks a
// LabelSelector) or as the AnnotationClusterSelector annotation (parsed as
// `kubectl get -l` parses one), never both, and the cluster a planner
// assigned it to (AnnotationCluster), which names a capability file. An
// empty `placement` or `clusterSelector` is valid and selects every
// cluster, as an empty LabelSelector does in Kubernetes.
func validatePlacement(md *ModelDeployment, l *diag.List) {
	const (
		atSelector   = "spec.placement.clusterSelector"
		atAnnotation = "metadata.annotations." + AnnotationClusterSelector
		atCluster    = "metadata.annotations." + AnnotationCluster
	)
	raw, annotated := md.Annotations[AnnotationClusterSelector]
	if annotated {
		if _, err := labels.Parse(raw); err != nil {
			l.Errorf(atAnnotation, "%q is not a label selector: %s; write it as `kubectl get -l` takes one, for example %q", raw, err, "region in (us-east1,us-west1),tier!=spot")
		}
	}
	if p := md.Spec.Placement; p != nil && p.ClusterSelector != nil {
		if annotated {
			l.Errorf(atSelector, "must not be set with annotation %s %q: a model has one cluster selector; keep `spec.placement.clusterSelector` and remove the annotation, which is for v1alpha1 models", AnnotationClusterSelector, raw)
		}
		errs := metav1validation.ValidateLabelSelector(p.ClusterSelector, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("spec", "placement", "clusterSelector"))
		for _, e := range errs {
			msg := e.ErrorBody()
			if strings.HasSuffix(e.Field, ".operator") {
				msg += ": use " + QuoteList(clusterSelectorOperators)
			}
			l.Errorf(e.Field, "%s", msg)
		}
		if len(errs) == 0 {
			if _, err := metav1.LabelSelectorAsSelector(p.ClusterSelector); err != nil {
				l.Errorf(atSelector, "is not a valid label selector: %s", err)
			}
		}
	}
	name, ok := md.Annotations[AnnotationCluster]
	switch {
	case !ok:
	case name == "":
		l.Errorf(atCluster, "must not be empty: it names the capability file (`metadata.name`) of the cluster the model runs in; remove the annotation to leave the model unassigned")
	default:
		for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
			l.Errorf(atCluster, "%q is not a valid cluster name: it must be a capability file's `metadata.name`, a DNS subdomain (lowercase letters, digits, '-' and '.'): %s", name, msg)
		}
	}
}
