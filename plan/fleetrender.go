package plan

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
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
		clusters = append(clusters, Cluster{Caps: caps, File: file, renderKey: renderKey(n)})
	}
	// One run: the clusters' selection rules spend from one budget.
	files := make([]*capabilities.Resolved, len(clusters))
	for i, c := range clusters {
		files[i] = c.Caps
	}
	capabilities.ShareRuleCost(files...)
	return clusters, append(problems, fleetDeclarations(clusters)...)
}

// renderKey is what of a capability file a render reads, as text: the
// apiVersion and the spec without the pools' prices, which only the plan
// reads. The cluster's name and labels are not in it: a shared render
// names the cluster by a token that each cluster's copy replaces, and the
// labels are matched per model (sharedRender). Two files that differ only
// in layout get different keys, and are rendered apart, as before.
func renderKey(n *yaml.RNode) string {
	field := n.Field("spec")
	if field == nil {
		return ""
	}
	spec := field.Value.Copy()
	pools, err := spec.Pipe(yaml.Lookup("nodePools"))
	if err != nil {
		return ""
	}
	if pools != nil {
		for _, pool := range pools.Content() {
			if pool.Kind == yaml.MappingNode {
				if err := yaml.NewRNode(pool).PipeE(yaml.Clear("pricePerNodeHour")); err != nil {
					return ""
				}
			}
		}
	}
	text, err := spec.String()
	if err != nil {
		return ""
	}
	return n.GetApiVersion() + "\n" + text
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
	r := fleetRenderer{clusters: clusters, o: o, warnings: map[ModelOnCluster]warnings{}, token: newToken()}
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
		w := r.warnings[ModelOnCluster{types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, m.Cluster}]
		if w.caps != nil {
			l = append(l, withCluster(r.own(w.problems, w.caps), m.Cluster)...)
		}
	}
	return f, l, nil
}

type fleetRenderer struct {
	clusters []Cluster
	o        FleetOptions
	// warnings are each model's render problems on each cluster, as
	// rendered: only those of the cluster it is assigned to are shown, so
	// they are made that cluster's (own, withCluster) only then.
	warnings map[ModelOnCluster]warnings
	// token names the cluster in a render that clusters share
	// (sharedRender).
	token string
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
	c.pods, c.Items = readPods(c.Items), nil
	return c
}

// renderOn renders the model, as each cluster deploys it, for each
// cluster where is true; unassigned clears its cluster assignment.
// Clusters whose capability files render alike share one render
// (sharedRender).
func (r *fleetRenderer) renderOn(c *Candidate, m SourceModel, unassigned bool, where func(string) bool) {
	shared, keys := map[string]render.Result{}, map[*yaml.RNode]*nodeKey{}
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
		src := node
		node = node.Copy()
		if unassigned {
			if err := node.PipeE(yaml.ClearAnnotation(hub.AnnotationCluster)); err != nil {
				c.Refused[name] = err.Error()
				continue
			}
		}
		if keys[src] == nil {
			keys[src] = keyOf(node, src == m.Node, m.MD)
		}
		res := r.sharedRender(shared, cl, node, keys[src])
		c.Fits[name] = r.ownFits(res.Fits, cl.Caps)
		if res.Problems.HasErrors() {
			c.Refused[name] = errorMessages(r.own(res.Problems, cl.Caps))
			continue
		}
		if len(res.Items) > 0 {
			c.Items[name] = res.Items
		}
		r.warnings[ModelOnCluster{types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, name}] = warnings{res.Problems, cl.Caps}
	}
}

// sharedRender renders node for cluster cl, or takes the render of a
// cluster before it whose capability file renders alike (renderKey) and
// for which the model's cluster selector matches alike: a fleet of
// clusters that differ in name, labels or prices renders each model once,
// not once per cluster. The shared render names its cluster by the run's
// token, which each cluster's copy of the messages replaces by its own
// name (own; TestSharedRendersAsEachCluster). A model assigned to a cluster is
// rendered apart: its assignment is read by name.
func (r *fleetRenderer) sharedRender(shared map[string]render.Result, cl Cluster, node *yaml.RNode, k *nodeKey) render.Result {
	opts := render.Options{Capabilities: cl.Caps, Warnings: r.o.Warnings, Models: r.o.Models, WeighUnassigned: true}
	if cl.renderKey == "" || k.text == "" {
		return render.Render([]*yaml.RNode{node}, opts)
	}
	matches := "any cluster"
	if k.selector != nil {
		matches = strconv.FormatBool(k.selector.Matches(labels.Set(cl.Caps.Labels)))
	}
	key := cl.renderKey + "\x00" + matches + "\x00" + k.text
	res, done := shared[key]
	if !done {
		caps := *cl.Caps
		caps.Name, caps.Source = r.token, r.token+"-source"
		opts.Capabilities = &caps
		res = render.Render([]*yaml.RNode{node}, opts)
		shared[key] = res
	}
	return res
}

// nodeKey is a model as a shared render tells it from another: its text
// ("" when it may not be shared: it is assigned to a cluster, or does not
// print) and its cluster selector, nil when empty or when the model does
// not decode (its render then fails alike everywhere).
type nodeKey struct {
	text     string
	selector labels.Selector
}

// keyOf: source is the model as written (decoded, md) when node is it;
// an overlay's model is decoded here.
func keyOf(node *yaml.RNode, source bool, md *hub.ModelDeployment) *nodeKey {
	k := &nodeKey{}
	if node.GetAnnotations()[hub.AnnotationCluster] != "" {
		return k
	}
	text, err := node.String()
	if err != nil {
		return k
	}
	k.text = text
	if !source {
		var l diag.List
		if md, l = render.DecodeModel(node); l.HasErrors() {
			return k
		}
	}
	if sel := md.ClusterSelector(); sel != nil && !sel.Empty() {
		k.selector = sel
	}
	return k
}

// warnings are a render's problems, and the cluster it was for.
type warnings struct {
	problems diag.List
	caps     *capabilities.Resolved
}

// own is a render's problems as the cluster's own: a shared render names
// the cluster by the token (sharedRender), each copy by its name. The
// token is random, per run, so a message holds it only where the render
// put the cluster's name; the others are kept as they are.
func (r *fleetRenderer) own(problems diag.List, caps *capabilities.Resolved) diag.List {
	name := r.renamer(caps)
	out := make(diag.List, len(problems))
	for i, p := range problems {
		if strings.Contains(p.Message, r.token) {
			p.Message = name.Replace(p.Message)
		}
		out[i] = p
	}
	return out
}

// ownFits are a render's memory verdicts as the cluster's own (own): the
// same list unless a reason names the cluster.
func (r *fleetRenderer) ownFits(fits []fit.Verdict, caps *capabilities.Resolved) []fit.Verdict {
	if !slices.ContainsFunc(fits, func(v fit.Verdict) bool { return strings.Contains(v.Reason, r.token) }) {
		return fits
	}
	name := r.renamer(caps)
	out := slices.Clone(fits)
	for i := range out {
		out[i].Reason = name.Replace(out[i].Reason)
	}
	return out
}

func (r *fleetRenderer) renamer(caps *capabilities.Resolved) *strings.Replacer {
	return strings.NewReplacer(r.token+"-source", caps.Source, r.token, caps.Name)
}

// newToken is a name no input can hold: it is random, per run.
func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "cluster-" + hex.EncodeToString(b)
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
		p.Cluster = cluster
		out = append(out, p)
	}
	return out
}
