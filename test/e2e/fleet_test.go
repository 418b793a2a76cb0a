package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
)

// The fleet example through standalone kustomize, as docs/gitops.md ("A
// fleet of clusters") runs it: each cluster's overlay renders exactly the
// models `plan --fleet` assigns to that cluster, every object valid under
// its kind's schema, with the note naming the models left to the other
// cluster on kustomize's stderr; and `airunway-render build` (the Argo CD
// plugin's path) prints the same bytes.
func TestFleetOverlays(t *testing.T) {
	root := examplesTree(t)
	fleet := filepath.Join(root, "examples", "fleet")
	res := mustRun(t, root, nil, renderBin(t), "plan", "--fleet", filepath.Join(fleet, "clusters"), "-f", filepath.Join(fleet, "models"), "-o", "json")
	var plan struct {
		Clusters []struct {
			Name   string
			Models []string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &plan))
	require.Len(t, plan.Clusters, 2)
	for _, c := range plan.Clusters {
		require.NotEmpty(t, c.Models, "the example gives each cluster a model")
		dir := filepath.Join(fleet, "clusters", c.Name)
		built := kustomizeBuild(t, dir)
		require.Zero(t, built.exit, "kustomize build %s failed\nstderr:\n%s", c.Name, built.stderr)
		var models []string
		for _, o := range parseObjects(t, built.stdout) {
			if o.GetKind() != "Namespace" { // no schema is embedded for core Namespaces
				requireSchemaValid(t, o)
			}
			if o.GetKind() == hub.KindModelDeployment {
				models = append(models, o.GetNamespace()+"/"+o.GetName())
				require.Equal(t, c.Name, o.GetAnnotations()[hub.AnnotationCluster])
			}
			if from := o.GetAnnotations()[hub.AnnotationGeneratedFrom]; from != "" {
				require.True(t, slices.Contains(c.Models, o.GetNamespace()+"/"+from), "%s %s generated from %s, which is not %s's", o.GetKind(), o.GetName(), from, c.Name)
			}
		}
		slices.Sort(models)
		require.Equal(t, c.Models, models, c.Name)
		require.Contains(t, built.stderr, "[info fleet-skipped]: rendered", "kustomize shows the function's note")

		own := mustRun(t, root, nil, renderBin(t), "build", dir, "--root", fleet)
		require.Equal(t, built.stdout, own.stdout, "airunway-render build differs from kustomize build for %s", c.Name)
	}
}
