package render

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/nearest"
)

// A fleet is one model directory and a capability file per cluster
// (docs/plan.md, "A fleet of clusters"). Each cluster's render takes only
// its own models: those `airunway-render plan --fleet --write` assigned to
// it (annotation airunway.ai/cluster = the capability file's
// `metadata.name`), and those assigned nowhere whose cluster selector
// matches its labels. The rest are left out, so that one directory serves
// every cluster and an Argo CD ApplicationSet or one Flux Kustomization
// per cluster delivers each its share. The embedded default capability
// file names no cluster: with it every model renders, as before fleets.

// fleetSkip is why a model is not rendered for this cluster, "" when it
// is. Only the annotation is read: a model assigned elsewhere is neither
// decoded nor checked here, the other cluster's render does that.
func fleetSkip(node *yaml.RNode, caps *capabilities.Resolved) string {
	if caps.Embedded() {
		return ""
	}
	if c := node.GetAnnotations()[hub.AnnotationCluster]; c != "" && c != caps.Name {
		return "assigned to cluster " + c
	}
	return ""
}

// fleetAssignment checks a model's assignment against the fleet the
// capability file declares (`spec.fleet`): a cluster the fleet does not
// have is an error, as a model assigned to it would run nowhere, and so
// is no cluster at all unless the fleet renders unassigned models (or the
// caller weighs the model for an assignment, weigh). Nothing is checked
// for a capability file that declares no fleet.
func fleetAssignment(node *yaml.RNode, caps *capabilities.Resolved, weigh bool) diag.List {
	var l diag.List
	f := caps.Fleet
	if caps.Embedded() || f == nil {
		return l
	}
	field := "metadata.annotations." + hub.AnnotationCluster
	c, assigned := node.GetAnnotations()[hub.AnnotationCluster]
	switch {
	case assigned && c != "" && !slices.Contains(f.Clusters, c):
		l.Errorf(field, "assigns the model to cluster %q, which the fleet does not have, so no cluster would run it: `spec.fleet.clusters` of %s lists %s%s", c, caps.Source, strings.Join(f.Clusters, ", "), nearest.Suggestion(c, f.Clusters))
	case !assigned && !weigh && f.UnassignedModels != hub.UnassignedRender:
		l.Errorf(field, "is not set: the model is assigned to no cluster of the fleet (%s); record its cluster with `airunway-render plan --fleet DIR --write`, or set `spec.fleet.unassignedModels: Render` in the capability files to render it on every cluster its selector matches", strings.Join(f.Clusters, ", "))
	}
	return l
}

// selectorSkip checks a decoded model's cluster selector against the
// cluster's labels: a model assigned to no cluster that the selector
// keeps out is skipped (the reason is returned); one assigned to this
// cluster that its own selector keeps out is an error, since the
// assignment and the selector cannot both be meant.
func selectorSkip(md *hub.ModelDeployment, caps *capabilities.Resolved, l *diag.List) string {
	if caps.Embedded() {
		return ""
	}
	sel := md.ClusterSelector()
	if sel.Empty() || sel.Matches(labels.Set(caps.Labels)) {
		return ""
	}
	if md.AssignedCluster() == caps.Name {
		l.Errorf("metadata.annotations."+hub.AnnotationCluster, "assigns the model to cluster %q, whose labels (%s) its cluster selector %q does not match: assign it to a cluster the selector matches (`airunway-render plan --fleet DIR --write`), or change the selector",
			caps.Name, clusterLabels(caps.Labels), sel.String())
		return ""
	}
	return fmt.Sprintf("cluster selector %q does not match", sel.String())
}

func clusterLabels(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	return labels.Set(m).String()
}

// fleetReport is what a render for one cluster of a fleet says about the
// models it left out and those assigned to no cluster.
type fleetReport struct {
	skipped    []string // "namespace/name (why)"
	rendered   int
	unassigned []diag.Resource
	assigned   int
}

// maxListed models are named in the summary; the rest are counted.
const maxListed = 5

func (f *fleetReport) problems(caps *capabilities.Resolved) diag.List {
	var l diag.List
	if len(f.skipped) > 0 {
		names := f.skipped[:min(len(f.skipped), maxListed)]
		more := ""
		if n := len(f.skipped) - len(names); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		l = append(l, diag.Problem{Severity: diag.Info, Code: diag.FleetSkipped,
			Message: fmt.Sprintf("rendered %d model(s) for cluster %q and skipped %d not assigned to it: %s%s", f.rendered, caps.Name, len(f.skipped), strings.Join(names, ", "), more)})
	}
	// A render that takes none of the models: a capability file whose
	// name is misspelt looks just like this, and would deliver nothing.
	if f.rendered == 0 && len(f.skipped) > 0 {
		l = append(l, diag.Problem{Severity: diag.Warning, Code: diag.EmptyCluster, Field: "metadata.name", Resource: diag.Resource{Kind: hub.KindClusterCapabilities, Name: caps.Name},
			Message: fmt.Sprintf("no model of the input is for cluster %q (the capability file's `metadata.name`): all %d are assigned to other clusters or kept out by their selectors, so nothing is rendered; check the name, or ignore this warning for a cluster that has no model yet", caps.Name, len(f.skipped))})
	}
	// Models assigned to no cluster beside models that are: in a fleet,
	// each of them is rendered for every cluster its selector matches,
	// which is seldom meant for GPUs.
	if f.assigned > 0 && caps.Fleet == nil {
		for _, r := range f.unassigned {
			l = append(l, diag.Problem{Severity: diag.Warning, Code: diag.Unassigned, Resource: r, Field: "metadata.annotations." + hub.AnnotationCluster,
				Message: "is assigned to no cluster while other models of the input are: it is rendered for every cluster of the fleet its selector matches; record its cluster with `airunway-render plan --fleet DIR --write`"})
		}
	}
	return l
}

// count records one model of the run: skipped for why, or rendered.
func (f *fleetReport) count(node *yaml.RNode, id diag.Resource, why string, caps *capabilities.Resolved) {
	if caps.Embedded() {
		return
	}
	assigned := node.GetAnnotations()[hub.AnnotationCluster] != ""
	if assigned {
		f.assigned++
	}
	switch {
	case why != "":
		f.skipped = append(f.skipped, fmt.Sprintf("%s/%s (%s)", id.Namespace, id.Name, why))
	case !assigned:
		f.rendered++
		f.unassigned = append(f.unassigned, id)
	default:
		f.rendered++
	}
}
