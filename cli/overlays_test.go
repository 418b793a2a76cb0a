package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// overlayRepo is a repository laid out as examples/kustomize is: models in
// base/, one overlay per cluster that patches them and runs the renderer.
func overlayRepo(t *testing.T) *diffTestRepo {
	t.Helper()
	r := newDiffTestRepo(t)
	render, err := os.ReadFile("../examples/kustomize/render/exec/airunway-render.yaml")
	require.NoError(t, err)
	r.commit("base", map[string]string{
		"base/kustomization.yaml":         "resources:\n- qwen.yaml\n",
		"base/qwen.yaml":                  diffModel("qwen", 3, 1),
		"render/kustomization.yaml":       "resources:\n- airunway-render.yaml\n",
		"render/airunway-render.yaml":     string(render),
		"clusters/west/capabilities.yaml": planCaps(2),
		"clusters/west/kustomization.yaml": `resources:
- ../../base
- capabilities.yaml
patches:
- target: {kind: ModelDeployment, name: qwen}
  patch: |
    - op: replace
      path: /spec/scaling/replicas
      value: 2
transformers:
- ../../render
`,
	})
	return r
}

// plan, diff and preview of an overlay answer about what build (Argo CD's
// plugin, kustomize with the function) gives: the overlay's patches
// applied, its base's models found.
func TestOverlaysAreAnsweredAsBuilt(t *testing.T) {
	t.Setenv(asFunction, "1")
	r := overlayRepo(t)
	overlay := filepath.Join(r.dir, "clusters/west")
	caps := filepath.Join(overlay, "capabilities.yaml")

	built, stderr, code := run(t, "", "build", overlay)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, built, "replicas: 2\n")
	builtFile := filepath.Join(t.TempDir(), "built.yaml")
	writeFile(t, builtFile, built)

	// plan of the overlay is the plan of its build, not of the base.
	fromOverlay, stderr, code := run(t, "", "plan", "-o", "json", "--capabilities", caps, overlay)
	require.Equal(t, 0, code, stderr)
	fromBuild, stderr, code := run(t, "", "plan", "-o", "json", "--capabilities", caps, builtFile)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, fromBuild, fromOverlay)
	require.Contains(t, fromOverlay, `"pods": 2,`, "the overlay's 2 replicas, not the base's 3")

	// A pull request that changes the base: diff and plan --base of the
	// overlay see it through the overlay's patch (3 → 4 in the base is
	// still 2 on west), and one that changes the patch is seen.
	r.commit("base to 4", map[string]string{"base/qwen.yaml": diffModel("qwen", 4, 1)})
	out, stderr, code := run(t, "", "diff", "-C", r.dir, "--exit-code", "--capabilities", "clusters/west/capabilities.yaml", "HEAD~1", "HEAD", "--", "clusters/west")
	require.Equal(t, 0, code, "the overlay's patch keeps 2 replicas on west: %s", stderr)
	require.Contains(t, out, "0 added, 0 changed, 0 removed")
	out, _, code = run(t, "", "diff", "-C", r.dir, "--exit-code", "--capabilities", "clusters/west/capabilities.yaml", "HEAD~1", "HEAD", "--", "base")
	require.Equal(t, exitDifferent, code, "the base itself changed")
	require.Contains(t, out, "~ Deployment/ml/qwen (apps/v1)\n")

	r.commit("west to 1", map[string]string{"clusters/west/kustomization.yaml": strings.Replace(readRepoFile(t, r, "clusters/west/kustomization.yaml"), "value: 2", "value: 1", 1)})
	out, stderr, code = run(t, "", "diff", "-C", r.dir, "--capabilities", "clusters/west/capabilities.yaml", "HEAD~1", "HEAD", "--", "clusters/west")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "~ Deployment/ml/qwen (apps/v1)\n")
	require.Contains(t, out, "-  replicas: 2\n+  replicas: 1\n")
	out, stderr, code = run(t, "", "plan", "-C", r.dir, "--base", "HEAD~1", "--capabilities", "clusters/west/capabilities.yaml", "clusters/west")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "ml/qwen (2 → 1 pod, 2 → 1 GPU)")

	// preview renders the overlay's build under both capability files:
	// the pool's relabelling moves the overlay's Deployment.
	to := filepath.Join(t.TempDir(), "to.yaml")
	writeFile(t, to, strings.Replace(planCaps(2), "pool: a100", "pool: h100", 1))
	out, stderr, code = run(t, "", "preview", "--from", caps, "--to", to, overlay)
	require.Equal(t, 0, code, stderr)
	built, _, _ = run(t, "", "build", overlay)
	writeFile(t, builtFile, built)
	fromBuilt, _, _ := run(t, "", "preview", "--from", caps, "--to", to, builtFile)
	require.Equal(t, fromBuilt, out)
	require.Contains(t, out, "~ Deployment/ml/qwen")
}

// A kustomization that does not build fails the run, naming the PATH.
func TestOverlayBuildFailureFailsTheRun(t *testing.T) {
	t.Setenv(asFunction, "1")
	r := overlayRepo(t)
	r.write(map[string]string{"clusters/west/kustomization.yaml": "resources:\n- ../../missing\n"})
	overlay := filepath.Join(r.dir, "clusters/west")
	out, stderr, code := run(t, "", "plan", "--capabilities", filepath.Join(overlay, "capabilities.yaml"), overlay)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, stderr, "holds a kustomization, which is built as Argo CD and Flux build it, and the build failed")
}

func readRepoFile(t *testing.T, r *diffTestRepo, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(name)))
	require.NoError(t, err)
	return string(data)
}

// An overlay in a pull request that declares another program as its
// function: plan and diff refuse it with build's guard, and it never runs.
func TestOverlayOfAnotherFunctionNeverRuns(t *testing.T) {
	t.Setenv(asFunction, "1")
	r := overlayRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	r.commit("evil", map[string]string{"render/airunway-render.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/sh\n        args: [\"-c\", \"touch " + marker + "; cat\"]\n"})
	for _, args := range [][]string{
		{"plan", "--capabilities", filepath.Join(r.dir, "clusters/west/capabilities.yaml"), filepath.Join(r.dir, "clusters/west")},
		{"plan", "-C", r.dir, "--base", "HEAD~1", "--capabilities", "clusters/west/capabilities.yaml", "clusters/west"},
		{"diff", "-C", r.dir, "--capabilities", "clusters/west/capabilities.yaml", "HEAD~1", "HEAD", "--", "clusters/west"},
	} {
		_, stderr, code := run(t, "", args...)
		require.Equal(t, 1, code, "%v: %s", args, stderr)
		require.Contains(t, stderr, "the build failed", args)
		require.NoFileExists(t, marker, "%v ran the declared program", args)
	}
}
