package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fleet's CI workflow runs the commands that keep the example true,
// and they leave the committed example as it is: every model carries its
// cluster, and examples/fleet/rendered is what render.sh writes.
func TestFleetWorkflowKeepsTheExampleTrue(t *testing.T) {
	data := readFileString(t, filepath.Join(repoRoot, "examples", "fleet", "flux", "ci-workflow.yaml"))
	wf, err := yaml.Parse(data)
	require.NoError(t, err)
	steps, err := wf.Pipe(yaml.Lookup("jobs", "plan-and-render", "steps"))
	require.NoError(t, err)
	elements, err := steps.Elements()
	require.NoError(t, err)
	var runs []string
	for _, s := range elements {
		if r := s.Field("run"); r != nil {
			runs = append(runs, strings.TrimSpace(yaml.GetValue(r.Value)))
		}
	}
	const write = "bin/airunway-render plan --fleet examples/fleet/clusters -f examples/fleet/models --write"
	require.Contains(t, runs, write)
	require.Contains(t, runs, "examples/fleet/flux/render.sh")

	root := examplesTree(t)
	mustRun(t, root, nil, renderBin(t), strings.Fields(write)[1:]...)
	script := filepath.Join(root, "examples", "fleet", "flux", "render.sh")
	require.NoError(t, os.Chmod(script, 0o755)) // copyDir writes 0644
	mustRun(t, root, nil, script)
	for _, dir := range []string{"models", "rendered"} {
		want := readTree(t, filepath.Join(repoRoot, "examples", "fleet", dir))
		got := readTree(t, filepath.Join(root, "examples", "fleet", dir))
		require.Equal(t, want, got, "examples/fleet/%s is stale: run the workflow's commands and commit the result", dir)
	}
}
