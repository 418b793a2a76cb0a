package plan

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/fit"
)

// A fleet is several clusters, each described by its capability file:
// `metadata.name` is the cluster, `metadata.labels` its region, tier,
// compliance… Assign gives each model one cluster, the way a pull request
// can review it: a pure function of the files, computed again on every
// change, with the assignments already in Git as inputs that are never
// moved to improve the picture (a model moves only when someone edits its
// annotation). What the clusters' operators and schedulers then do is the
// existing single-cluster path: each cluster's render keeps its own
// models (render/cluster.go), and Argo CD or Flux deliver them.
//
// Each new model is put where all of its pods fit beside the models
// already there (the single-cluster plan: packing, rollouts aside, memory
// fit by the render), among the clusters its selector matches; of those,
// the one where it adds the least to the hourly cost of the nodes in use,
// then the one with the most GPUs left free, then by name. New models are
// placed most constrained first (fewest clusters they could run on, were
// the clusters empty), then largest (most GPUs), then by namespace and
// name: a model with one possible cluster is not crowded out of it by one
// that could go anywhere, big models find room before small ones fill the
// gaps, and the order of the files does not matter.

// Cluster is one cluster of the fleet.
type Cluster struct {
	// Caps is the cluster's resolved capability file: its Name and Labels
	// are the cluster's.
	Caps *capabilities.Resolved
	// File is where the capability file was read, for messages.
	File string
	// renderKey is the capability file as far as rendering reads it: its
	// apiVersion and spec without prices. Clusters with the same key
	// render a model alike (RenderFleet renders it once for them); ""
	// shares with none.
	renderKey string
}

// Candidate is one model of the fleet, rendered for every cluster.
type Candidate struct {
	Namespace, Name string
	// Assigned is the cluster Git records for it (annotation
	// airunway.ai/cluster), "" when none.
	Assigned string
	// Selector is its cluster selector; nil or empty matches every
	// cluster.
	Selector labels.Selector
	// Items are, per cluster name, what its render for that cluster gave:
	// the model and its generated objects.
	Items map[string][]*yaml.RNode
	// Refused are, per cluster name, why the render for that cluster
	// failed (no provider, no pool fits, its memory does not fit…).
	Refused map[string]string
	// Fits are, per cluster name, the render's memory verdicts.
	Fits map[string][]fit.Verdict

	// pods are Items read (readPods), when RenderFleet read them as it
	// rendered and let the objects go: a fleet's renders are the most of
	// its memory, and the plan reads only their pods.
	pods map[string]podsRead
}

// Fleet is the assignment of every model, and each cluster's plan with
// the models assigned to it.
type Fleet struct {
	// Fits: every model has a cluster where all its pods fit.
	Fits     bool           `json:"fits"`
	Models   []FleetModel   `json:"models"`
	Clusters []FleetCluster `json:"clusters"`
	Notes    []string       `json:"notes,omitempty"`
}

// FleetModel is one model's assignment.
type FleetModel struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Cluster the model runs in; "" when it fits in none.
	Cluster string `json:"cluster"`
	// Kept: Git already assigned it there (never moved); otherwise the
	// plan chose it now, and --write records it.
	Kept bool `json:"kept"`
	// Fits: all of its pods fit in Cluster.
	Fits bool `json:"fits"`
	// GPUs is what its pods request on Cluster; for a model that fits
	// nowhere, the most of any cluster it renders for (the order new
	// models are placed in). A KAITO preset's pods take whole nodes, so
	// its GPUs differ from cluster to cluster.
	GPUs int64 `json:"gpus"`
	// Reason: why a kept model does not fit its cluster, or why a new
	// one fits none (each cluster's reason is in Verdicts).
	Reason string `json:"reason,omitempty"`
	// Alternatives: for a kept model that does not render on its
	// cluster, the other clusters where it renders and fits beside their
	// models.
	Alternatives []string `json:"alternatives,omitempty"`
	// Verdicts: for a model the plan placed, each cluster it was weighed
	// against; for a kept one, its own cluster.
	Verdicts []ClusterVerdict `json:"verdicts"`
}

// ClusterVerdict is whether a model fits one cluster, and at what cost.
type ClusterVerdict struct {
	Cluster string `json:"cluster"`
	Fits    bool   `json:"fits"`
	// Reason it does not fit.
	Reason string `json:"reason,omitempty"`
	// CostPerHour is what the nodes the model adds to those in use cost
	// an hour (0 when it fills GPUs of nodes already in use); nil when a
	// pool it lands on has no price, and for a kept model.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
	Currency    string   `json:"currency,omitempty"`
	// FreeGPUs: the cluster's GPUs left free after it (declared nodes ×
	// GPUs per node − GPUs requested, over the pools whose size is
	// known).
	FreeGPUs int64 `json:"freeGPUs"`

	costCents int64 // a month of the added nodes, in cents
	priced    bool
}

// FleetCluster is one cluster with the models assigned to it.
type FleetCluster struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	File   string            `json:"file,omitempty"`
	// Fits: its plan holds its pods, and every model assigned to it
	// renders there.
	Fits bool `json:"fits"`
	// RenderFails are the models assigned to it whose render fails there
	// ("namespace/name: why"): the cluster's build, the Argo CD plugin
	// and the KRM function fail with it, and nothing is delivered.
	RenderFails []string `json:"renderFails,omitempty"`
	// Models assigned to it, "namespace/name", sorted.
	Models []string `json:"models"`
	Plan   *Plan    `json:"plan"`
}

// UnknownClusterError: a model is assigned to a cluster the fleet does
// not have. An error in the inputs, not a shortage.
type UnknownClusterError struct {
	Namespace, Name, Cluster string
	Clusters                 []string
}

func (e *UnknownClusterError) Error() string {
	return fmt.Sprintf("ModelDeployment %s/%s is assigned to cluster %q (annotation airunway.ai/cluster), which the fleet does not have: must be one of %s; remove the annotation to let the plan choose, or add the cluster's capability file",
		e.Namespace, e.Name, e.Cluster, quoteAll(e.Clusters))
}

// fleetState is the running ledger: each cluster's pod groups so far.
type fleetState struct {
	clusters []Cluster
	load     map[string][]Group
	// ledgers are each cluster's load, sorted (ledger): a model is
	// weighed against a copy with its entries added. empty: a cluster's
	// ledger with nothing.
	ledgers, empty map[string]*ledger
	groups         map[ModelOnCluster][]Group // model and cluster → its pod groups
	entries        map[ModelOnCluster][]entry // and as the cluster's ledger sorts them
	gpusOn         map[ModelOnCluster]int64   // model and cluster → the GPUs it requests there
	notes          map[ModelOnCluster][]string
	planned        map[string][]string // cluster → the notes of its models
	// plans: each cluster's plan of its ledger, until the ledger changes.
	plans map[string]*Plan
	// over: per cluster, the pods of kept models that do not fit there,
	// which the cluster's final plan shows short.
	over map[string][]Group
	// fails: per cluster, its kept models whose render fails there.
	fails    map[string][]string
	models   map[string][]string
	verdicts map[string][]fit.Verdict
	compare  bool // costs are comparable (one currency)
}

// Assign gives each model a cluster (see the comment at the top).
func Assign(models []Candidate, clusters []Cluster) (*Fleet, error) {
	if len(clusters) == 0 {
		return nil, errors.New("the fleet has no cluster: its directory must hold one capability file (ClusterCapabilities) per cluster")
	}
	clusters = slices.SortedFunc(slices.Values(clusters), func(a, b Cluster) int { return cmp.Compare(a.Caps.Name, b.Caps.Name) })
	s := &fleetState{clusters: clusters, load: map[string][]Group{}, ledgers: map[string]*ledger{}, empty: map[string]*ledger{}, groups: map[ModelOnCluster][]Group{}, entries: map[ModelOnCluster][]entry{}, gpusOn: map[ModelOnCluster]int64{}, notes: map[ModelOnCluster][]string{}, planned: map[string][]string{}, over: map[string][]Group{}, fails: map[string][]string{}, plans: map[string]*Plan{}, models: map[string][]string{}, verdicts: map[string][]fit.Verdict{}}
	f := &Fleet{Fits: true}
	var err error
	if s.compare, f.Notes, err = currencies(clusters); err != nil {
		return nil, err
	}
	names := make([]string, len(clusters))
	for i, c := range clusters {
		names[i] = c.Caps.Name
		if len(c.Caps.NodePools) == 0 {
			return nil, fmt.Errorf("cluster %q (%s): %w", c.Caps.Name, c.File, ErrNoPools)
		}
		s.ledgers[c.Caps.Name], s.empty[c.Caps.Name] = newLedger(c.Caps, false), newLedger(c.Caps, false)
	}
	models = slices.Clone(models)
	for i := range models {
		if err := s.demand(&models[i]); err != nil {
			return nil, err
		}
	}
	kept, placed := split(models, s)
	for _, m := range kept {
		if !slices.Contains(names, m.Assigned) {
			return nil, &UnknownClusterError{Namespace: m.Namespace, Name: m.Name, Cluster: m.Assigned, Clusters: names}
		}
		f.Models = append(f.Models, s.keep(m))
	}
	for _, m := range placed {
		f.Models = append(f.Models, s.place(m))
	}
	slices.SortFunc(f.Models, func(a, b FleetModel) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, m := range f.Models {
		f.Fits = f.Fits && m.Fits
	}
	for _, c := range clusters {
		p := computeGroups(slices.Concat(s.load[c.Caps.Name], s.over[c.Caps.Name]), s.planned[c.Caps.Name], c.Caps)
		p.Memory = MemoryOf(s.verdicts[c.Caps.Name])
		ms := slices.Sorted(slices.Values(s.models[c.Caps.Name]))
		fails := s.fails[c.Caps.Name]
		fc := FleetCluster{Name: c.Caps.Name, Labels: c.Caps.Labels, File: c.File, Fits: p.Fits && len(fails) == 0, RenderFails: fails, Models: append([]string{}, ms...), Plan: p}
		f.Clusters = append(f.Clusters, fc)
		f.Fits = f.Fits && fc.Fits
	}
	return f, nil
}

// currencies: costs are compared only when every priced pool of the
// fleet is priced in one currency; a fleet priced in two is an error,
// since no exchange rate is known and ignoring prices would be a silent
// choice.
func currencies(clusters []Cluster) (bool, []string, error) {
	seen := map[string]string{}
	unpriced := []string{}
	for _, c := range clusters {
		priced := false
		for _, p := range c.Caps.NodePools {
			if p.PricePerNodeHour != nil {
				priced = true
				if _, ok := seen[p.PricePerNodeHour.Currency]; !ok {
					seen[p.PricePerNodeHour.Currency] = c.Caps.Name
				}
			}
		}
		if !priced {
			unpriced = append(unpriced, c.Caps.Name)
		}
	}
	if len(seen) > 1 {
		var parts []string
		for _, cur := range slices.Sorted(maps.Keys(seen)) {
			parts = append(parts, fmt.Sprintf("%s (cluster %q)", cur, seen[cur]))
		}
		return false, nil, fmt.Errorf("the fleet's pools are priced in %s: `pricePerNodeHour` must use one currency across the fleet for the plan to compare cost", strings.Join(parts, " and "))
	}
	var notes []string
	if len(unpriced) > 0 && len(seen) > 0 {
		notes = append(notes, fmt.Sprintf("cluster(s) %s price no pool (`pricePerNodeHour`): a model that fits one of them is placed by free GPUs, not cost", quoteAll(unpriced)))
	}
	return len(seen) > 0, notes, nil
}

// demand reads the model's pod groups for each cluster it renders for,
// and the GPUs they request there.
func (s *fleetState) demand(m *Candidate) error {
	reads := m.pods
	if reads == nil {
		reads = readPods(m.Items)
	}
	for _, c := range s.clusters {
		r, ok := reads[c.Caps.Name]
		if !ok {
			continue
		}
		gs, notes, err := r.groups, r.notes, r.err
		if err != nil {
			return fmt.Errorf("ModelDeployment %s/%s on cluster %q: %w", m.Namespace, m.Name, c.Caps.Name, err)
		}
		key := onCluster(m.Namespace, m.Name, c.Caps.Name)
		s.groups[key], s.notes[key] = gs, notes
		l := s.empty[c.Caps.Name]
		entries := make([]entry, len(gs))
		for i, g := range gs {
			entries[i] = l.sort(g)
		}
		s.entries[key] = entries
		var n int64
		for _, p := range l.with(entries).plan(nil, false).Pools {
			n += p.GPUsRequested
		}
		s.gpusOn[key] = n
	}
	return nil
}

// podsRead is what podGroups read of a render's objects.
type podsRead struct {
	groups []Group
	notes  []string
	err    error
}

// readPods reads the pods of each cluster's render. Clusters that
// rendered the model alike share its objects (RenderFleet): their pods
// are read once.
func readPods(items map[string][]*yaml.RNode) map[string]podsRead {
	reads := make(map[string]podsRead, len(items))
	byFirst := map[*yaml.RNode]podsRead{}
	for cluster, objects := range items {
		if len(objects) == 0 {
			reads[cluster] = podsRead{}
			continue
		}
		r, seen := byFirst[objects[0]]
		if !seen {
			r.groups, r.notes, r.err = podGroups(objects)
			byFirst[objects[0]] = r
		}
		reads[cluster] = r
	}
	return reads
}

// mostGPUs is what the model requests on the cluster where it asks the
// most: the order new models are placed in, and the figure of one that
// fits nowhere.
func (s *fleetState) mostGPUs(m Candidate) int64 {
	var most int64
	for _, c := range s.clusters {
		most = max(most, s.gpusOn[onCluster(m.Namespace, m.Name, c.Caps.Name)])
	}
	return most
}

// options counts the clusters a model could run on, were they empty: its
// selector matches them and it renders for them.
func (s *fleetState) options(m Candidate) int {
	n := 0
	for _, c := range s.clusters {
		_, rendered := s.groups[onCluster(m.Namespace, m.Name, c.Caps.Name)]
		if rendered && (m.Selector == nil || m.Selector.Matches(labels.Set(c.Caps.Labels))) {
			n++
		}
	}
	return n
}

// split separates the models Git assigned from the new ones, each in the
// order they are placed.
func split(models []Candidate, s *fleetState) (kept, placed []Candidate) {
	for _, m := range models {
		if m.Assigned != "" {
			kept = append(kept, m)
		} else {
			placed = append(placed, m)
		}
	}
	byName := func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	}
	slices.SortFunc(kept, byName)
	options, gpus := map[types.NamespacedName]int{}, map[types.NamespacedName]int64{}
	for _, m := range placed {
		options[types.NamespacedName{Namespace: m.Namespace, Name: m.Name}] = s.options(m)
		gpus[types.NamespacedName{Namespace: m.Namespace, Name: m.Name}] = s.mostGPUs(m)
	}
	slices.SortFunc(placed, func(a, b Candidate) int {
		ka, kb := types.NamespacedName{Namespace: a.Namespace, Name: a.Name}, types.NamespacedName{Namespace: b.Namespace, Name: b.Name}
		return cmp.Or(cmp.Compare(options[ka], options[kb]), cmp.Compare(gpus[kb], gpus[ka]), byName(a, b))
	})
	return kept, placed
}

// keep puts a model where Git assigned it, when it fits there; one that
// does not stays assigned (and is reported), but its pods are left out of
// the ledger, so that it does not make every model after it look short.
func (s *fleetState) keep(m Candidate) FleetModel {
	out := FleetModel{Namespace: m.Namespace, Name: m.Name, Cluster: m.Assigned, Kept: true, GPUs: s.mostGPUs(m)}
	if n, rendered := s.gpusOn[onCluster(m.Namespace, m.Name, m.Assigned)]; rendered {
		out.GPUs = n
	}
	c := s.cluster(m.Assigned)
	v := s.weigh(m, c)
	// What a kept model adds depends on which kept models came before it
	// (name order): not a figure to read anything into.
	v.CostPerHour, v.Currency = nil, ""
	out.Verdicts, out.Fits, out.Reason = []ClusterVerdict{v}, v.Fits, v.Reason
	if v.Fits {
		s.commit(m, c)
		return out
	}
	s.over[c.Caps.Name] = append(s.over[c.Caps.Name], s.groups[onCluster(m.Namespace, m.Name, c.Caps.Name)]...)
	s.models[c.Caps.Name] = append(s.models[c.Caps.Name], m.Namespace+"/"+m.Name)
	if why, refused := m.Refused[m.Assigned]; refused {
		// Its render fails there: so does the cluster's build, whatever
		// the other models. Where else it would run is what to do next.
		s.fails[c.Caps.Name] = append(s.fails[c.Caps.Name], m.Namespace+"/"+m.Name+": "+why)
		for _, other := range s.clusters {
			if other.Caps.Name != m.Assigned && s.weigh(m, other).Fits {
				out.Alternatives = append(out.Alternatives, other.Caps.Name)
			}
		}
	}
	return out
}

// place puts a new model on the best cluster that holds it.
func (s *fleetState) place(m Candidate) FleetModel {
	out := FleetModel{Namespace: m.Namespace, Name: m.Name, GPUs: s.mostGPUs(m)}
	best := -1
	for i, c := range s.clusters {
		v := s.weigh(m, c)
		out.Verdicts = append(out.Verdicts, v)
		if v.Fits && (best < 0 || s.better(v, out.Verdicts[best])) {
			best = i
		}
	}
	if best < 0 {
		out.Reason = "fits in no cluster of the fleet"
		return out
	}
	out.Cluster, out.Fits = s.clusters[best].Caps.Name, true
	out.GPUs = s.gpusOn[onCluster(m.Namespace, m.Name, out.Cluster)]
	s.commit(m, s.clusters[best])
	return out
}

// better: a costs less per hour (when costs compare), then leaves more
// GPUs free; a tie keeps the first, which comes first by name.
func (s *fleetState) better(a, b ClusterVerdict) bool {
	if s.compare && a.priced && b.priced && a.costCents != b.costCents {
		return a.costCents < b.costCents
	}
	return a.FreeGPUs > b.FreeGPUs
}

func (s *fleetState) cluster(name string) Cluster {
	for _, c := range s.clusters {
		if c.Caps.Name == name {
			return c
		}
	}
	return Cluster{}
}

// weigh is whether the model fits cluster c beside the models placed so
// far, and what it adds.
func (s *fleetState) weigh(m Candidate, c Cluster) ClusterVerdict {
	name := c.Caps.Name
	v := ClusterVerdict{Cluster: name}
	if m.Selector != nil && !m.Selector.Empty() && !m.Selector.Matches(labels.Set(c.Caps.Labels)) {
		v.Reason = fmt.Sprintf("its cluster selector %q does not match the cluster's labels (%s)", m.Selector.String(), labelList(c.Caps.Labels))
		return v
	}
	if why, refused := m.Refused[name]; refused {
		v.Reason = why
		return v
	}
	entries, ok := s.entries[onCluster(m.Namespace, m.Name, name)]
	if !ok {
		v.Reason = "not rendered for this cluster"
		return v
	}
	before := s.plans[name]
	if before == nil {
		before = s.ledgers[name].copy().plan(nil, false)
		s.plans[name] = before
	}
	after := s.ledgers[name].with(entries).plan(nil, false)
	v.FreeGPUs = freeGPUs(after)
	if !after.Fits {
		v.Reason = shortfall(after, m.Namespace, m.Name)
		return v
	}
	v.Fits = true
	v.costCents, v.priced = after.costCents-before.costCents, pricedWhere(after, c.Caps, m, entries)
	if v.priced {
		perHour := hourly(v.costCents)
		v.CostPerHour, v.Currency = &perHour, after.Currency
	}
	return v
}

// commit adds the model's pods to the cluster's ledger.
func (s *fleetState) commit(m Candidate, c Cluster) {
	name := c.Caps.Name
	key := onCluster(m.Namespace, m.Name, name)
	s.load[name] = append(s.load[name], s.groups[key]...)
	for _, e := range s.entries[key] {
		s.ledgers[name].add(e)
	}
	delete(s.plans, name)
	s.planned[name] = append(s.planned[name], s.notes[key]...)
	s.models[name] = append(s.models[name], m.Namespace+"/"+m.Name)
	s.verdicts[name] = append(s.verdicts[name], m.Fits[name]...)
}

// pricedWhere: every pool the model has pods on has a price, so the
// cost it adds is known: the pools its groups select (entries), those
// its fixed floating groups go to, and those its other floating pods were
// planned on.
func pricedWhere(p *Plan, caps *capabilities.Resolved, m Candidate, entries []entry) bool {
	for _, e := range entries {
		switch {
		case e.pool >= 0 && caps.NodePools[e.pool].PricePerNodeHour == nil,
			e.fixed && caps.NodePools[e.takers[0]].PricePerNodeHour == nil:
			return false
		}
	}
	for _, g := range p.Floating {
		if g.Namespace == m.Namespace && g.Model == m.Name && caps.NodePool(g.Pool).PricePerNodeHour == nil {
			return false
		}
	}
	return true
}

// freeGPUs are the GPUs of the declared nodes no pod requests, none when
// the pods ask for more.
func freeGPUs(p *Plan) int64 { return max(p.FreeGPUs(), 0) }

// FreeGPUs are the GPUs of the declared nodes no pod requests, over the
// pools whose size and node size are known; negative when the pods ask
// for more than there are.
func (p *Plan) FreeGPUs() int64 {
	var n int64
	for _, pool := range p.Pools {
		if pool.NodesAvailable != nil && pool.GPUsPerNode > 0 {
			n += int64(*pool.NodesAvailable)*int64(pool.GPUsPerNode) - pool.GPUsRequested
		}
	}
	return n
}

// shortfall says why a plan with the model does not fit: its own
// unplaced pods, then the pools it needs that are short.
func shortfall(p *Plan, namespace, name string) string {
	var why []string
	for _, g := range p.Unplaced {
		if g.Namespace == namespace && g.Model == name {
			why = append(why, fmt.Sprintf("%d pod(s) of %s: %s", g.Pods, g.Object, g.Reason))
		}
	}
	for _, pool := range p.Pools {
		if pool.Fits {
			continue
		}
		if pool.PodsLargerThanANode > 0 {
			why = append(why, fmt.Sprintf("pool %q: %d pod(s) larger than a node", pool.Name, pool.PodsLargerThanANode))
			continue
		}
		why = append(why, fmt.Sprintf("pool %q would need %d node(s) and has %d (%d GPU(s) requested with the models already there)", pool.Name, deref(pool.NodesNeeded), deref(pool.NodesAvailable), pool.GPUsRequested))
	}
	if len(why) == 0 {
		return "the cluster's plan does not fit"
	}
	return strings.Join(why, "; ")
}

func deref(v *int32) int32 {
	if v == nil {
		return 0
	}
	return *v
}

func labelList(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	return labels.Set(m).String()
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// onCluster is the key of a model's render for a cluster.
func onCluster(namespace, name, cluster string) ModelOnCluster {
	return ModelOnCluster{types.NamespacedName{Namespace: namespace, Name: name}, cluster}
}
