package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/budget"
	"github.com/airunway-render/airunway-render/internal/objdiff"
	"github.com/airunway-render/airunway-render/internal/wording"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// `airunway-render preview` renders the same paths against two capability
// files, the cluster before and after an upgrade (an operator release, the
// Inference Extension's API version), and shows what changes per object.
// It flags what the cluster will not take as an update: a field the API
// server or the operator's webhook refuses to change, an object whose API
// group changes (deleted and created anew), and what restarts model servers.

type previewOptions struct {
	filenames []string
	from, to  string
	format    string
	exitCode  bool
	modelDirs []string
}

func newPreviewCommand(s streams) *cobra.Command {
	var o previewOptions
	cmd := &cobra.Command{
		Use:   "preview --from FILE --to FILE [--format text|markdown] [--exit-code] [-f FILE|DIR|-]... [PATH...]",
		Short: "Show what an upgrade of the cluster does to the rendered objects",
		Long: `Render PATHs for a cluster before and after an upgrade (two capability
files: an operator release, the InferencePool API version) and show the
difference per object, flagging what the cluster will not take in place
(BREAKING) and what restarts model servers. A PATH that holds a
kustomization (a cluster's overlay) is built first, as build builds it,
and its output rendered under each capability file.`,
		Example: `  airunway-render preview --from clusters/prod/capabilities.yaml --to upgrade/capabilities.yaml -f models/

  # as a pull-request comment, failing the job on a breaking change
  airunway-render preview --from caps.yaml --to next.yaml --format markdown --exit-code models/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.from == "" || o.to == "":
				return usagef("`--from` and `--to` must both name a capability file")
			case o.format != "text" && o.format != "markdown":
				return usagef("`--format` must be \"text\" or \"markdown\", got %q", o.format)
			}
			paths, err := inputPaths(o.filenames, args)
			if err != nil {
				return err
			}
			hintIfTerminal(s, cmd.CommandPath(), paths)
			return runPreview(o, paths, s)
		},
	}
	f := cmd.Flags()
	addFilenameFlag(cmd, &o.filenames, "YAML file or directory of models")
	f.StringVar(&o.from, "from", "", "ClusterCapabilities file of the cluster as it is")
	f.StringVar(&o.to, "to", "", "ClusterCapabilities file of the cluster after the upgrade")
	f.StringVar(&o.format, "format", "text", `output format: "text" or "markdown" (a pull-request comment)`)
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 2 when objects differ, 3 when a change is breaking")
	addModelDirFlag(cmd, &o.modelDirs)
	return cmd
}

func runPreview(o previewOptions, paths []string, s streams) error {
	models, err := readModelDirs(o.modelDirs)
	if err != nil {
		reportError(s.errOut, err)
		return exitCode(1)
	}
	var sides [2][]*yaml.RNode
	var warned [2]diag.List
	var fits [2][]fit.Verdict
	failed := false
	// Both sides render the same inputs, and stdin can be read only once.
	var stdin []byte
	if slices.Contains(paths, stdinName) {
		var err error
		stdin, err = budget.New().ReadAll(s.in)
		var exceeded *budget.Exceeded
		if errors.As(err, &exceeded) {
			diag.List{{Severity: diag.Error, File: stdinLabel, Message: exceededMessage(exceeded)}}.Report(s.errOut, "nothing was rendered")
			return exitCode(1)
		}
		if err != nil {
			reportError(s.errOut, fmt.Errorf("cannot read stdin: %w", err))
			return exitCode(1)
		}
	}
	// An overlay builds the same under either capability file: once.
	built, problems := buildOverlays(hostFiles{}, paths, hostDirs, s.errOut)
	if problems.HasErrors() {
		problems.Report(s.errOut, "nothing was rendered")
		return exitCode(1)
	}
	for i, caps := range []string{o.from, o.to} {
		src, closeScope, err := namedHostFiles(bytes.NewReader(stdin), slices.Concat(paths, []string{caps})...)
		if err != nil {
			reportError(s.errOut, err)
			return exitCode(1)
		}
		res, problems := renderFilesWith(withBuilt(src, built), caps, paths, nil, diag.Policy{}, models)
		objs := clusterObjects(res.Items)
		fits[i] = res.Fits
		closeScope()
		warned[i] = problems
		var shown bytes.Buffer // errors and warnings; info stays quiet
		problems.Report(&shown, "nothing was rendered")
		if shown.Len() > 0 {
			fmt.Fprintf(s.errOut, "with %s:\n%s", caps, shown.Bytes())
		}
		failed = failed || problems.HasErrors()
		sides[i] = objs
	}
	memory := fitFindings(fits[0], fits[1])
	if failed {
		// A model that stops fitting its GPUs fails the render after the
		// upgrade: the errors are on stderr, and the reviewer reads why
		// here.
		if !warned[0].HasErrors() && len(memory) > 0 {
			out := findingsText(memory)
			if o.format == "markdown" {
				out = findingsMarkdown(memory)
			}
			if _, err := io.WriteString(s.out, strings.TrimPrefix(out, "\n")); err != nil {
				return err
			}
		}
		return exitCode(1)
	}
	changes, err := objdiff.Compare(sides[0], sides[1])
	if err != nil {
		return err
	}
	res := &objdiff.Result{Old: o.from, New: o.to, Changes: changes, Command: "airunway-render preview"}
	findings := append(upgradeNotes(o.from, o.to), clientFindings(sides[0], sides[1], o.from, o.to)...)
	findings = append(findings, objectFindings(changes)...)
	findings = append(findings, memory...)
	findings = append(findings, newWarnings(warned[0], warned[1])...)
	out := res.Text() + findingsText(findings)
	if o.format == "markdown" {
		out = res.Markdown() + findingsMarkdown(findings)
	}
	if _, err := io.WriteString(s.out, out); err != nil {
		return err
	}
	switch {
	case !o.exitCode:
		return nil
	case slices.ContainsFunc(findings, func(f finding) bool { return f.breaking }):
		return exitCode(exitBreaking)
	case res.Differs():
		return exitCode(exitDifferent)
	}
	return nil
}

// finding is one thing a reviewer of the upgrade must know.
type finding struct {
	object   string // kind/namespace/name; "" for the cluster as a whole
	breaking bool   // the cluster refuses the update, or the object is recreated
	warning  bool   // a warning the upgrade brings, e.g. a field deprecated by the new release
	note     bool   // a model's memory fit changes, and it still fits
	message  string
}

// newWarnings lists the warnings rendering gives after the upgrade and not
// before: a release that deprecates a field the models set warns here, and
// the reviewer of a pull request reads it in the preview, not only in the
// job's log.
func newWarnings(before, after diag.List) []finding {
	seen := map[string]bool{}
	for _, p := range before {
		seen[p.String()] = true
	}
	var out []finding
	for _, p := range after.Sorted() {
		if p.Severity != diag.Warning || seen[p.String()] {
			continue
		}
		r := p.Resource
		r.APIVersion = ""
		msg := p.Message
		if p.Field != "" {
			msg = "`" + p.Field + "` " + msg
		}
		out = append(out, finding{object: r.String(), warning: true, message: msg})
	}
	return out
}

// kubernetesChangeRules are the rules of the Kubernetes kinds providers
// render; the rules of a provider's own kinds come from the provider
// (providers.ChangeRules). LeaderWorkerSet is an API of a Kubernetes SIG
// (leaderworkerset.x-k8s.io), read by package providers as Deployments are.
var kubernetesChangeRules = map[string]providers.KindChangeRules{
	"Deployment": {
		Immutable: []providers.ImmutableField{{Path: "spec.selector", Why: "a Deployment's selector is immutable"}},
		Restarts:  []string{"spec.template"},
	},
	"StatefulSet": {
		Immutable: []providers.ImmutableField{{Path: "spec.selector", Why: "a StatefulSet's selector is immutable"}, {Path: "spec.serviceName", Why: "a StatefulSet's serviceName is immutable"}, {Path: "spec.volumeClaimTemplates", Why: "a StatefulSet's volumeClaimTemplates are immutable"}},
		Restarts:  []string{"spec.template"},
	},
	"Job":                   {Immutable: []providers.ImmutableField{{Path: "spec.template", Why: "a Job's pod template is immutable"}, {Path: "spec.selector", Why: "a Job's selector is immutable"}}},
	"PersistentVolumeClaim": {Immutable: []providers.ImmutableField{{Path: "spec.accessModes", Why: "a bound claim's accessModes are immutable"}, {Path: "spec.storageClassName", Why: "a claim's storageClassName is immutable"}}},
	"Service":               {Immutable: []providers.ImmutableField{{Path: "spec.clusterIP", Why: "a Service's clusterIP is immutable"}}},
	"LeaderWorkerSet":       {Restarts: []string{"spec.leaderWorkerTemplate"}},
}

// changeRules are the rules per kind: Kubernetes' and those the built-in
// providers state of their own kinds.
func changeRules() map[string]providers.KindChangeRules {
	out := maps.Clone(kubernetesChangeRules)
	for _, p := range builtin.Providers() {
		if r, ok := p.(providers.ChangeRules); ok {
			maps.Copy(out, r.ChangeRules())
		}
	}
	return out
}

// objectFindings checks every changed object for immutable fields and pod
// restarts, and pairs removed and added objects that differ only in their
// API group: the new one is a different resource, so the old is deleted.
func objectFindings(changes []objdiff.Change) []finding {
	var out []finding
	rules := changeRules()
	for _, c := range changes {
		if c.Op != objdiff.Changed {
			continue
		}
		oldObj, newObj := yaml.MustParse(c.OldYAML), yaml.MustParse(c.NewYAML)
		before := len(out)
		kind := rules[c.Kind]
		for _, f := range kind.Immutable {
			before, after := fieldText(oldObj, f.Path), fieldText(newObj, f.Path)
			if before == after || (f.OnlyWhenSet && before == "") {
				continue
			}
			out = append(out, finding{object: c.ID(), breaking: true,
				message: fmt.Sprintf("`%s` changes, and %s: the update fails until the object is deleted and created again (delete it, or let your GitOps tool replace it)", f.Path, f.Why)})
		}
		if pair := kind.Exclusive; pair[0] != "" && switches(oldObj, newObj, pair) {
			out = append(out, finding{object: c.ID(), breaking: true,
				message: fmt.Sprintf("switches between `%s` and `%s`, which the operator refuses once either is set: the object must be deleted and created again", pair[0], pair[1])})
		}
		if len(out) > before {
			continue // recreated anyway: its restart says nothing more
		}
		for _, p := range kind.Restarts {
			if fieldText(oldObj, p) != fieldText(newObj, p) {
				out = append(out, finding{object: c.ID(), message: fmt.Sprintf("`%s` changes: its pods are replaced (a model server loads its model again)", p)})
				break
			}
		}
	}
	removed := map[string]objdiff.Change{}
	for _, c := range changes {
		if c.Op == objdiff.Removed {
			removed[c.Kind+"/"+c.Namespace+"/"+c.Name] = c
		}
	}
	for _, c := range changes {
		old, ok := removed[c.Kind+"/"+c.Namespace+"/"+c.Name]
		if c.Op != objdiff.Added || !ok || group(old.APIVersion) == group(c.APIVersion) {
			continue
		}
		out = append(out, finding{object: c.ID(), breaking: true,
			message: fmt.Sprintf("moves from %s to %s, a different API group: the %s is deleted and created anew, and what routes to it switches over (apply the new one before pruning the old)", old.APIVersion, c.APIVersion, c.Kind)})
	}
	return out
}

// switches reports an object that had one of the pair and has only the
// other now.
func switches(oldObj, newObj *yaml.RNode, pair [2]string) bool {
	has := func(o *yaml.RNode, f string) bool { return fieldText(o, f) != "" }
	return (has(oldObj, pair[0]) && !has(newObj, pair[0]) && has(newObj, pair[1])) ||
		(has(oldObj, pair[1]) && !has(newObj, pair[1]) && has(newObj, pair[0]))
}

func group(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// fieldText is the YAML of the field at a dotted path, "" when absent.
func fieldText(obj *yaml.RNode, path string) string {
	n, err := obj.Pipe(yaml.Lookup(strings.Split(path, ".")...))
	if err != nil || n == nil {
		return ""
	}
	return n.MustString()
}

// upgradeNotes reports what an operator upgrade does to the objects it
// already runs, beyond what the rendered objects show: facts of the
// operators' releases, which the providers that know them state
// (providers.UpgradeNoter).
func upgradeNotes(from, to string) []finding {
	before, err1 := providerVersions(from)
	after, err2 := providerVersions(to)
	if err1 != nil || err2 != nil {
		return nil // the render already reported the file
	}
	var out []finding
	registry := builtin.ByName()
	for _, name := range slices.Sorted(maps.Keys(registry)) {
		noter, ok := registry[name].(providers.UpgradeNoter)
		b, a := before[name], after[name]
		if !ok || b == nil || a == nil {
			continue
		}
		for _, n := range noter.UpgradeNotes(b, a) {
			out = append(out, finding{breaking: n.Breaking, message: n.Message})
		}
	}
	return out
}

// providerVersions reads the declared release of each provider.
func providerVersions(capsFile string) (map[string]*version.Version, error) {
	caps, l := readCapabilities(hostFiles{}, capsFile)
	if l.HasErrors() {
		return nil, errors.New(l.Sorted()[0].Message)
	}
	out := map[string]*version.Version{}
	for _, p := range caps.Providers {
		if v, err := hub.ParseRelease(p.Version); err == nil {
			out[p.Name] = v
		}
	}
	return out, nil
}

func findingsText(fs []finding) string {
	changes, notes, warnings := splitFindings(fs)
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("No breaking change and no restart.\n")
	} else {
		b.WriteString("\n")
	}
	for _, f := range changes {
		b.WriteString(findingLine(f, f.object) + "\n")
	}
	for _, group := range [][]finding{notes, warnings} {
		if len(group) > 0 {
			b.WriteString("\n")
		}
		for _, f := range group {
			b.WriteString(findingLine(f, f.object) + "\n")
		}
	}
	return b.String()
}

// splitFindings separates what the cluster will not take in place from
// the memory fits that change and the new warnings.
func splitFindings(fs []finding) (changes, notes, warnings []finding) {
	for _, f := range fs {
		switch {
		case f.warning:
			warnings = append(warnings, f)
		case f.note:
			notes = append(notes, f)
		default:
			changes = append(changes, f)
		}
	}
	return changes, notes, warnings
}

func findingLine(f finding, object string) string {
	word := "restart"
	switch {
	case f.breaking:
		word = "BREAKING"
	case f.warning:
		word = "warning"
	case f.note:
		word = "note"
	}
	if object == "" {
		return word + ": " + f.message
	}
	return word + ": " + object + ": " + f.message
}

func findingsMarkdown(fs []finding) string {
	changes, notes, warnings := splitFindings(fs)
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("\nNo breaking change and no restart.\n")
	} else {
		b.WriteString("\n#### What the cluster will not take in place\n\n")
		writeFindingsMarkdown(&b, changes)
	}
	if len(notes) > 0 {
		b.WriteString("\n#### Memory fit per replica\n\n")
		writeFindingsMarkdown(&b, notes)
	}
	if len(warnings) > 0 {
		b.WriteString("\n#### New warnings\n\n")
		writeFindingsMarkdown(&b, warnings)
	}
	return b.String()
}

func writeFindingsMarkdown(b *strings.Builder, fs []finding) {
	for _, f := range fs {
		obj := ""
		if f.object != "" {
			obj = objdiff.Code(f.object)
		}
		b.WriteString("- " + findingLine(f, obj) + "\n")
	}
}

// fitFindings says, per model component, how the upgrade changes its
// memory fit (render/fit.go's verdicts): one that fitted and does not any
// more is breaking (the render fails after the upgrade; the model server
// would not start); any other change of what one replica needs or gets is
// a note, a tighter fit or more headroom.
func fitFindings(before, after []fit.Verdict) []finding {
	type key = [3]string
	old := map[key]fit.Verdict{}
	for _, v := range before {
		old[key{v.Namespace, v.Name, v.Component}] = v
	}
	var out []finding
	for _, a := range after {
		b, ok := old[key{a.Namespace, a.Name, a.Component}]
		if !ok || !b.Checked() || !a.Checked() || b.NeededMiB == a.NeededMiB && b.AvailableMiB == a.AvailableMiB && b.Status == a.Status && b.KVCacheTokens == a.KVCacheTokens {
			continue
		}
		what := "one replica"
		if a.Component != "" {
			what = "one " + a.Component + " replica"
		}
		where := fmt.Sprintf("%s of pool %q", wording.Count(a.GPUs, "GPU"), a.Pool)
		if a.Pool != b.Pool || a.GPUs != b.GPUs {
			where = fmt.Sprintf("%s of pool %q → %s of pool %q", wording.Count(b.GPUs, "GPU"), b.Pool, wording.Count(a.GPUs, "GPU"), a.Pool)
		}
		kv := ""
		// Both sides' vLLM arithmetic: another engine's estimate (KAITO's
		// preset, after a provider switch) gives no KV cache to compare.
		if a.Engine != "" && b.Engine != "" && (a.KVCacheTokens > 0 || b.KVCacheTokens > 0) {
			kv = fmt.Sprintf("; its KV cache holds %s tokens (%s requests of %s tokens at once)", change(b.KVCacheTokens, a.KVCacheTokens, ""),
				changeFloat(b.MaxConcurrency, a.MaxConcurrency), wording.Thousands(int64(a.ContextLength)))
		}
		msg := fmt.Sprintf("%s of %s on %s needs %s and gets %s MiB (headroom %d%% → %d%%, model facts from the %s)%s",
			what, a.ModelID, where, change(b.NeededMiB, a.NeededMiB, " MiB"), change(b.AvailableMiB, a.AvailableMiB, ""), b.HeadroomPercent(), a.HeadroomPercent(), a.Source, kv)
		f := finding{object: diag.Resource{Kind: hub.KindModelDeployment, Namespace: a.Namespace, Name: a.Name}.String()}
		switch {
		case a.Status == fit.StatusDoesNotFit && b.Status != fit.StatusDoesNotFit:
			f.breaking, f.message = true, "does not fit its GPUs after the upgrade: "+msg
		case a.HeadroomPercent() < b.HeadroomPercent() || fitRank(a.Status) > fitRank(b.Status) || kv != "" && a.KVCacheTokens < b.KVCacheTokens:
			f.note, f.message = true, fmt.Sprintf("a tighter fit (%s → %s): %s", b.Status, a.Status, msg)
		default:
			f.note, f.message = true, fmt.Sprintf("more headroom (%s → %s): %s", b.Status, a.Status, msg)
		}
		out = append(out, f)
	}
	return out
}

// changeFloat is "15.49 → 1.04", or the one figure when it did not
// change.
func changeFloat(before, after float64) string {
	if before == after {
		return strconv.FormatFloat(after, 'f', 2, 64)
	}
	return strconv.FormatFloat(before, 'f', 2, 64) + " → " + strconv.FormatFloat(after, 'f', 2, 64)
}

func fitRank(s fit.Status) int {
	return map[fit.Status]int{fit.StatusFits: 0, fit.StatusTight: 1, fit.StatusShortContext: 2, fit.StatusDoesNotFit: 3}[s]
}

// change is "73,728" or "73,728 → 7,020", with unit after each figure.
func change(before, after int64, unit string) string {
	if before == after {
		return wording.Thousands(after) + unit
	}
	return wording.Thousands(before) + unit + " → " + wording.Thousands(after) + unit
}
