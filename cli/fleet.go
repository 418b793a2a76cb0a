package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/gitsnap"
	"github.com/airunway-render/airunway-render/internal/yamlerr"
	"github.com/airunway-render/airunway-render/plan"
	"github.com/airunway-render/airunway-render/render"
)

// `airunway-render plan --fleet DIR`: the models of the paths assigned to
// the clusters whose capability files DIR holds (plan/fleet.go decides).
// Here the inputs are read and each model is rendered for each cluster on
// its own, so that a model that cannot run on one cluster (no provider, no
// pool, no memory fit) only rules that cluster out.

// fleetInputs are what a fleet plan reads.
type fleetInputs struct {
	clusters []plan.Cluster
	models   []plan.Candidate
	// files: the file each model was read from, for --write.
	files map[[2]string]string
	// warnings are each model's render warnings on the cluster it is
	// assigned to, once the assignment is known.
	warnings map[[3]string]diag.List
	// overlays: what each cluster with a kustomization deploys
	// (readOverlays).
	overlays map[string]clusterOverlay
}

// computeFleet reads the fleet directory and the models under paths, and
// assigns them. A cluster whose capability file sits beside a
// kustomization weighs each model as that kustomization deploys it
// (readOverlays, built where says). Problems that are errors (a capability
// file or a model that cannot be read or is invalid, an overlay that does
// not build) stop it before any assignment.
func computeFleet(src files, dir string, paths []string, policy diag.Policy, models map[string]fit.Model, where onDisk, stderr io.Writer) (*plan.Fleet, *fleetInputs, diag.List, error) {
	in := &fleetInputs{files: map[[2]string]string{}, warnings: map[[3]string]diag.List{}}
	var problems diag.List
	in.clusters, problems = readFleet(src, dir)
	items, source, l := readInputs(src, paths)
	problems = append(problems, l...)
	if problems.HasErrors() {
		return nil, nil, problems.Sorted(), nil
	}
	nodes, l := fleetModels(items, source, in)
	if problems = append(problems, l...); problems.HasErrors() {
		return nil, nil, problems.Sorted(), nil
	}
	in.overlays, l = readOverlays(src, in.clusters, where, stderr)
	problems = append(problems, l...)
	problems = append(problems, unplannedModels(in.overlays, in.files).Apply(policy)...)
	// Each model renders alone for each cluster: the ModelCatalogs among
	// the inputs are read once, for all of them.
	models, l = render.CatalogFacts(items, models, source)
	if problems = append(problems, l...); problems.HasErrors() {
		return nil, nil, problems.Sorted(), nil
	}
	for _, m := range nodes {
		in.models = append(in.models, in.candidate(m, policy, models))
	}
	f, err := plan.Assign(in.models, in.clusters)
	if err != nil {
		return nil, nil, problems.Sorted(), err
	}
	for _, m := range f.Models {
		problems = append(problems, in.warnings[[3]string{m.Namespace, m.Name, m.Cluster}]...)
	}
	return f, in, problems.Sorted(), nil
}

// readFleet reads every ClusterCapabilities under dir (other objects, a
// kustomization beside each, are left alone): one per cluster, by name.
func readFleet(src files, dir string) ([]plan.Cluster, diag.List) {
	items, source, problems := readInputs(src, []string{dir})
	if problems.HasErrors() {
		return nil, problems
	}
	var clusters []plan.Cluster
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
		clusters = append(clusters, plan.Cluster{Caps: caps, File: file})
	}
	// One run: the clusters' selection rules spend from one budget.
	files := make([]*capabilities.Resolved, len(clusters))
	for i, c := range clusters {
		files[i] = c.Caps
	}
	capabilities.ShareRuleCost(files...)
	if len(clusters) == 0 && !problems.HasErrors() {
		problems = append(problems, diag.Problem{Severity: diag.Error, File: dir,
			Message: "holds no ClusterCapabilities: `--fleet` must name a directory with one capability file per cluster (`metadata.name` the cluster, `metadata.labels` its labels)"})
	}
	return clusters, append(problems, fleetDeclarations(clusters)...)
}

// fleetDeclarations holds each capability file's `spec.fleet.clusters`,
// where it declares one, to the clusters of the directory: a build of
// that cluster refuses assignments to clusters it does not list, so a
// list that disagrees with the plan would fail builds the plan calls fine.
func fleetDeclarations(clusters []plan.Cluster) diag.List {
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

// isSourceModel: n is a ModelDeployment someone wrote, not one the
// renderer passed through with its output (generated-from).
func isSourceModel(n *yaml.RNode) bool {
	return n.GetKind() == hub.KindModelDeployment && strings.HasPrefix(n.GetApiVersion(), hub.Group+"/") && n.GetAnnotations()[hub.AnnotationGeneratedFrom] == ""
}

// inputModel is one model of the input and its decoded form.
type inputModel struct {
	node *yaml.RNode
	md   *hub.ModelDeployment
}

// fleetModels are the ModelDeployments among items, each once, decoded
// and validated as render does before it reads a capability file
// (render.DecodeModel): a model that is invalid is an error of the input,
// not a cluster it does not fit.
func fleetModels(items []*yaml.RNode, source func(*yaml.RNode) string, in *fleetInputs) ([]inputModel, diag.List) {
	var models []inputModel
	var l diag.List
	for _, n := range items {
		if !isSourceModel(n) {
			continue
		}
		ref := diag.Resource{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
		key := [2]string{n.GetNamespace(), n.GetName()}
		if prev, dup := in.files[key]; dup {
			l = append(l, diag.Problem{Severity: diag.Error, Resource: ref, File: source(n), Message: "is defined twice (also in " + prev + "); each ModelDeployment must appear once"})
			continue
		}
		in.files[key] = source(n)
		md, dl := render.DecodeModel(n)
		if dl.HasErrors() {
			l = append(l, dl.Attach(ref, source(n))...)
			continue
		}
		models = append(models, inputModel{node: n, md: md})
	}
	return models, l
}

// candidate renders one model for each cluster it may run on: all of
// them, or only its own when Git assigns it one (it is never moved). A
// model whose render fails on its own cluster is rendered on the others
// too, so that the plan can name where it would run.
func (in *fleetInputs) candidate(m inputModel, policy diag.Policy, models map[string]fit.Model) plan.Candidate {
	c := plan.Candidate{Namespace: m.node.GetNamespace(), Name: m.node.GetName(), Assigned: m.md.AssignedCluster(), Selector: m.md.ClusterSelector(),
		Items: map[string][]*yaml.RNode{}, Refused: map[string]string{}, Fits: map[string][]fit.Verdict{}}
	in.renderOn(&c, m, false, policy, models, func(name string) bool { return c.Assigned == "" || c.Assigned == name })
	if _, refused := c.Refused[c.Assigned]; refused {
		// Weighed elsewhere as if unassigned: the other clusters' renders
		// would skip it, being assigned.
		in.renderOn(&c, m, true, policy, models, func(name string) bool { return name != c.Assigned })
	}
	return c
}

// renderOn renders the model, as each cluster deploys it (modelOn), for
// each cluster where is true; unassigned clears its cluster assignment.
func (in *fleetInputs) renderOn(c *plan.Candidate, m inputModel, unassigned bool, policy diag.Policy, models map[string]fit.Model, where func(string) bool) {
	for _, cl := range in.clusters {
		name := cl.Caps.Name
		if !where(name) {
			continue
		}
		node, refused := in.modelOn(name, m)
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
		res := render.Render([]*yaml.RNode{node}, render.Options{Capabilities: cl.Caps, Warnings: policy, Models: models, WeighUnassigned: true})
		c.Fits[name] = res.Fits
		if res.Problems.HasErrors() {
			c.Refused[name] = errorMessages(res.Problems)
			continue
		}
		if len(res.Items) > 0 {
			c.Items[name] = res.Items
		}
		in.warnings[[3]string{c.Namespace, c.Name, name}] = withCluster(res.Problems, name)
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

// runFleetPlan is `plan --fleet DIR`.
func runFleetPlan(o planOptions, paths []string, s streams) error {
	policy, err := o.warnings.policy()
	if err != nil {
		return err
	}
	src, closeScope, err := namedHostFiles(s.in, slices.Concat(paths, []string{o.fleet})...)
	if err != nil {
		reportError(s.errOut, err)
		return exitCode(1)
	}
	defer closeScope()
	f, in, problems, err := computeFleet(src, o.fleet, paths, policy, o.models, hostDirs, s.errOut)
	problems.Report(s.errOut, "nothing was planned")
	switch {
	case err != nil:
		reportError(s.errOut, err)
		return exitCode(1)
	case problems.HasErrors():
		return exitCode(1)
	}
	if err := writeFleet(s.out, f, o.output); err != nil {
		reportError(s.errOut, err)
		return exitCode(1)
	}
	if o.write {
		if err := writeAssignments(f, in, paths, s); err != nil {
			return err
		}
	}
	return planExit(f.Fits, rolloutsProceed(f))
}

func writeFleet(w io.Writer, f *plan.Fleet, format string) error {
	switch format {
	case "json":
		return writePlanJSON(w, f)
	case "markdown":
		_, err := io.WriteString(w, markdownTables(fleetTables(f))+"\n"+strings.Join(fleetSummary(f), "\n\n")+"\n")
		return err
	}
	return writeTables(w, fleetTables(f), strings.Join(fleetSummary(f), "\n"))
}

var (
	fleetModelColumns   = []string{"MODEL", "CLUSTER", "GPUS", "COST/HOUR ADDED", "ASSIGNMENT", "OTHER CLUSTERS"}
	fleetClusterColumns = []string{"CLUSTER", "LABELS", "FITS", "GPUS", "FREE GPUS", "NODES IN USE", "COST/MONTH", "MODELS"}
)

func fleetTables(f *plan.Fleet) []table {
	return []table{{columns: fleetModelColumns, rows: fleetModelRows(f)}, {title: "Clusters", columns: fleetClusterColumns, rows: fleetClusterRows(f)}}
}

func fleetModelRows(f *plan.Fleet) [][]string {
	var rows [][]string
	for _, m := range f.Models {
		cluster, how, costs, others := m.Cluster, "new (plan --fleet --write records it)", "-", []string{}
		if m.Kept {
			how = "kept (in Git)"
		}
		if !m.Fits {
			cluster, how = "**none**", "fits nowhere"
			if m.Kept {
				cluster, how = m.Cluster+" (does NOT fit)", "kept (in Git)"
			}
		}
		for _, v := range m.Verdicts {
			if v.Cluster == m.Cluster && m.Fits {
				costs = cost(v.CostPerHour, v.Currency)
				continue
			}
			if v.Fits {
				others = append(others, fmt.Sprintf("%s: fits, %s/hour, %d GPU(s) free", v.Cluster, dash(cost(v.CostPerHour, v.Currency)), v.FreeGPUs))
			} else {
				others = append(others, v.Cluster+": "+v.Reason)
			}
		}
		rows = append(rows, []string{m.Namespace + "/" + m.Name, cluster, fmt.Sprint(m.GPUs), costs, how, dash(strings.Join(others, "; "))})
	}
	return rows
}

func fleetClusterRows(f *plan.Fleet) [][]string {
	var rows [][]string
	for _, c := range f.Clusters {
		var gpus int64
		var nodes int32
		for _, p := range c.Plan.Pools {
			gpus += p.GPUsRequested
			if p.NodesNeeded != nil {
				nodes += *p.NodesNeeded
			}
		}
		labels := []string{}
		for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
			labels = append(labels, k+"="+c.Labels[k])
		}
		free := fmt.Sprint(c.Plan.FreeGPUs())
		if n := c.Plan.FreeGPUs(); n < 0 {
			free = fmt.Sprintf("none (%d over)", -n)
		}
		rows = append(rows, []string{c.Name, dash(strings.Join(labels, ",")), yesNo(c.Fits), fmt.Sprint(gpus), free, fmt.Sprint(nodes),
			cost(c.Plan.CostPerMonth, c.Plan.Currency), dash(strings.Join(c.Models, ", "))})
	}
	return rows
}

func fleetSummary(f *plan.Fleet) []string {
	var out []string
	var short []string
	for _, m := range f.Models {
		if !m.Fits && m.Kept {
			line := fmt.Sprintf("Kept: %s/%s does not fit cluster %q, where Git assigns it (it is never moved; edit its annotation %s to move it): %s", m.Namespace, m.Name, m.Cluster, hub.AnnotationCluster, m.Reason)
			if len(m.Alternatives) > 0 {
				line += fmt.Sprintf("; it would render and fit on: %s", strings.Join(m.Alternatives, ", "))
			}
			short = append(short, line)
		}
	}
	verdict := "every model has a cluster where its pods fit"
	if !f.Fits {
		verdict = "does NOT fit"
	}
	out = append(out, "Fleet plan: "+verdict+".")
	out = append(out, short...)
	for _, m := range f.Models {
		if m.Fits || m.Kept {
			continue
		}
		out = append(out, fmt.Sprintf("Nowhere: %s/%s fits no cluster:", m.Namespace, m.Name))
		for _, v := range m.Verdicts {
			out = append(out, fmt.Sprintf("  - %s: %s", v.Cluster, v.Reason))
		}
	}
	for _, c := range f.Clusters {
		switch {
		case len(c.RenderFails) > 0:
			for _, fail := range c.RenderFails {
				out = append(out, fmt.Sprintf("Cluster %q: its build FAILS, and delivers nothing: %s", c.Name, fail))
			}
		case !c.Fits:
			out = append(out, fmt.Sprintf("Cluster %q does NOT fit its models: run `airunway-render plan --capabilities %s` for its pools.", c.Name, c.File))
		case c.Plan != nil && !c.Plan.RolloutsProceed:
			out = append(out, fmt.Sprintf("Cluster %q holds its models, but NOT their rolling updates: the next rollout would stall; run `airunway-render plan --capabilities %s` for its pools.", c.Name, c.File))
		}
	}
	for _, n := range f.Notes {
		out = append(out, "Note: "+n)
	}
	return out
}

// runFleetDiff is `plan --fleet DIR --base REF`: the fleet's assignment
// at REF and in the working tree, and what the change moves: models
// added, removed, or assigned to another cluster, and each cluster's GPUs
// and cost before and after.
func runFleetDiff(o planOptions, paths []string, s streams) error {
	if slices.Contains(paths, stdinName) {
		return usagef("`--base` reads the paths at a git revision; stdin (`-f -`) has none")
	}
	policy, err := o.warnings.policy()
	if err != nil {
		return err
	}
	sides, err := openSides(o.dir, o.fleet, paths, "--base", o.base, "", "", "the working tree")
	if err != nil {
		reportError(s.errOut, err)
		return exitCode(1)
	}
	base := policy
	base.AsErrors = false // the target branch's warnings are not the change's
	before, failedBefore, err := fleetSide(sides.repo, sides.old, sides.caps, sides.oldPaths, base, o.models, s.errOut)
	if err != nil {
		reportError(s.errOut, err)
		return exitCode(1)
	}
	after, failedAfter, err := fleetSide(sides.repo, sides.new, sides.caps, sides.newPaths, policy, o.models, s.errOut)
	if err != nil {
		reportError(s.errOut, err)
		return exitCode(1)
	}
	if failedBefore || failedAfter {
		return exitCode(1)
	}
	moves := plan.CompareFleets(before, after)
	if err := writeFleetDelta(s.out, moves, o.base, o.output); err != nil {
		reportError(s.errOut, err)
		return exitCode(1)
	}
	return planExit(after.Fits, rolloutsProceed(after))
}

// rolloutsProceed: every cluster's rolling updates can run to the end.
func rolloutsProceed(f *plan.Fleet) bool {
	for _, c := range f.Clusters {
		if c.Plan != nil && !c.Plan.RolloutsProceed {
			return false
		}
	}
	return true
}

// fleetSide computes the fleet at one side, reading through its os.Root;
// problems go to stderr with the side in front of each line. A side
// without the model paths is an empty fleet.
func fleetSide(repo *gitsnap.Repo, side gitsnap.Side, dir string, paths []string, policy diag.Policy, models map[string]fit.Model, stderr io.Writer) (f *plan.Fleet, failed bool, err error) {
	snap, err := fleetSnapshot(repo, side, dir, paths)
	if err != nil {
		return nil, false, err
	}
	defer func() { err = errors.Join(err, snap.Close()) }()
	var b strings.Builder
	defer func() { printSide(stderr, side, b.String()) }()
	f, _, problems, err := computeFleet(rootFiles{root: snap.Root, dir: "."}, dir, paths, policy, models, snapshotDirs(snap), stderr)
	problems.Report(&b, "nothing was planned")
	if err != nil || problems.HasErrors() {
		if err != nil {
			reportError(&b, err)
		}
		return nil, true, nil
	}
	return f, false, nil
}

// fleetSnapshot opens a side's fleet directory and model paths: the whole
// tree when a cluster's capability file sits beside a kustomization, which
// reads what it names, anywhere in the repository.
func fleetSnapshot(repo *gitsnap.Repo, side gitsnap.Side, dir string, paths []string) (*gitsnap.Snapshot, error) {
	snap, err := repo.Take(side, append([]string{dir}, paths...))
	if err != nil {
		return nil, err
	}
	src := rootFiles{root: snap.Root, dir: "."}
	clusters, _ := readFleet(src, dir)
	if !slices.ContainsFunc(clusters, func(c plan.Cluster) bool { return isKustomization(src, filepath.Dir(c.File)) }) {
		return snap, nil
	}
	if err := snap.Close(); err != nil {
		return nil, err
	}
	return repo.TakeTree(side)
}

var fleetDeltaColumns = []string{"MODEL", "BEFORE", "AFTER", "CHANGE"}

func writeFleetDelta(w io.Writer, d *plan.FleetDelta, base, format string) error {
	if format == "json" {
		return writePlanJSON(w, d)
	}
	var rows [][]string
	for _, m := range d.Models {
		change := m.Change
		if !m.Fits && m.After != "" && change != "no longer fits" {
			change += " (does NOT fit)"
		}
		rows = append(rows, []string{m.Namespace + "/" + m.Name, dash(m.Before), dash(m.After), change})
	}
	clusters := table{title: "Clusters", columns: []string{"CLUSTER", "GPUS", "COST/MONTH", "FITS"}}
	for _, c := range d.Clusters {
		clusters.rows = append(clusters.rows, []string{c.Name, change64(c.Before.GPUs, c.After.GPUs), changeCost(c.Before.CostPerMonth, c.After.CostPerMonth, d.Currency), yesNo(c.After.Fits)})
	}
	summary := fleetDeltaSummary(d, base)
	if format == "markdown" {
		out := "#### Fleet plan against `" + base + "`\n\n"
		if len(rows) > 0 {
			out += markdownTable(fleetDeltaColumns, rows) + "\n"
		}
		out += "**Clusters**\n\n" + markdownTable(clusters.columns, clusters.rows) + "\n"
		_, err := io.WriteString(w, out+summary+"\n")
		return err
	}
	if len(rows) == 0 {
		rows = [][]string{{"-", "-", "-", "no model moves"}}
	}
	return writeTables(w, []table{{columns: fleetDeltaColumns, rows: rows}, clusters}, summary)
}

func fleetDeltaSummary(d *plan.FleetDelta, base string) string {
	line := fmt.Sprintf("Against %s: %d model(s) moved, %d added, %d removed; ", base, d.Moved, d.Added, d.Removed)
	if d.AfterFits {
		return line + "every model has a cluster where its pods fit."
	}
	line += "the fleet does NOT fit after the change (run `airunway-render plan --fleet` for the reasons)."
	for _, c := range d.Clusters {
		for _, fail := range c.After.RenderFails {
			line += fmt.Sprintf("\nCluster %q: its build FAILS after the change, and delivers nothing: %s", c.Name, fail)
		}
	}
	for _, m := range d.Models {
		if len(m.Alternatives) > 0 {
			line += fmt.Sprintf("\n%s/%s would render and fit on: %s (edit its annotation %s to move it)", m.Namespace, m.Name, strings.Join(m.Alternatives, ", "), hub.AnnotationCluster)
		}
	}
	return line
}
