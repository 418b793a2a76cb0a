package capabilities

import (
	"fmt"
	"testing"
)

// BenchmarkRuleCost measures what RunRuleCostLimit costs in time: one run
// of a rule that costs about an eighth of RuleCostLimit, evaluated on
// distinct inputs until the run's budget is spent. One op is one whole
// budget.
func BenchmarkRuleCost(b *testing.B) {
	for b.Loop() {
		resolved, rule := ruleOf(b, heavyRule)
		for i := 0; ; i++ {
			if _, err := resolved.Match(rule, map[string]any{"model": map[string]any{"id": fmt.Sprint(i)}}); err != nil {
				break
			}
		}
	}
}
