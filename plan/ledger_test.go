package plan

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/benchdata"
	"github.com/airunway-render/airunway-render/render"
)

// TestLedgerWeighsAsComputeDoes: a ledger kept model by model, each model
// weighed against a copy with its entries added, plans what Compute plans
// from every group at once, at every step and in any order of the models:
// the fleet's incremental ledgers decide as planning each cluster from
// scratch would.
func TestLedgerWeighsAsComputeDoes(t *testing.T) {
	files := map[string]string{
		// Every provider; GPU pools without capacity, and a CPU pool of
		// unknown size.
		"bench": strings.ReplaceAll(benchdata.Capabilities, "      perNode: 8\n", "      perNode: 8\n    nodes: {count: 6}\n    pricePerNodeHour: {amount: 98.32, currency: USD}\n"),
		// Every node size known, an autoscaled pool, a CPU pool that fills.
		"sized": strings.NewReplacer(
			"      perNode: 8\n", "      perNode: 8\n    capacity: {cpu: \"94\", memory: 1800Gi}\n    nodes: {min: 1, max: 5}\n    pricePerNodeHour: {amount: 98.32, currency: USD}\n",
			"      perNode: 1\n", "      perNode: 1\n    capacity: {cpu: 15890m, memory: 58Gi}\n    nodes: {count: 9}\n",
			"      kubernetes.io/os: linux\n", "      kubernetes.io/os: linux\n    capacity: {cpu: \"4\", memory: 16Gi}\n    nodes: {count: 2}\n").Replace(benchdata.Capabilities),
		// No CPU pool: a KubeRay head or a Dynamo frontend floats onto a
		// GPU pool, or finds none (their taint).
		"no CPU pool": strings.NewReplacer(
			"  - name: cpu\n    selector:\n      kubernetes.io/os: linux\n", "",
			"    taints:\n    - key: nvidia.com/gpu\n      value: present\n      effect: NoSchedule\n    gpu:\n      resourceName: nvidia.com/gpu\n      product: NVIDIA-L4", "    gpu:\n      resourceName: nvidia.com/gpu\n      product: NVIDIA-L4",
			"      perNode: 1\n", "      perNode: 1\n    capacity: {cpu: 15890m, memory: 58Gi}\n    nodes: {count: 3}\n").Replace(benchdata.Capabilities),
		// No CPU pool, and an untainted GPU pool of unknown size: the CPU
		// pods float onto it, all of them (fixed floating groups).
		"unsized GPU pool takes CPU pods": strings.NewReplacer(
			"  - name: cpu\n    selector:\n      kubernetes.io/os: linux\n", "",
			"    taints:\n    - key: nvidia.com/gpu\n      value: present\n      effect: NoSchedule\n    gpu:\n      resourceName: nvidia.com/gpu\n      product: NVIDIA-L4", "    gpu:\n      resourceName: nvidia.com/gpu\n      product: NVIDIA-L4").Replace(benchdata.Capabilities),
	}
	for _, f := range []string{"../examples/capabilities/prod-eastus.yaml", "../examples/capabilities/dra-h100.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	// The cases must reach what is hard to get right: floating pods, pods
	// no pool takes, pools that run out.
	var floated, fixed, stranded, short int
	defer func() {
		if !t.Failed() && (floated == 0 || fixed == 0 || stranded == 0 || short == 0) {
			t.Errorf("the plans compared had %d floating groups (%d fixed), %d unplaced, %d short pools: a case lost its point", floated, fixed, stranded, short)
		}
	}()
	models, err := kio.FromBytes(benchdata.Models(60))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		t.Run(name, func(t *testing.T) {
			node, err := yaml.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			caps, problems := capabilities.ResolveNode(node)
			if problems.HasErrors() {
				t.Fatal(problems)
			}
			var perModel [][]Group
			for _, m := range models {
				res := render.Render([]*yaml.RNode{m.Copy()}, render.Options{Capabilities: caps})
				if res.Problems.HasErrors() {
					continue // the provider or the pool is not there
				}
				gs, _, err := podGroups(res.Items)
				if err != nil {
					t.Fatal(err)
				}
				perModel = append(perModel, gs)
			}
			if len(perModel) < 10 {
				t.Fatalf("only %d of the models render for %s", len(perModel), name)
			}
			r := rand.New(rand.NewPCG(51, uint64(len(name))))
			for round := range 3 {
				r.Shuffle(len(perModel), func(i, j int) { perModel[i], perModel[j] = perModel[j], perModel[i] })
				l := newLedger(caps, true)
				var all []Group
				for i, gs := range perModel {
					entries := make([]entry, len(gs))
					for j, g := range gs {
						entries[j] = l.sort(g)
						if entries[j].fixed {
							fixed++
						}
					}
					all = append(all, gs...)
					want := computeGroups(all, nil, caps)
					if err := podsKept(all, want); err != nil {
						t.Fatalf("round %d, model %d: %v", round, i, err)
					}
					if got := l.with(entries).plan(nil, true); !reflect.DeepEqual(got, want) {
						t.Fatalf("round %d, model %d: the ledger's full plan\n%s\nplanning from scratch:\n%s", round, i, dump(got), dump(want))
					}
					// A weighing plan decides alike; it lists no models, of
					// the floating groups only those placed by room, and it
					// leaves out the rollouts and the pods without a node.
					got := l.with(entries).plan(nil, false)
					got.Floating = want.Floating
					want.RolloutsProceed = true
					for k, pool := range want.Pools {
						want.Pools[k].Models = nil
						want.Pools[k].Rollout = Rollout{Pods: pool.Rollout.Pods, GPUs: pool.Rollout.GPUs, Fits: true, Proceeds: true}
						want.Pools[k].PendingPods = pool.PodsLargerThanANode
					}
					floated, stranded = floated+len(got.Floating), stranded+len(got.Unplaced)
					for _, p := range got.Pools {
						if p.ShortNodes > 0 {
							short++
						}
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("round %d, model %d: the ledger plans\n%s\nplanning from scratch:\n%s", round, i, dump(got), dump(want))
					}
					for _, e := range entries {
						l.add(e)
					}
					// Planning a copy leaves the kept ledger as it was.
					if first, second := l.copy().plan(nil, true), l.copy().plan(nil, true); !reflect.DeepEqual(first, second) {
						t.Fatalf("round %d, model %d: a plan of a copy changed the ledger:\n%s\nthen:\n%s", round, i, dump(first), dump(second))
					}
				}
			}
		})
	}
}

// podsKept: every pod of the groups is counted once, on a pool or
// unplaced, and every floating part is among its pool's models.
func podsKept(groups []Group, p *Plan) error {
	var in, out int32
	for _, g := range groups {
		in += g.Pods
	}
	for _, pool := range p.Pools {
		out += pool.Pods
	}
	for _, g := range p.Unplaced {
		out += g.Pods
	}
	if in != out {
		return fmt.Errorf("%d pods planned, %d on the pools or unplaced", in, out)
	}
	for _, part := range p.Floating {
		pool := p.Pools[slices.IndexFunc(p.Pools, func(pl Pool) bool { return pl.Name == part.Pool })]
		if !slices.ContainsFunc(pool.Models, func(m Model) bool { return m.Namespace == part.Namespace && m.Name == part.Model }) {
			return fmt.Errorf("floating %s of %s/%s is planned on pool %q, whose models do not list it", part.Object, part.Namespace, part.Model, part.Pool)
		}
	}
	return nil
}

func dump(p *Plan) string {
	return fmt.Sprintf("fits=%v rollouts=%v cost=%d\npools=%+v\nfloating=%+v\nunplaced=%+v", p.Fits, p.RolloutsProceed, p.costCents, p.Pools, p.Floating, p.Unplaced)
}
