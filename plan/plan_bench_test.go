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

// BenchmarkFleetAssign is what `plan --fleet` adds to rendering: the
// assignment of n new models of the benchmarks' workload to c alike
// clusters (benchdata.FleetCluster: an H100 pool, priced a cent apart,
// and a CPU pool), each model weighed against every cluster's ledger of
// the models placed before it. Each model is rendered once, as RenderFleet
// renders it for clusters whose files render alike.
func BenchmarkFleetAssign(b *testing.B) {
	for _, size := range []struct{ models, clusters, nodes int }{{2000, 10, 200}, {10000, 20, 500}} {
		var clusters []plan.Cluster
		for i := range size.clusters {
			node, err := yaml.Parse(benchdata.FleetCluster(i, size.nodes))
			if err != nil {
				b.Fatal(err)
			}
			caps, problems := capabilities.ResolveNode(node)
			if problems.HasErrors() {
				b.Fatal(problems)
			}
			clusters = append(clusters, plan.Cluster{Caps: caps})
		}
		items, err := kio.FromBytes(benchdata.Models(size.models))
		if err != nil {
			b.Fatal(err)
		}
		var models []plan.Candidate
		for _, it := range items {
			m := plan.Candidate{Namespace: it.GetNamespace(), Name: it.GetName(), Items: map[string][]*yaml.RNode{}, Refused: map[string]string{}}
			res := render.Render([]*yaml.RNode{it}, render.Options{Capabilities: clusters[0].Caps, WeighUnassigned: true})
			for _, c := range clusters {
				if res.Problems.HasErrors() {
					m.Refused[c.Caps.Name] = res.Problems.Errors()[0].Message
					continue
				}
				m.Items[c.Caps.Name] = res.Items
			}
			models = append(models, m)
		}
		b.Run(fmt.Sprintf("models=%d/clusters=%d", size.models, size.clusters), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := plan.Assign(models, clusters)
				if err != nil || len(f.Models) != size.models {
					b.Fatalf("unexpected assignment: %v", err)
				}
			}
		})
	}
}
