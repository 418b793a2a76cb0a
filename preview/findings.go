package preview

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/objdiff"
	"github.com/airunway-render/airunway-render/internal/wording"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// Finding is one thing a reviewer of the upgrade must know.
type Finding struct {
	Object   string // kind/namespace/name; "" for the cluster as a whole
	Breaking bool   // the cluster refuses the update, or the object is recreated
	Warning  bool   // a warning the upgrade brings, e.g. a field deprecated by the new release
	Note     bool   // a model's memory fit changes, and it still fits
	Message  string
}

// newWarnings lists the warnings rendering gives after the upgrade and not
// before: a release that deprecates a field the models set warns here, and
// the reviewer of a pull request reads it in the preview, not only in the
// job's log.
func newWarnings(before, after diag.List) []Finding {
	seen := map[string]bool{}
	for _, p := range before {
		seen[p.String()] = true
	}
	var out []Finding
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
		out = append(out, Finding{Object: r.String(), Warning: true, Message: msg})
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

// ChangeRules are the rules per kind: Kubernetes' and those the built-in
// providers state of their own kinds.
func ChangeRules() map[string]providers.KindChangeRules {
	out := maps.Clone(kubernetesChangeRules)
	for _, p := range builtin.Providers() {
		if r, ok := p.(providers.ChangeRules); ok {
			maps.Copy(out, r.ChangeRules())
		}
	}
	return out
}

// ObjectFindings checks every changed object for immutable fields and pod
// restarts, and pairs removed and added objects that differ only in their
// API group: the new one is a different resource, so the old is deleted.
func ObjectFindings(changes []objdiff.Change) []Finding {
	var out []Finding
	rules := ChangeRules()
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
			out = append(out, Finding{Object: c.ID(), Breaking: true,
				Message: fmt.Sprintf("`%s` changes, and %s: the update fails until the object is deleted and created again (delete it, or let your GitOps tool replace it)", f.Path, f.Why)})
		}
		if pair := kind.Exclusive; pair[0] != "" && switches(oldObj, newObj, pair) {
			out = append(out, Finding{Object: c.ID(), Breaking: true,
				Message: fmt.Sprintf("switches between `%s` and `%s`, which the operator refuses once either is set: the object must be deleted and created again", pair[0], pair[1])})
		}
		if len(out) > before {
			continue // recreated anyway: its restart says nothing more
		}
		for _, f := range kind.NotRolledOut {
			if fieldText(oldObj, f.Path) != fieldText(newObj, f.Path) {
				out = append(out, Finding{Object: c.ID(), Warning: true, Message: fmt.Sprintf("`%s` changes, but %s", f.Path, f.Why)})
			}
		}
		for _, p := range kind.Restarts {
			if fieldText(oldObj, p) != fieldText(newObj, p) {
				out = append(out, Finding{Object: c.ID(), Message: fmt.Sprintf("`%s` changes: its pods are replaced (a model server loads its model again)", p)})
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
		out = append(out, Finding{Object: c.ID(), Breaking: true,
			Message: fmt.Sprintf("moves from %s to %s, a different API group: the %s is deleted and created anew, and what routes to it switches over (apply the new one before pruning the old)", old.APIVersion, c.APIVersion, c.Kind)})
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

// FitFindings says, per model component, how the upgrade changes its
// memory fit (render/fit.go's verdicts): one that fitted and does not any
// more is breaking (the render fails after the upgrade; the model server
// would not start); any other change of what one replica needs or gets is
// a note, a tighter fit or more headroom.
func FitFindings(before, after []fit.Verdict) []Finding {
	type key struct{ namespace, name, component string }
	old := map[key]fit.Verdict{}
	for _, v := range before {
		old[key{v.Namespace, v.Name, v.Component}] = v
	}
	var out []Finding
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
		f := Finding{Object: diag.Resource{Kind: hub.KindModelDeployment, Namespace: a.Namespace, Name: a.Name}.String()}
		switch {
		case a.Status == fit.StatusDoesNotFit && b.Status != fit.StatusDoesNotFit:
			f.Breaking, f.Message = true, "does not fit its GPUs after the upgrade: "+msg
		case a.HeadroomPercent() < b.HeadroomPercent() || fitRank(a.Status) > fitRank(b.Status) || kv != "" && a.KVCacheTokens < b.KVCacheTokens:
			f.Note, f.Message = true, fmt.Sprintf("a tighter fit (%s → %s): %s", b.Status, a.Status, msg)
		default:
			f.Note, f.Message = true, fmt.Sprintf("more headroom (%s → %s): %s", b.Status, a.Status, msg)
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
