package plan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/benchdata"
)

// TestSharedRendersAsEachCluster: a fleet whose clusters differ in name,
// labels and prices renders each model once for all of them
// (sharedRender), and plans, assigns, refuses and warns exactly as when
// each cluster renders every model itself: the same fleet, the same
// messages, each naming its own cluster.
func TestSharedRendersAsEachCluster(t *testing.T) {
	var docs []string
	for i := range 4 {
		// Two pool sizes: two groups of alike clusters. No KubeRay: its
		// models are refused, naming the cluster's capability file.
		docs = append(docs, strings.Replace(benchdata.FleetCluster(i, 3+i%2), "  - name: kuberay\n    version: \"1.7.0\"\n", "", 1))
	}
	var models []string
	for i := range 40 {
		models = append(models, benchdata.Model(i))
	}
	// A model only the clusters of one region take; one larger than any
	// node.
	models = append(models,
		strings.Replace(benchdata.Model(40), "  labels:\n", "  annotations:\n    airunway.ai/cluster-selector: region=region-1\n  labels:\n", 1),
		strings.Replace(benchdata.Model(42), "count: 1\n", "count: 16\n", 1))
	items, err := kio.FromBytes([]byte(strings.Join(append(docs, models...), "---\n")))
	if err != nil {
		t.Fatal(err)
	}
	source := func(n *yaml.RNode) string { return "fleet.yaml" }
	clusters, problems := FleetClusters(items, source)
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	sources, problems := SourceModels(items, source)
	if problems.HasErrors() {
		t.Fatal(problems)
	}
	keys := map[string]int{}
	apart := make([]Cluster, len(clusters))
	for i, c := range clusters {
		keys[c.renderKey]++
		apart[i] = c
		apart[i].renderKey = ""
	}
	if len(keys) != 2 {
		t.Fatalf("the four clusters have %d render keys, want 2 (two pool sizes)", len(keys))
	}
	shared, sharedProblems, err := RenderFleet(clusters, sources, FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	each, eachProblems, err := RenderFleet(apart, sources, FleetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(shared, each) {
		t.Errorf("shared renders plan\n%+v\nrenders apart plan\n%+v", shared, each)
	}
	if !reflect.DeepEqual(sharedProblems, eachProblems) {
		t.Errorf("shared renders warn\n%v\nrenders apart warn\n%v", sharedProblems, eachProblems)
	}
	// The cases must be there: a refusal that names the cluster's file,
	// a selector that rules clusters out, warnings.
	var refusals, selected int
	for _, m := range shared.Models {
		for _, v := range m.Verdicts {
			if strings.Contains(v.Reason, fmt.Sprintf("ClusterCapabilities %q", v.Cluster)) {
				refusals++
			}
			if strings.Contains(v.Reason, "cluster selector") {
				selected++
			}
		}
	}
	if refusals == 0 || selected == 0 || len(sharedProblems) == 0 {
		t.Errorf("%d refusals naming their cluster, %d clusters ruled out by a selector, %d warnings: a case lost its point", refusals, selected, len(sharedProblems))
	}
}
