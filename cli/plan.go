package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/plan"
)

// exitShort: plan found a pool that cannot hold its pods.
const exitShort = 3

// exitRolloutShort: every pool holds its pods, but some rolling update
// cannot run to the end: a workload that may not take old pods down first
// finds no room for its new ones, which stay Pending. Its own code, so
// that CI can tell "does not run" from "cannot be updated".
const exitRolloutShort = 4

// planExit is the exit status of a plan that was printed.
func planExit(fits, rolloutsProceed bool) error {
	switch {
	case !fits:
		return exitCode(exitShort)
	case !rolloutsProceed:
		return exitCode(exitRolloutShort)
	}
	return nil
}

var planFormats = []string{"table", "markdown", "json"}

type planOptions struct {
	filenames []string
	warnings  warningFlags
	capsFile  string
	output    string
	base      string // a git revision: print the change against it
	fleet     string // a directory of capability files, one per cluster
	write     bool   // with fleet: record the assignment on the models
	dir       string
	modelDirs []string
	models    map[string]fit.Model // read from modelDirs
	verbose   bool                 // print every warning (collapse)
}

// collapse is how the plan prints its warnings: those of one kind on one
// cluster, past diag.CollapseAbove, as one line that counts them, unless
// -v or -o json asks for each.
func (o planOptions) collapse(l diag.List) diag.List {
	if o.verbose || o.output == "json" {
		return l
	}
	return l.Collapsed("`-v` prints each")
}

func newPlanCommand(s streams) *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan [-f FILE|DIR|-]... [PATH...] --capabilities FILE [-o table|markdown|json] [--base REF [-C DIR]]",
		Short: "Hold the models' GPU demand against the cluster's node pools",
		Long: `Render the ModelDeployments given, as render does, and plan them against
the node pools of the capability file: per pool the pods and GPUs every
rendered object asks for (model servers, prefill and decode workers,
multinode workers, Ray heads and workers, endpoint pickers, CPU helpers),
the nodes they need packed largest first onto nodes of the pool's size (a
pod never spans nodes), what rolling updates add at their peak, against
the pool's nodes (nodePools[].nodes: a count, or min and max when
autoscaled), with the idle GPUs on the nodes used and the monthly cost at
the pool's pricePerNodeHour (730 hours). A pod that selects no pool (a
Ray head or endpoint picker without a node selector) goes where the
scheduler may put it: a pool whose taints it tolerates and whose nodes
hold it, pools without GPUs first, with a warning when it lands on GPUs.
A PATH that holds a kustomization (a cluster's overlay, as Argo CD and
Flux build it) is built first, as build builds it: kustomize in process,
this binary as the function, nothing read outside the Git working tree;
the plan then counts what the overlay deploys, its patches included.
A second table gives each model's memory per replica as the render
estimated it (needed and available MiB, headroom, the fit, the source of
the model's facts; --model-dir ID=DIR reads them as render does).

With --base REF, the paths and the capability file are read at that git
revision too, and the plan diff is printed instead: per pool the pods,
GPUs, nodes and monthly cost before and after, the models whose share
changed, and those whose memory fit changed. That is what a pull request
adds to the cluster's GPU bill; CI runs it with --base on the target
branch (examples/ci).

Exit status: 0 when every pool holds its pods and every rolling update
can run to the end (with --base: after the change), 3 when some pool is short of nodes or a
pod fits no pool, 4 when the pods fit but a rolling update would stall (a
workload that may not take a pod down first, maxUnavailable 0, finds no
room for its new pods), 1 on an error in the inputs (nothing is printed on
stdout then).`,
		Example: `  # the prod cluster's plan, as a table: its overlay, as Argo CD builds it
  airunway-render plan --capabilities clusters/prod/capabilities.yaml clusters/prod

  # plain model files
  airunway-render plan -f models/ --capabilities clusters/prod/capabilities.yaml

  # markdown for a pull request comment
  airunway-render plan -f models/ --capabilities caps.yaml -o markdown

  # what this branch changes on prod, as a pull-request comment
  airunway-render plan --base origin/main --capabilities clusters/prod/capabilities.yaml -o markdown clusters/prod

  # JSON for a pipeline: fail the job when it does not fit
  airunway-render plan -f models/ --capabilities caps.yaml -o json | jq '.pools[] | select(.fits | not)'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := inputPaths(o.filenames, args)
			if err != nil {
				return err
			}
			if err := o.checkFleetFlags(cmd); err != nil {
				return err
			}
			if o.capsFile == "" && o.fleet == "" {
				return usagef("`--capabilities` must name the cluster's capability file (or `--fleet` a directory of them, one per cluster): the plan holds the models against its node pools")
			}
			if !slices.Contains(planFormats, o.output) {
				return usagef("`-o` must be one of %s, got %q", strings.Join(planFormats, ", "), o.output)
			}
			if o.models, err = readModelDirs(o.modelDirs); err != nil {
				return fail(err)
			}
			if o.base != "" && o.fleet != "" {
				return runFleetDiff(o, paths, s)
			}
			if o.base != "" {
				return runPlanDiff(o, paths, s)
			}
			if cmd.Flags().Changed("directory") {
				return usagef("`-C` must be used with `--base`")
			}
			hintIfTerminal(s, cmd.CommandPath(), paths)
			if o.fleet != "" {
				return runFleetPlan(o, paths, s)
			}
			return runPlan(o, paths, s)
		},
	}
	f := cmd.Flags()
	addFilenameFlag(cmd, &o.filenames, "YAML file or directory of models to plan")
	f.StringVar(&o.capsFile, "capabilities", "", "ClusterCapabilities file whose node pools, sizes and prices the plan uses (required)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, markdown or json")
	f.StringVar(&o.base, "base", "", "git revision to compare with: print what the change adds or removes per pool (paths and --capabilities are read at REF and in the working tree)")
	f.StringVarP(&o.dir, "directory", "C", ".", "with --base: run as if started in this directory")
	f.StringVar(&o.fleet, "fleet", "", "directory of capability files, one per cluster of a fleet: assign each model to a cluster where its pods fit (instead of --capabilities)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every warning: without it (and without -o json), more than "+strconv.Itoa(diag.CollapseAbove)+" warnings of one kind on one cluster and pool are summed up in one line that counts them and names the first")
	f.BoolVar(&o.write, "write", false, "with --fleet: record each new assignment on its model (annotation "+hub.AnnotationCluster+"), in place")
	addModelDirFlag(cmd, &o.modelDirs)
	o.warnings.add(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(planFormats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// checkFleetFlags refuses flag combinations --fleet does not take.
func (o planOptions) checkFleetFlags(cmd *cobra.Command) error {
	switch {
	case o.fleet != "" && o.capsFile != "":
		return usagef("`--fleet` and `--capabilities` cannot be used together: a fleet's directory holds each cluster's capability file")
	case o.write && o.fleet == "":
		return usagef("`--write` records a fleet's assignment and needs `--fleet DIR`")
	case o.write && o.base != "":
		return usagef("`--write` cannot be used with `--base`: it writes the working tree's assignment")
	case o.write && slices.Contains(o.filenames, stdinName):
		return usagef("`--write` edits the models' files and cannot take `-`")
	}
	return nil
}

func runPlan(o planOptions, paths []string, s streams) error {
	policy, err := o.warnings.policy()
	if err != nil {
		return err
	}
	src, closeScope, err := namedHostFiles(s.in, slices.Concat(paths, []string{o.capsFile})...)
	if err != nil {
		return fail(err)
	}
	defer closeScope()
	caps, problems := readCapabilities(src, o.capsFile)
	inputs, built := withOverlaysBuilt(src, paths, hostDirs, s.errOut)
	// The plan reads each object's pods as it is rendered and keeps no
	// YAML: it prints no objects.
	pods := plan.NewReader()
	res, l := renderInputs(inputs, caps, append(problems, built...), paths, encoder{encode: pods.Encode}, policy, o.models)
	o.collapse(l).Report(s.errOut, "nothing was planned")
	if l.HasErrors() {
		return exitCode(1)
	}
	p, err := pods.Plan(caps)
	if err != nil {
		return fail(err)
	}
	p.Memory = plan.MemoryOf(res.Fits)
	warnings := planWarnings(p).Apply(policy)
	if warnings.HasErrors() {
		warnings.Report(s.errOut, "nothing was planned")
		return exitCode(1)
	}
	switch o.output {
	case "json":
		err = writePlanJSON(s.out, p)
	case "markdown":
		err = writePlanMarkdown(s.out, p, warnings)
	default:
		err = writePlanTable(s.out, p, warnings)
	}
	if err != nil {
		return fail(err)
	}
	return planExit(p.Fits, p.RolloutsProceed)
}

func writePlanJSON(w io.Writer, p any) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// planColumns are the table's and the markdown's columns.
var planColumns = []string{"POOL", "PODS", "GPUS", "NODES NEEDED", "NODES", "FITS", "IDLE GPUS", "ROLLOUT", "COST/MONTH", "MODELS"}

// planRows is one row per pool, as text.
func planRows(p *plan.Plan) [][]string {
	var rows [][]string
	for _, pool := range p.Pools {
		rows = append(rows, []string{
			pool.Name + gpuShape(pool),
			strconv.Itoa(int(pool.Pods)),
			strconv.FormatInt(pool.GPUsRequested, 10),
			optional(pool.NodesNeeded),
			available(pool),
			fits(pool),
			strconv.FormatInt(pool.IdleGPUs, 10),
			rollout(pool),
			cost(pool.CostPerMonth, p.Currency),
			models(pool.Models),
		})
	}
	return rows
}

// gpuShape is a GPU pool's node size; a pool whose GPUs are DRA devices
// says so, since its pods claim them rather than request them.
func gpuShape(p plan.Pool) string {
	switch {
	case p.GPUsPerNode == 0 && p.DeviceClassName != "":
		return " (DRA)"
	case p.GPUsPerNode == 0:
		return ""
	case p.DeviceClassName != "":
		return fmt.Sprintf(" (%d GPU/node, DRA)", p.GPUsPerNode)
	}
	return fmt.Sprintf(" (%d GPU/node)", p.GPUsPerNode)
}

func optional(v *int32) string {
	if v == nil {
		return "?"
	}
	return strconv.Itoa(int(*v))
}

func available(p plan.Pool) string {
	if p.Autoscaled {
		return fmt.Sprintf("%d-%d", *p.NodesMin, *p.NodesAvailable)
	}
	return optional(p.NodesAvailable)
}

func fits(p plan.Pool) string {
	switch {
	case p.PodsLargerThanANode > 0:
		return fmt.Sprintf("no: %d pod(s) larger than a node", p.PodsLargerThanANode)
	case p.NodesAvailable == nil || p.NodesNeeded == nil:
		return "unknown"
	case !p.Fits:
		return fmt.Sprintf("no: short %d node(s), %d pod(s) pending", p.ShortNodes, p.PendingPods)
	case !p.Rollout.Proceeds:
		return fmt.Sprintf("no: a rolling update stalls, short %d node(s)", p.Rollout.ShortNodes)
	case p.Autoscaled && *p.ShortNodesAtMin > 0:
		return fmt.Sprintf("yes (scales up %d node(s) from min)", *p.ShortNodesAtMin)
	}
	return "yes"
}

func rollout(p plan.Pool) string {
	if p.Rollout.Pods == 0 {
		return "-"
	}
	s := fmt.Sprintf("+%d pod(s), +%d GPU(s), +%d node(s)", p.Rollout.Pods, p.Rollout.GPUs, p.Rollout.Nodes)
	switch {
	case !p.Rollout.Proceeds:
		s += fmt.Sprintf(" (stalls: short %d node(s))", p.Rollout.ShortNodes)
	case !p.Rollout.Fits:
		s += " (over capacity: replaces pods in place)"
	}
	return s
}

func cost(v *float64, currency string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%s %s", strconv.FormatFloat(*v, 'f', 2, 64), currency)
}

func models(ms []plan.Model) string {
	var out []string
	for _, m := range ms {
		if m.GPUs > 0 {
			out = append(out, fmt.Sprintf("%s/%s (%d GPU)", m.Namespace, m.Name, m.GPUs))
		} else {
			out = append(out, fmt.Sprintf("%s/%s (%d pod)", m.Namespace, m.Name, m.Pods))
		}
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}

// planWarnings are the plan's own warnings: pods that select no pool and
// request no GPUs, planned on a GPU pool. They are printed with the plan,
// not on stderr, since the plan (a pull-request comment) is what its
// readers see; `--ignore-warnings` and `--warnings-as-errors` apply as to
// the renderer's warnings.
func planWarnings(p *plan.Plan) diag.List {
	var l diag.List
	for _, g := range p.Floating {
		if !g.CPUOnGPUPool {
			continue
		}
		l = append(l, diag.Problem{
			Severity: diag.Warning, Code: diag.CPUOnGPUPool,
			Resource: diag.Resource{Kind: hub.KindModelDeployment, Namespace: g.Namespace, Name: g.Model},
			Message: fmt.Sprintf("%d pod(s) of %s request no GPUs and select no pool: planned on GPU pool %q, as no pool without GPUs takes them; add one to the capability file (`spec.nodePools`) to keep them off GPU nodes",
				g.Pods, groupName(g), g.Pool),
		})
	}
	return l
}

// groupName is a pod group's object, and its component when it has one.
func groupName(g plan.Group) string {
	if g.Component == "" {
		return g.Object
	}
	return g.Object + " " + g.Component
}

// planSummary is the plan's last lines: the total, what is unplaced, the
// plan's warnings, the notes.
func planSummary(p *plan.Plan, warnings diag.List) []string {
	var out []string
	verdict := "every pool holds its pods"
	switch {
	case !p.Fits:
		verdict = "does NOT fit"
	case !p.RolloutsProceed:
		verdict = "every pool holds its pods but NOT their rolling update: the next rollout would stall with its new pods Pending (ROLLOUT)"
	}
	line := "Plan: " + verdict
	if p.CostPerMonth != nil {
		line += "; nodes in use cost " + cost(p.CostPerMonth, p.Currency) + " a month"
	}
	out = append(out, line+".")
	for _, g := range p.Unplaced {
		out = append(out, fmt.Sprintf("Unplaced: %d pod(s) of %s (model %s/%s): %s", g.Pods, groupName(g), g.Namespace, g.Model, g.Reason))
	}
	for _, w := range warnings {
		out = append(out, w.String())
	}
	for _, n := range p.Notes {
		out = append(out, "Note: "+n)
	}
	return out
}

func writePlanTable(w io.Writer, p *plan.Plan, warnings diag.List) error {
	return writeTables(w, []table{{columns: planColumns, rows: planRows(p)}, {title: memoryTitle, columns: memoryColumns, rows: memoryRows(p.Memory)}},
		strings.Join(planSummary(p, warnings), "\n"))
}

// table is one table of a command's output; a titled one is left out when
// it has no rows.
type table struct {
	title   string
	columns []string
	rows    [][]string
}

// writeTables prints each table (after the first: a blank line and its
// title), then a blank line and the summary.
func writeTables(w io.Writer, tables []table, summary string) error {
	for i, t := range tables {
		if i > 0 {
			if len(t.rows) == 0 {
				continue
			}
			if _, err := fmt.Fprintf(w, "\n%s:\n", t.title); err != nil {
				return err
			}
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(t.columns, "\t"))
		for _, r := range t.rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", summary)
	return err
}

// markdownTables is each table as Markdown, a titled one after a bold
// title line (left out without rows).
func markdownTables(tables []table) string {
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			if len(t.rows) == 0 {
				continue
			}
			b.WriteString("\n**" + t.title + "**\n\n")
		}
		b.WriteString(markdownTable(t.columns, t.rows))
	}
	return b.String()
}

func writePlanMarkdown(w io.Writer, p *plan.Plan, warnings diag.List) error {
	tables := []table{{columns: planColumns, rows: planRows(p)}, {title: memoryTitle, columns: memoryColumns, rows: memoryRows(p.Memory)}}
	_, err := io.WriteString(w, markdownTables(tables)+"\n"+strings.Join(planSummary(p, warnings), "\n\n")+"\n")
	return err
}

// markdownTable is rows under columns as a Markdown table.
func markdownTable(columns []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(columns, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(columns)) + "|\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}
