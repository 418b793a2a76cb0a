package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
)

// fleetCaps is a vllm cluster named name with labels.
func fleetCaps(t *testing.T, name string, labels map[string]string) *capabilities.Resolved {
	t.Helper()
	c := caps(t, "vllm")
	out := *c
	out.Name, out.Labels = name, labels
	return &out
}

// fleetItem is a vllm model with the given annotations.
func fleetItem(name string, annotations ...string) *kyaml.RNode {
	meta := "metadata: {name: " + name + ", namespace: ml"
	if len(annotations) > 0 {
		meta += ", annotations: {" + strings.Join(annotations, ", ") + "}"
	}
	return kyaml.MustParse("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\n" + meta + "}\nspec: {model: {id: Qwen/Qwen3-0.6B}, provider: {name: vllm}, resources: {gpu: {count: 1}}}\n")
}

// rendered are the models whose objects a result holds.
func rendered(res Result) []string {
	var out []string
	for _, n := range res.Items {
		if n.GetKind() == hub.KindModelDeployment {
			out = append(out, n.GetName())
		}
	}
	return out
}

// A cluster's render takes the models assigned to it and those assigned
// nowhere that its labels satisfy; the rest are left out with one note
// naming them. The embedded default names no cluster and renders all.
func TestFleetRenderTakesOnlyItsModels(t *testing.T) {
	east := fleetCaps(t, "east", map[string]string{"region": "us-east1"})
	items := func() []*kyaml.RNode {
		return []*kyaml.RNode{
			fleetItem("mine", `airunway.ai/cluster: east`),
			fleetItem("theirs", `airunway.ai/cluster: west`),
			fleetItem("anywhere"),
			fleetItem("east-only", `airunway.ai/cluster-selector: "region=us-east1"`),
			fleetItem("west-only", `airunway.ai/cluster-selector: "region=us-west1"`),
		}
	}
	res := Render(items(), Options{Capabilities: east})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	require.Equal(t, []string{"anywhere", "east-only", "mine"}, rendered(res))
	var notes, unassigned []string
	for _, p := range res.Problems {
		switch p.Code {
		case diag.FleetSkipped:
			notes = append(notes, p.Message)
		case diag.Unassigned:
			unassigned = append(unassigned, p.Resource.Name)
		}
	}
	require.Equal(t, []string{`rendered 3 model(s) for cluster "east" and skipped 2 not assigned to it: ml/theirs (assigned to cluster west), ml/west-only (cluster selector "region=us-west1" does not match)`}, notes)
	require.Equal(t, []string{"anywhere", "east-only"}, unassigned, "assigned beside unassigned models: each unassigned one is rendered for every cluster")

	res = Render(items(), Options{Capabilities: capabilities.Default()})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	require.Len(t, rendered(res), 5, "the embedded default is no cluster of a fleet")

	// Under kpt a skipped model stays in the package as it was: kpt would
	// delete the file of an item the function leaves out.
	res = Render(items(), Options{Capabilities: east, KeepSkipped: true})
	require.Equal(t, []string{"anywhere", "east-only", "mine", "theirs", "west-only"}, rendered(res))
	for _, n := range res.Items {
		if n.GetName() == "theirs" {
			require.Empty(t, n.GetAnnotations()[hub.AnnotationProvider], "passed through unrendered")
		}
	}
}

// Objects an earlier render generated from a model now assigned elsewhere
// are dropped: rendering over its own output moves the model out.
func TestFleetRenderOverItsOwnOutput(t *testing.T) {
	east := fleetCaps(t, "east", nil)
	first := Render([]*kyaml.RNode{fleetItem("m", `airunway.ai/cluster: east`)}, Options{Capabilities: east})
	require.False(t, first.Problems.HasErrors(), "%v", first.Problems)
	require.Greater(t, len(first.Items), 1)
	moved := append([]*kyaml.RNode{fleetItem("m", `airunway.ai/cluster: west`)}, first.Items[1:]...)
	again := Render(moved, Options{Capabilities: east})
	require.False(t, again.Problems.HasErrors(), "%v", again.Problems)
	for _, n := range again.Items {
		require.Empty(t, n.GetAnnotations()[hub.AnnotationGeneratedFrom], "%s %s is left", n.GetKind(), n.GetName())
		require.NotEqual(t, hub.KindModelDeployment, n.GetKind())
	}
}

// A model assigned to a cluster its own selector rules out: the two
// cannot both be meant, so the render fails and says why.
func TestFleetRenderAssignmentAgainstSelector(t *testing.T) {
	east := fleetCaps(t, "east", map[string]string{"region": "us-east1"})
	res := Render([]*kyaml.RNode{fleetItem("m", `airunway.ai/cluster: east`, `airunway.ai/cluster-selector: "region=us-west1"`)}, Options{Capabilities: east})
	require.True(t, res.Problems.HasErrors())
	require.Nil(t, res.Items)
	var msgs []string
	for _, p := range res.Problems.Errors() {
		msgs = append(msgs, p.Field+": "+p.Message)
	}
	require.Equal(t, []string{"metadata.annotations.airunway.ai/cluster: assigns the model to cluster \"east\", whose labels (region=us-east1) its cluster selector \"region=us-west1\" does not match: assign it to a cluster the selector matches (`airunway-render plan --fleet DIR --write`), or change the selector"}, msgs)
}

// With the fleet declared in the capability file, a typo in an assignment
// and a model assigned nowhere fail the render, naming the model, instead
// of being skipped by every cluster; Render opts unassigned models in,
// and plan --fleet weighs them (WeighUnassigned).
func TestFleetDeclared(t *testing.T) {
	east := fleetCaps(t, "east", nil)
	east.Fleet = &hub.FleetCapability{Clusters: []string{"east", "west"}}

	res := Render([]*kyaml.RNode{fleetItem("mine", `airunway.ai/cluster: east`), fleetItem("typo", `airunway.ai/cluster: wset`)}, Options{Capabilities: east})
	require.True(t, res.Problems.HasErrors())
	require.Contains(t, problemText(res.Problems), `ModelDeployment/ml/typo metadata.annotations.airunway.ai/cluster: assigns the model to cluster "wset", which the fleet does not have, so no cluster would run it: `+"`spec.fleet.clusters`"+` of ClusterCapabilities "test" lists east, west; did you mean "west"?`)
	require.Empty(t, res.Items, "the run fails as a whole")

	res = Render([]*kyaml.RNode{fleetItem("mine", `airunway.ai/cluster: east`), fleetItem("nobodys")}, Options{Capabilities: east})
	require.True(t, res.Problems.HasErrors())
	require.Contains(t, problemText(res.Problems), "ModelDeployment/ml/nobodys metadata.annotations.airunway.ai/cluster: is not set: the model is assigned to no cluster of the fleet (east, west)")

	res = Render([]*kyaml.RNode{fleetItem("mine", `airunway.ai/cluster: east`), fleetItem("nobodys")}, Options{Capabilities: east, WeighUnassigned: true})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	require.Equal(t, []string{"mine", "nobodys"}, rendered(res))

	east.Fleet.UnassignedModels = hub.UnassignedRender
	res = Render([]*kyaml.RNode{fleetItem("mine", `airunway.ai/cluster: east`), fleetItem("nobodys"), fleetItem("theirs", `airunway.ai/cluster: west`)}, Options{Capabilities: east})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	require.Equal(t, []string{"mine", "nobodys"}, rendered(res))
	require.NotContains(t, problemText(res.Problems), "unassigned-model", "the capability file chose to render them")
}

// problemText is the problems as Report prints them.
func problemText(l diag.List) string {
	var b strings.Builder
	l.Report(&b, "")
	return b.String()
}
