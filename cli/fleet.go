package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/gitsnap"
	"github.com/airunway-render/airunway-render/plan"
	"github.com/airunway-render/airunway-render/render"
)

// `airunway-render plan --fleet DIR`: the models of the paths assigned to
// the clusters whose capability files DIR holds. Here the files and each
// cluster's overlay are read; package plan renders each model for each
// cluster (plan.RenderFleet) and decides (plan.Assign).

// fleetInputs are what a fleet plan reads.
type fleetInputs struct {
	clusters []plan.Cluster
	// files: the file each model was read from, for --write.
	files map[types.NamespacedName]string
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
	in := &fleetInputs{files: map[types.NamespacedName]string{}}
	var problems diag.List
	in.clusters, problems = readFleet(src, dir)
	items, source, l := readInputs(src, paths)
	problems = append(problems, l...)
	if problems.HasErrors() {
		return nil, nil, problems.Sorted(), nil
	}
	sources, l := plan.SourceModels(items, source)
	if problems = append(problems, l...); problems.HasErrors() {
		return nil, nil, problems.Sorted(), nil
	}
	for _, m := range sources {
		in.files[types.NamespacedName{Namespace: m.Node.GetNamespace(), Name: m.Node.GetName()}] = m.File
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
	f, warnings, err := plan.RenderFleet(in.clusters, sources, plan.FleetOptions{Warnings: policy, Models: models, Deployed: in.modelOn})
	if err != nil {
		return nil, nil, problems.Sorted(), err
	}
	return f, in, append(problems, warnings...).Sorted(), nil
}

// readFleet reads every ClusterCapabilities under dir (other objects, a
// kustomization beside each, are left alone): one per cluster, by name.
func readFleet(src files, dir string) ([]plan.Cluster, diag.List) {
	items, source, problems := readInputs(src, []string{dir})
	if problems.HasErrors() {
		return nil, problems
	}
	clusters, l := plan.FleetClusters(items, source)
	problems = append(problems, l...)
	if len(clusters) == 0 && !problems.HasErrors() {
		problems = append(problems, diag.Problem{Severity: diag.Error, File: dir,
			Message: "holds no ClusterCapabilities: `--fleet` must name a directory with one capability file per cluster (`metadata.name` the cluster, `metadata.labels` its labels)"})
	}
	return clusters, problems
}

// runFleetPlan is `plan --fleet DIR`.
func runFleetPlan(o planOptions, paths []string, s streams) error {
	policy, err := o.warnings.policy()
	if err != nil {
		return err
	}
	src, closeScope, err := namedHostFiles(s.in, slices.Concat(paths, []string{o.fleet})...)
	if err != nil {
		return fail(err)
	}
	defer closeScope()
	f, in, problems, err := computeFleet(src, o.fleet, paths, policy, o.models, hostDirs, s.errOut)
	o.collapse(problems).Report(s.errOut, "nothing was planned")
	switch {
	case err != nil:
		return fail(err)
	case problems.HasErrors():
		return exitCode(1)
	}
	if err := writeFleet(s.out, f, o.output); err != nil {
		return fail(err)
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
		return fail(err)
	}
	base := policy
	base.AsErrors = false // the target branch's warnings are not the change's
	before, failedBefore, err := fleetSide(sides.repo, sides.old, sides.caps, sides.oldPaths, base, o.models, s.errOut)
	if err != nil {
		return fail(err)
	}
	after, failedAfter, err := fleetSide(sides.repo, sides.new, sides.caps, sides.newPaths, policy, o.models, s.errOut)
	if err != nil {
		return fail(err)
	}
	if failedBefore || failedAfter {
		return exitCode(1)
	}
	moves := plan.CompareFleets(before, after)
	if err := writeFleetDelta(s.out, moves, o.base, o.output); err != nil {
		return fail(err)
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
