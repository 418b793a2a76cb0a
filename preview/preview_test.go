package preview

import (
	"testing"

	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// TestProviderChangeRulesShadowNothing: the rules are merged by kind, so a
// provider naming a Kubernetes kind or another provider's kind would
// silently replace that kind's rules.
func TestProviderChangeRulesShadowNothing(t *testing.T) {
	stated := map[string]string{}
	for kind := range kubernetesChangeRules {
		stated[kind] = "package preview (Kubernetes)"
	}
	for _, p := range builtin.Providers() {
		r, ok := p.(providers.ChangeRules)
		if !ok {
			continue
		}
		for kind := range r.ChangeRules() {
			if by, dup := stated[kind]; dup {
				t.Errorf("%s states change rules of %s, which %s already states", p.Name(), kind, by)
			}
			stated[kind] = p.Name()
		}
	}
}
