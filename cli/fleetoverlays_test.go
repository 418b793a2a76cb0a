package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gpuWestSixQwen is gpu-west's overlay with a patch that runs qwen3-0-6b
// with six replicas instead of the three its file says.
const gpuWestSixQwen = `resources:
- ../../models
- capabilities.yaml
transformers:
- ../../render
patches:
- target: {kind: ModelDeployment, name: qwen3-0-6b}
  patch: |
    - op: replace
      path: /spec/scaling/replicas
      value: 6
`

// fleetGPUs is each model's GPUs in a fleet plan.
func fleetGPUs(t *testing.T, out string) map[string]int {
	t.Helper()
	var f struct {
		Models []struct {
			Name, Reason string
			GPUs         int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &f), out)
	gpus := map[string]int{}
	for _, m := range f.Models {
		gpus[m.Name] = m.GPUs
	}
	return gpus
}

// The fleet plan weighs a model as its cluster's overlay deploys it: a
// patch in gpu-west's kustomization doubles qwen3-0-6b there, and the plan
// counts the six GPUs `build clusters/gpu-west` (what Argo CD renders)
// runs, not the three of the model's file.
func TestFleetPlanBuildsEachClusterOverlay(t *testing.T) {
	fleet, models := copyFleet(t, false)
	out, stderr, code := run(t, "", "plan", "-o", "json", "--fleet", fleet, "-f", models)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 3, fleetGPUs(t, out)["qwen3-0-6b"])

	writeFile(t, filepath.Join(fleet, "gpu-west", "kustomization.yaml"), gpuWestSixQwen)
	built, stderr, code := run(t, "", "build", filepath.Join(fleet, "gpu-west"), "--root", filepath.Dir(fleet))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, built, "name: qwen3-0-6b\n  namespace: inference\nspec:\n  replicas: 6\n", "Argo CD deploys six")
	out, stderr, code = run(t, "", "plan", "-o", "json", "--fleet", fleet, "-f", models)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 6, fleetGPUs(t, out)["qwen3-0-6b"], "the plan counts what the overlay deploys")
}

// A model file the clusters' kustomizations do not include runs nowhere:
// the plan says so instead of placing it.
func TestFleetPlanModelNoOverlayIncludes(t *testing.T) {
	fleet, models := copyFleet(t, false)
	writeFile(t, filepath.Join(models, "forgotten.yaml"), fleetModel("forgotten", 1, ""))
	out, _, code := run(t, "", "plan", "--fleet", fleet, "-f", models)
	require.Equal(t, exitShort, code)
	require.Contains(t, out, "Nowhere: inference/forgotten fits no cluster:\n  - gpu-east: the cluster's kustomization ("+filepath.Join(fleet, "gpu-east")+") does not include this model, so Argo CD or Flux never deploys it there")
}

// A model an overlay deploys that the planned paths do not hold is left
// out of the plan, with a warning that names it.
func TestFleetPlanWarnsOfUnplannedModels(t *testing.T) {
	fleet, models := copyFleet(t, false)
	east := filepath.Join(fleet, "gpu-east")
	writeFile(t, filepath.Join(east, "local.yaml"), fleetModel("local", 1, "gpu-east"))
	data, err := os.ReadFile(filepath.Join(east, "kustomization.yaml"))
	require.NoError(t, err)
	writeFile(t, filepath.Join(east, "kustomization.yaml"), strings.Replace(string(data), "- capabilities.yaml\n", "- capabilities.yaml\n- local.yaml\n", 1))
	_, stderr, code := run(t, "", "plan", "--fleet", fleet, "-f", models)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, `[warning unplanned-models]: cluster "gpu-east"'s kustomization deploys inference/local, which the planned paths do not hold: the plan leaves their GPUs and costs out; add the directory that holds them to the paths (file `+east+`)`)
	_, stderr, code = run(t, "", "plan", "--fleet", fleet, "-f", models, "--warnings-as-errors")
	require.Equal(t, 1, code, stderr)
}

// --base builds the overlays at both revisions: a pull request that only
// patches an overlay shows its GPUs.
func TestFleetPlanBaseBuildsOverlays(t *testing.T) {
	r := newDiffTestRepo(t)
	fleet, models := copyFleet(t, false)
	copyTree(t, fleet, filepath.Join(r.dir, "clusters"))
	copyTree(t, models, filepath.Join(r.dir, "models"))
	copyTree(t, filepath.Join(filepath.Dir(fleet), "render"), filepath.Join(r.dir, "render"))
	r.commit("fleet", nil)
	r.commit("six qwen on gpu-west", map[string]string{"clusters/gpu-west/kustomization.yaml": gpuWestSixQwen})
	out, stderr, code := run(t, "", "plan", "-C", r.dir, "--fleet", "clusters", "--base", "HEAD~1", "models")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `gpu-west +8 → 11 \(\+3\)`, out)
}

// An overlay of a fleet's cluster that declares another program as its
// function: plan --fleet refuses it with build's guard, and it never runs.
func TestFleetOverlayOfAnotherFunctionNeverRuns(t *testing.T) {
	fleet, models := copyFleet(t, false)
	marker := filepath.Join(t.TempDir(), "ran")
	writeFile(t, filepath.Join(filepath.Dir(fleet), "render", "airunway-render.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/sh\n        args: [\"-c\", \"touch "+marker+"; cat\"]\n")
	_, stderr, code := run(t, "", "plan", "--fleet", fleet, "-f", models)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "the build failed")
	require.NoFileExists(t, marker)
}
