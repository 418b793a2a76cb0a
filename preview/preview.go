package preview

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/version"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/objdiff"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// Side is one capability file's render of the same models.
type Side struct {
	// CapsFile names the capability file in messages.
	CapsFile string
	// Caps is the capability file; nil when it does not read (the render
	// reported it).
	Caps *capabilities.Resolved
	// Objects are the rendered objects a cluster receives.
	Objects []*yaml.RNode
	// Fits are the render's memory verdicts.
	Fits []fit.Verdict
	// Problems are the render's problems.
	Problems diag.List
}

// declares says the capability file lists the provider.
func (s Side) declares(provider string) bool {
	return s.Caps != nil && s.Caps.Provider(provider) != nil
}

// Findings are what the move from before to after does beyond the object
// differences (changes): the operators' upgrade notes, what the models'
// clients see, updates the cluster refuses or that restart pods, memory
// fits that change, and warnings the move brings.
func Findings(before, after Side, changes []objdiff.Change) []Finding {
	out := upgradeNotes(before, after)
	out = append(out, clientFindings(before, after)...)
	out = append(out, ObjectFindings(changes)...)
	out = append(out, FitFindings(before.Fits, after.Fits)...)
	return append(out, newWarnings(before.Problems, after.Problems)...)
}

// upgradeNotes reports what an operator upgrade does to the objects it
// already runs, beyond what the rendered objects show: facts of the
// operators' releases, which the providers that know them state
// (providers.UpgradeNoter).
func upgradeNotes(before, after Side) []Finding {
	if before.Caps == nil || after.Caps == nil {
		return nil
	}
	var out []Finding
	registry := builtin.ByName()
	for _, name := range slices.Sorted(maps.Keys(registry)) {
		noter, ok := registry[name].(providers.UpgradeNoter)
		b, a := releaseOf(before.Caps, name), releaseOf(after.Caps, name)
		if !ok || b == nil || a == nil {
			continue
		}
		for _, n := range noter.UpgradeNotes(b, a) {
			out = append(out, Finding{Breaking: n.Breaking, Message: n.Message})
		}
	}
	return out
}

// releaseOf is the provider's declared release; nil when the file does
// not declare the provider or names no release.
func releaseOf(caps *capabilities.Resolved, provider string) *version.Version {
	p := caps.Provider(provider)
	if p == nil {
		return nil
	}
	v, err := hub.ParseRelease(p.Version)
	if err != nil {
		return nil
	}
	return v
}
