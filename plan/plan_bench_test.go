package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/benchdata"
	"github.com/airunway-render/airunway-render/plan"
	"github.com/airunway-render/airunway-render/render"
)

// BenchmarkPlan sets what the plan costs beside what rendering costs, on
// the benchmarks' workload (every provider, three pools, the pools sized
// and priced here): render/ is render.Render alone, plan/ is plan.Compute
// over its output, which `airunway-render plan` adds to a render.
func BenchmarkPlan(b *testing.B) {
	sized := strings.ReplaceAll(benchdata.Capabilities, "      perNode: 8\n", "      perNode: 8\n    nodes: {count: 400}\n    pricePerNodeHour: {amount: 98.32, currency: USD}\n")
	sized = strings.ReplaceAll(sized, "      perNode: 1\n", "      perNode: 1\n    nodes: {count: 400}\n    pricePerNodeHour: {amount: 0.8, currency: USD}\n")
	node, err := yaml.Parse(sized)
	if err != nil {
		b.Fatal(err)
	}
	caps, problems := capabilities.ResolveNode(node)
	if problems.HasErrors() {
		b.Fatal(problems)
	}
	for _, n := range []int{100, 1000} {
		items, err := kio.FromBytes(benchdata.Models(n))
		if err != nil {
			b.Fatal(err)
		}
		res := render.Render(items, render.Options{Capabilities: caps})
		if res.Problems.HasErrors() {
			b.Fatal(res.Problems)
		}
		b.Run(fmt.Sprintf("render/models=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				render.Render(items, render.Options{Capabilities: caps})
			}
		})
		b.Run(fmt.Sprintf("plan/models=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := plan.Compute(res.Items, caps)
				if err != nil || len(p.Pools) != 3 {
					b.Fatalf("unexpected plan: %v", err)
				}
			}
		})
	}
}
