package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/gitsnap"
	"github.com/airunway-render/airunway-render/plan"
	"github.com/airunway-render/airunway-render/render"
)

// `airunway-render plan --base REF`: the plan at a git revision and in the
// working tree, and what changed between them, for a pull request.

func runPlanDiff(o planOptions, paths []string, s streams) error {
	if slices.Contains(paths, stdinName) {
		return usagef("`--base` reads the paths at a git revision; stdin (`-f -`) has none")
	}
	delta, after, failed, err := planRefs(o, paths, s.errOut)
	if err != nil {
		return fail(err)
	}
	if failed {
		return exitCode(1)
	}
	// The plan's own warnings are the change's: those of the working tree.
	policy, err := o.warnings.policy()
	if err != nil {
		return err
	}
	warnings := planWarnings(after).Apply(policy)
	if warnings.HasErrors() {
		warnings.Report(s.errOut, "nothing was planned")
		return exitCode(1)
	}
	switch o.output {
	case "json":
		err = writePlanJSON(s.out, delta)
	case "markdown":
		err = writeDeltaMarkdown(s.out, delta, o.base, warnings)
	default:
		err = writeDeltaTable(s.out, delta, o.base, warnings)
	}
	if err != nil {
		return fail(err)
	}
	return planExit(delta.After.Fits, delta.After.RolloutsProceed)
}

// planRefs plans both sides and returns their difference and the plan
// after; failed means problems were printed on stderr.
func planRefs(o planOptions, given []string, stderr io.Writer) (*plan.Delta, *plan.Plan, bool, error) {
	sides, err := openSides(o.dir, o.capsFile, given, "--base", o.base, "", "", "the working tree")
	if err != nil {
		return nil, nil, false, err
	}
	before, baseFailed, err := planSide(sides.repo, sides.old, true, sides.caps, sides.oldPaths, o, stderr)
	if err != nil {
		return nil, nil, false, err
	}
	after, headFailed, err := planSide(sides.repo, sides.new, false, sides.caps, sides.newPaths, o, stderr)
	if err != nil || baseFailed || headFailed {
		return nil, nil, baseFailed || headFailed, err
	}
	return plan.Compare(before, after), after, false, nil
}

// planSide renders and plans one side, reading through its os.Root;
// problems go to stderr with the side in front of each line.
func planSide(repo *gitsnap.Repo, side gitsnap.Side, isBase bool, caps string, paths []string, o planOptions, stderr io.Writer) (p *plan.Plan, failed bool, err error) {
	snap, err := takeSide(repo, side, append([]string{caps}, paths...))
	if err != nil {
		return nil, false, err
	}
	defer func() { err = errors.Join(err, snap.Close()) }()
	src := rootFiles{root: snap.Root, dir: "."}
	var b strings.Builder
	defer func() { printSide(stderr, side, b.String()) }()
	policy, err := o.warnings.policy()
	if err != nil {
		return nil, false, err
	}
	if isBase {
		// The base's warnings are the target branch's, not the change's:
		// shown, but never what fails the plan of a pull request (the
		// first model added to an empty directory warns no-models there).
		policy.AsErrors = false
	}
	resolved, problems := readCapabilities(src, caps)
	var items []*yaml.RNode // a side without the paths: the models are added or removed
	var fits []fit.Verdict
	if len(paths) > 0 {
		inputs, built := withOverlaysBuilt(src, paths, snapshotDirs(snap), &b)
		var res render.Result
		res, problems = renderInputs(inputs, resolved, append(problems, built...), paths, encoder{}, policy, o.models)
		items, fits = res.Items, res.Fits
	}
	problems.Report(&b, "nothing was planned")
	if problems.HasErrors() {
		return nil, true, nil
	}
	p, err = plan.Compute(items, resolved)
	if p != nil {
		p.Memory = plan.MemoryOf(fits)
	}
	if errors.Is(err, plan.ErrNoPools) {
		// A side without pools has nothing to plan: the pull request that
		// first declares a cluster's pools, or a cluster that declares
		// none, compares against an empty plan instead of failing.
		fmt.Fprintf(&b, "[note] %s declares no node pools: nothing to plan there\n", caps)
		return &plan.Plan{Fits: true, RolloutsProceed: true}, false, nil
	}
	return p, false, err
}

func writeDeltaTable(w io.Writer, d *plan.Delta, base string, warnings diag.List) error {
	tables := []table{{columns: deltaColumns, rows: deltaRows(d)}, {title: memoryDeltaTitle, columns: memoryDeltaColumns, rows: memoryDeltaRows(d.Memory)}}
	return writeTables(w, tables, deltaSummary(d, base, warnings))
}

func writeDeltaMarkdown(w io.Writer, d *plan.Delta, base string, warnings diag.List) error {
	out := "#### GPU plan against `" + base + "`\n\n"
	if len(d.Pools) > 0 {
		out += markdownTable(deltaColumns, deltaRows(d)) + "\n"
	}
	if len(d.Memory) > 0 {
		out += "**" + memoryDeltaTitle + "**\n\n" + markdownTable(memoryDeltaColumns, memoryDeltaRows(d.Memory)) + "\n"
	}
	_, err := io.WriteString(w, out+deltaSummary(d, base, warnings)+"\n")
	return err
}

var deltaColumns = []string{"POOL", "GPUS", "NODES NEEDED", "COST/MONTH", "FITS", "MODELS CHANGED"}

func deltaRows(d *plan.Delta) [][]string {
	var rows [][]string
	for _, p := range d.Pools {
		name := p.Name
		switch {
		case !p.Before.Declared:
			name += " (new pool)"
		case !p.After.Declared:
			name += " (pool removed)"
		}
		rows = append(rows, []string{
			name,
			change64(p.Before.GPUs, p.After.GPUs),
			changeOptional(p.Before.NodesNeeded, p.After.NodesNeeded),
			changeCost(p.Before.CostPerMonth, p.After.CostPerMonth, d.Currency),
			poolFits(p.After),
			modelChanges(p.Models),
		})
	}
	return rows
}

// poolFits is a pool's FITS cell after the change.
func poolFits(t plan.PoolTotals) string {
	switch {
	case !t.Fits:
		return yesNo(false)
	case !t.RolloutsProceed:
		return yesNo(false) + " (rollout stalls)"
	}
	return yesNo(true)
}

func change64(before, after int64) string {
	if before == after {
		return strconv.FormatInt(after, 10)
	}
	return fmt.Sprintf("%d → %d (%+d)", before, after, after-before)
}

func changeOptional(before, after *int32) string {
	if before != nil && after != nil {
		return change64(int64(*before), int64(*after))
	}
	return optional(before) + " → " + optional(after)
}

func changeCost(before, after *float64, currency string) string {
	if before == nil && after == nil {
		return "-"
	}
	b, a := 0.0, 0.0
	if before != nil {
		b = *before
	}
	if after != nil {
		a = *after
	}
	if a == b {
		return cost(after, currency)
	}
	return fmt.Sprintf("%s → %s (%s%s %s)", money2(b), money2(a), sign(a-b), money2(abs(a-b)), currency)
}

func money2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func sign(v float64) string {
	if v < 0 {
		return "-"
	}
	return "+"
}

func abs(v float64) float64 { return max(v, -v) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

func modelChanges(ms []plan.ModelDiff) string {
	var out []string
	for _, m := range ms {
		id := m.Namespace + "/" + m.Name
		switch {
		case m.Before == (plan.Usage{}):
			out = append(out, fmt.Sprintf("+%s (%d pod, %d GPU)", id, m.After.Pods, m.After.GPUs))
		case m.After == (plan.Usage{}):
			out = append(out, fmt.Sprintf("-%s (%d pod, %d GPU)", id, m.Before.Pods, m.Before.GPUs))
		default:
			out = append(out, fmt.Sprintf("%s (%d → %d pod, %d → %d GPU)", id, m.Before.Pods, m.After.Pods, m.Before.GPUs, m.After.GPUs))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

func deltaSummary(d *plan.Delta, base string, warnings diag.List) string {
	lines := []string{deltaVerdict(d, base)}
	for _, w := range warnings {
		lines = append(lines, w.String())
	}
	return strings.Join(lines, "\n")
}

// deltaVerdict is the summary's first line: what the change does to cost
// and fit.
func deltaVerdict(d *plan.Delta, base string) string {
	if !d.Changed() && d.After.Fits && d.After.RolloutsProceed {
		return fmt.Sprintf("No change to any pool's pods, GPUs, nodes or cost against %s.", base)
	}
	line := fmt.Sprintf("Against %s: ", base)
	if d.After.CostPerMonth != nil || d.Before.CostPerMonth != nil {
		line += "nodes in use cost " + changeCost(d.Before.CostPerMonth, d.After.CostPerMonth, d.Currency) + " a month; "
	}
	if d.Before.Unplaced > 0 || d.After.Unplaced > 0 {
		line += fmt.Sprintf("%d pod(s) fit no pool (%d before); ", d.After.Unplaced, d.Before.Unplaced)
	}
	switch {
	case d.After.Fits && d.After.RolloutsProceed:
		line += "every pool holds its pods."
	case d.After.Fits:
		line += "every pool holds its pods, but NOT their rolling update: the next rollout would stall (run `airunway-render plan` for the pools that are short)."
	default:
		line += "the change does NOT fit (run `airunway-render plan` for the pools that are short)."
	}
	return line
}
