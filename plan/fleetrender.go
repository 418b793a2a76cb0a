package plan

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
	"github.com/airunway-render/airunway-render/render"
)

// Rendering a fleet: each model is rendered for each cluster on its own,
// so that a model that cannot run on one cluster (no provider, no pool, no
// memory fit) only rules that cluster out; Assign then decides. The
// command line (`plan --fleet`, `diff --fleet`) reads the files and each
// cluster's overlay, and hands them here.

// ModelOnCluster names one model's render for one cluster of a fleet.
type ModelOnCluster struct {
	types.NamespacedName
	Cluster string
}

// SourceModel is one ModelDeployment of a fleet's input, decoded and
// validated.
type SourceModel struct {
	Node *yaml.RNode
	MD   *hub.ModelDeployment
	// File is where it was read.
	File string
}

// FleetOptions are what a fleet's renders share.
type FleetOptions struct {
	Warnings diag.Policy
	// Models are the model facts every render reads (the ModelCatalogs
	// among the inputs over --model-dir's).
	Models map[string]fit.Model
	// Deployed is the model as a cluster deploys it (that cluster's
	// overlay), or why the cluster never deploys it; nil: as written.
	Deployed func(cluster string, m SourceModel) (node *yaml.RNode, refused string)
}

// FleetClusters reads the ClusterCapabilities among items (other objects
// are left alone): one per cluster, by name, whose selection rules spend
// from one run's budget, each `spec.fleet.clusters` held to the clusters
// found.
func FleetClusters(items []*yaml.RNode, source func(*yaml.RNode) string) ([]Cluster, diag.List) {
	var clusters []Cluster
	var problems diag.List
	seen := map[string]string{}
	for _, n := range items {
		if n.GetKind() != hub.KindClusterCapabilities || !strings.HasPrefix(n.GetApiVersion(), hub.Group+"/") {
			continue
		}
		file := source(n)
		caps, l := capabilities.ResolveNode(n)
		ref := diag.Resource{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Name: n.GetName()}
		problems = append(problems, yamlerr.AddLines(l.Attach(ref, file), n.YNode())...)
		if caps == nil {
			continue
		}
		if prev, dup := seen[caps.Name]; dup {
			problems = append(problems, diag.Problem{Severity: diag.Error, Resource: ref, File: file,
				Message: fmt.Sprintf("names cluster %q, as %s does: each cluster of a fleet must have one capability file, and `metadata.name` is the cluster's name", caps.Name, prev)})
			continue
		}
		seen[caps.Name] = file
		clusters = append(clusters, Cluster{Caps: caps, File: file})
	}
	// One run: the clusters' selection rules spend from one budget.
	files := make([]*capabilities.Resolved, len(clusters))
	for i, c := range clusters {
		files[i] = c.Caps
	}
	capabilities.ShareRuleCost(files...)
	return clusters, append(problems, fleetDeclarations(clusters)...)
}

// fleetDeclarations holds each capability file's `spec.fleet.clusters`,
// where it declares one, to the clusters of the directory: a build of
// that cluster refuses assignments to clusters it does not list, so a
// list that disagrees with the plan would fail builds the plan calls fine.
func fleetDeclarations(clusters []Cluster) diag.List {
	var names []string
	for _, c := range clusters {
		names = append(names, c.Caps.Name)
	}
	slices.Sort(names)
	var l diag.List
	for _, c := range clusters {
		if c.Caps.Fleet == nil {
			continue
		}
		declared := slices.Sorted(slices.Values(c.Caps.Fleet.Clusters))
		if !slices.Equal(declared, names) {
			l = append(l, diag.Problem{Severity: diag.Error, File: c.File, Field: "spec.fleet.clusters",
				Resource: diag.Resource{Kind: hub.KindClusterCapabilities, Name: c.Caps.Name},
				Message:  fmt.Sprintf("lists %s, but the fleet's directory holds the capability files of %s: list exactly the fleet's clusters", strings.Join(declared, ", "), strings.Join(names, ", "))})
		}
	}
	return l
}

// IsSourceModel: n is a ModelDeployment someone wrote, not one the
// renderer passed through with its output (generated-from).
func IsSourceModel(n *yaml.RNode) bool {
	return n.GetKind() == hub.KindModelDeployment && strings.HasPrefix(n.GetApiVersion(), hub.Group+"/") && n.GetAnnotations()[hub.AnnotationGeneratedFrom] == ""
}

// SourceModels are the ModelDeployments among items, each once, decoded
// and validated as render does before it reads a capability file
// (render.DecodeModel): a model that is invalid is an error of the input,
// not a cluster it does not fit.
func SourceModels(items []*yaml.RNode, source func(*yaml.RNode) string) ([]SourceModel, diag.List) {
	var models []SourceModel
	var l diag.List
	seen := map[types.NamespacedName]string{}
	for _, n := range items {
		if !IsSourceModel(n) {
			continue
		}
		ref := diag.Resource{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
		key := types.NamespacedName{Namespace: n.GetNamespace(), Name: n.GetName()}
		if prev, dup := seen[key]; dup {
			l = append(l, diag.Problem{Severity: diag.Error, Resource: ref, File: source(n), Message: "is defined twice (also in " + prev + "); each ModelDeployment must appear once"})
			continue
		}
		seen[key] = source(n)
		md, dl := render.DecodeModel(n)
		if dl.HasErrors() {
			l = append(l, dl.Attach(ref, source(n))...)
			continue
		}
		models = append(models, SourceModel{Node: n, MD: md, File: source(n)})
	}
	return models, l
}

// RenderFleet renders every model for the clusters it may run on and
// assigns them (Assign); the problems are the warnings of each model's
// render on the cluster it is assigned to, each saying which cluster.
func RenderFleet(clusters []Cluster, models []SourceModel, o FleetOptions) (*Fleet, diag.List, error) {
	r := fleetRenderer{clusters: clusters, o: o, warnings: map[ModelOnCluster]diag.List{}}
	candidates := make([]Candidate, len(models))
	for i, m := range models {
		candidates[i] = r.candidate(m)
	}
	f, err := Assign(candidates, clusters)
	if err != nil {
		return nil, nil, err
	}
	var l diag.List
	for _, m := range f.Models {
		l = append(l, r.warnings[ModelOnCluster{types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, m.Cluster}]...)
	}
	return f, l, nil
}

type fleetRenderer struct {
	clusters []Cluster
	o        FleetOptions
	// warnings are each model's render warnings on each cluster.
	warnings map[ModelOnCluster]diag.List
}

// candidate renders one model for each cluster it may run on: all of
// them, or only its own when Git assigns it one (it is never moved). A
// model whose render fails on its own cluster is rendered on the others
// too, so that the plan can name where it would run.
func (r *fleetRenderer) candidate(m SourceModel) Candidate {
	c := Candidate{Namespace: m.Node.GetNamespace(), Name: m.Node.GetName(), Assigned: m.MD.AssignedCluster(), Selector: m.MD.ClusterSelector(),
		Items: map[string][]*yaml.RNode{}, Refused: map[string]string{}, Fits: map[string][]fit.Verdict{}}
	r.renderOn(&c, m, false, func(name string) bool { return c.Assigned == "" || c.Assigned == name })
	if _, refused := c.Refused[c.Assigned]; refused {
		// Weighed elsewhere as if unassigned: the other clusters' renders
		// would skip it, being assigned.
		r.renderOn(&c, m, true, func(name string) bool { return name != c.Assigned })
	}
	return c
}

// renderOn renders the model, as each cluster deploys it, for each
// cluster where is true; unassigned clears its cluster assignment.
func (r *fleetRenderer) renderOn(c *Candidate, m SourceModel, unassigned bool, where func(string) bool) {
	for _, cl := range r.clusters {
		name := cl.Caps.Name
		if !where(name) {
			continue
		}
		node, refused := m.Node, ""
		if r.o.Deployed != nil {
			node, refused = r.o.Deployed(name, m)
		}
		if refused != "" {
			c.Refused[name] = refused
			continue
		}
		node = node.Copy()
		if unassigned {
			if err := node.PipeE(yaml.ClearAnnotation(hub.AnnotationCluster)); err != nil {
				c.Refused[name] = err.Error()
				continue
			}
		}
		res := render.Render([]*yaml.RNode{node}, render.Options{Capabilities: cl.Caps, Warnings: r.o.Warnings, Models: r.o.Models, WeighUnassigned: true})
		c.Fits[name] = res.Fits
		if res.Problems.HasErrors() {
			c.Refused[name] = errorMessages(res.Problems)
			continue
		}
		if len(res.Items) > 0 {
			c.Items[name] = res.Items
		}
		r.warnings[ModelOnCluster{types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, name}] = withCluster(res.Problems, name)
	}
}

// errorMessages joins the errors of a render, each with its field.
func errorMessages(l diag.List) string {
	var out []string
	for _, p := range l {
		if p.Severity != diag.Error {
			continue
		}
		msg := p.Message
		if p.Field != "" {
			msg = "`" + p.Field + "` " + msg
		}
		out = append(out, msg)
	}
	return strings.Join(out, "; ")
}

// withCluster keeps a render's warnings, each saying which cluster's
// render gave it.
func withCluster(l diag.List, cluster string) diag.List {
	var out diag.List
	for _, p := range l {
		if p.Severity != diag.Warning {
			continue
		}
		p.Message = fmt.Sprintf("(cluster %q) %s", cluster, p.Message)
		out = append(out, p)
	}
	return out
}
