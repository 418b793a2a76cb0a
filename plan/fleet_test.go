package plan_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/plan"
	"github.com/airunway-render/airunway-render/render"
)

// fleetCluster is a vllm cluster with one pool of nodes × gpus, priced
// at price an hour in currency ("" for no price).
func fleetCluster(t *testing.T, name, labelText string, nodes, gpus int, price float64, currency string) plan.Cluster {
	t.Helper()
	priced := ""
	if currency != "" {
		priced = fmt.Sprintf("\n    pricePerNodeHour: {amount: %v, currency: %s}", price, currency)
	}
	doc := fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: %s, labels: {%s}}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: gpu
    selector: {pool: gpu}
    gpu: {perNode: %d, memoryMiB: 81559}
    nodes: {count: %d}%s
`, name, labelText, gpus, nodes, priced)
	caps, problems := capabilities.ResolveNode(yaml.MustParse(doc))
	require.False(t, problems.HasErrors(), "%v", problems)
	return plan.Cluster{Caps: caps}
}

// candidate renders a vllm model of replicas × gpus for every cluster.
func candidate(t *testing.T, name string, replicas, gpus int, selector string, clusters ...plan.Cluster) plan.Candidate {
	t.Helper()
	c := plan.Candidate{Namespace: "ml", Name: name, Items: map[string][]*yaml.RNode{}, Refused: map[string]string{}}
	if selector != "" {
		sel, err := labels.Parse(selector)
		require.NoError(t, err)
		c.Selector = sel
	}
	model := fmt.Sprintf("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: %s, namespace: ml}\nspec: {model: {id: Qwen/Qwen3-0.6B}, engine: {type: vllm, contextLength: 4096}, scaling: {replicas: %d}, resources: {gpu: {count: %d}}}\n", name, replicas, gpus)
	for _, cl := range clusters {
		res := render.Render([]*yaml.RNode{yaml.MustParse(model)}, render.Options{Capabilities: cl.Caps})
		if res.Problems.HasErrors() {
			c.Refused[cl.Caps.Name] = res.Problems.Errors()[0].Message
			continue
		}
		c.Items[cl.Caps.Name] = res.Items
	}
	return c
}

func assigned(f *plan.Fleet) map[string]string {
	out := map[string]string{}
	for _, m := range f.Models {
		out[m.Name] = m.Cluster
	}
	return out
}

// Two clusters alike in cost and room: the first by name, whatever order
// they come in. The second model then costs nothing more beside the
// first, so it joins it.
func TestAssignTiesByName(t *testing.T) {
	b := fleetCluster(t, "b", "", 2, 2, 3, "USD")
	a := fleetCluster(t, "a", "", 2, 2, 3, "USD")
	f, err := plan.Assign([]plan.Candidate{candidate(t, "m1", 1, 1, "", b, a), candidate(t, "m2", 1, 1, "", b, a)}, []plan.Cluster{b, a})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"m1": "a", "m2": "a"}, assigned(f))
	for _, m := range f.Models {
		require.Len(t, m.Verdicts, 2)
	}
}

// Without prices, the cluster with the most GPUs left free; the plan
// notes nothing was compared by cost only when some cluster has prices.
func TestAssignByFreeGPUsWithoutPrices(t *testing.T) {
	small := fleetCluster(t, "a-small", "", 1, 2, 0, "")
	large := fleetCluster(t, "b-large", "", 2, 2, 0, "")
	f, err := plan.Assign([]plan.Candidate{candidate(t, "m", 1, 1, "", small, large)}, []plan.Cluster{small, large})
	require.NoError(t, err)
	require.Equal(t, "b-large", assigned(f)["m"])
	require.Empty(t, f.Notes)

	priced := fleetCluster(t, "c-priced", "", 1, 2, 5, "USD")
	f, err = plan.Assign([]plan.Candidate{candidate(t, "m", 1, 1, "", small, priced)}, []plan.Cluster{small, priced})
	require.NoError(t, err)
	require.Equal(t, []string{`cluster(s) "a-small" price no pool (` + "`pricePerNodeHour`" + `): a model that fits one of them is placed by free GPUs, not cost`}, f.Notes)
}

// A model that can run on one cluster only is placed before one that
// can run anywhere, though its name comes later: in name order the
// latter would take the only room the former has.
func TestAssignMostConstrainedFirst(t *testing.T) {
	a := fleetCluster(t, "a", "zone: x", 1, 2, 1, "USD")
	b := fleetCluster(t, "b", "zone: y", 1, 2, 1, "USD")
	models := []plan.Candidate{candidate(t, "anywhere", 1, 2, "", a, b), candidate(t, "only-x", 1, 2, "zone=x", a, b)}
	f, err := plan.Assign(models, []plan.Cluster{a, b})
	require.NoError(t, err)
	require.True(t, f.Fits)
	require.Equal(t, map[string]string{"anywhere": "b", "only-x": "a"}, assigned(f))
}

// Prices in two currencies cannot be compared: an error, not a guess.
func TestAssignRefusesTwoCurrencies(t *testing.T) {
	a := fleetCluster(t, "a", "", 1, 2, 1, "USD")
	b := fleetCluster(t, "b", "", 1, 2, 1, "EUR")
	_, err := plan.Assign([]plan.Candidate{candidate(t, "m", 1, 1, "", a, b)}, []plan.Cluster{a, b})
	require.EqualError(t, err, "the fleet's pools are priced in EUR (cluster \"b\") and USD (cluster \"a\"): `pricePerNodeHour` must use one currency across the fleet for the plan to compare cost")
}

// What a change moves: a model moved, one added, one removed.
func TestCompareFleets(t *testing.T) {
	a := fleetCluster(t, "a", "", 2, 2, 1, "USD")
	b := fleetCluster(t, "b", "", 2, 2, 1, "USD")
	before, err := plan.Assign([]plan.Candidate{candidate(t, "stay", 1, 1, "", a, b), candidate(t, "move", 1, 1, "", a, b), candidate(t, "gone", 1, 1, "", a, b)}, []plan.Cluster{a, b})
	require.NoError(t, err)
	// As after --write: the models of the base are assigned where the
	// base's plan put them, and the change moves one by hand.
	kept := func(name, cluster string) plan.Candidate {
		c := candidate(t, name, 1, 1, "", a, b)
		c.Assigned = cluster
		return c
	}
	where := assigned(before)
	after, err := plan.Assign([]plan.Candidate{kept("stay", where["stay"]), kept("move", "b"), candidate(t, "new", 1, 1, "", a, b)}, []plan.Cluster{a, b})
	require.NoError(t, err)
	d := plan.CompareFleets(before, after)
	var changes []string
	for _, m := range d.Models {
		changes = append(changes, m.Name+": "+m.Before+" → "+m.After+" "+m.Change)
	}
	require.Equal(t, map[string]string{"gone": "a", "move": "a", "stay": "b"}, where, "stay's one GPU would open a second node on a: as costly as one on b, which leaves more GPUs free")
	require.Equal(t, []string{"gone: a →  removed", "move: a → b moved", "new:  → a added"}, changes, "a model that stays is not listed; b's node is full, and a leaves more GPUs free")
	require.Equal(t, 1, d.Moved)
	require.Equal(t, 1, d.Added)
	require.Equal(t, 1, d.Removed)
}

// A KAITO preset's pods take whole nodes, so the same model asks for 8
// GPUs on a cluster of 8-GPU nodes and 1 on one of 1-GPU nodes: the fleet
// reports the GPUs of the cluster it runs in, not the most of any.
func TestFleetGPUsAreTheAssignedCluster(t *testing.T) {
	kaitoCluster := func(name string, perNode int) plan.Cluster {
		doc := fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: %s}
spec:
  providers: [{name: kaito, version: "0.10.0"}]
  nodePools:
  - name: gpu
    selector: {pool: gpu}
    gpu: {perNode: %d}
    nodes: {count: 2}
`, name, perNode)
		caps, problems := capabilities.ResolveNode(yaml.MustParse(doc))
		require.False(t, problems.HasErrors(), "%v", problems)
		return plan.Cluster{Caps: caps}
	}
	big, small := kaitoCluster("big", 8), kaitoCluster("small", 1)
	model := "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: ws, namespace: ml, annotations: {airunway.ai/cluster: small}}\nspec: {model: {id: Qwen/Qwen3-0.6B}, provider: {name: kaito}, engine: {type: vllm}, resources: {gpu: {count: 1}}}\n"
	c := plan.Candidate{Namespace: "ml", Name: "ws", Assigned: "small", Items: map[string][]*yaml.RNode{}, Refused: map[string]string{}}
	for _, cl := range []plan.Cluster{big, small} {
		// Rendered on both, as for a model weighed everywhere.
		n := yaml.MustParse(model)
		require.NoError(t, n.PipeE(yaml.ClearAnnotation("airunway.ai/cluster")))
		res := render.Render([]*yaml.RNode{n}, render.Options{Capabilities: cl.Caps})
		require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
		c.Items[cl.Caps.Name] = res.Items
	}
	f, err := plan.Assign([]plan.Candidate{c}, []plan.Cluster{big, small})
	require.NoError(t, err)
	require.Equal(t, "small", f.Models[0].Cluster)
	require.Equal(t, int64(1), f.Models[0].GPUs, "one node of one GPU, not the 8 of a node of big")
}
