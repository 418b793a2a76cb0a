package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fluxRender runs examples/flux/render.sh in a copy of the examples as the
// docs/gitops.md says, from the repository root, with KUSTOMIZE relative to it.
func fluxRender(t *testing.T, root string) result {
	t.Helper()
	script := filepath.Join(root, "examples", "flux", "render.sh")
	require.NoError(t, os.Chmod(script, 0o755)) // copyDir writes 0644
	tools := filepath.Join(root, "tools")
	require.NoError(t, os.MkdirAll(tools, 0o755))
	if _, err := os.Lstat(filepath.Join(tools, "kustomize")); err != nil {
		require.NoError(t, os.Symlink(kustomizeBin(t), filepath.Join(tools, "kustomize")))
	}
	return run(t, root, []string{"KUSTOMIZE=tools/kustomize"}, "examples/flux/render.sh")
}

// The rendered directories in Git are what render.sh produces now, and
// kubectl kustomize (Flux's kustomize) builds each into the same objects
// the overlay renders.
func TestFluxRenderedManifests(t *testing.T) {
	root := examplesTree(t)
	res := fluxRender(t, root)
	require.Zero(t, res.exit, "render.sh failed\nstderr:\n%s", res.stderr)
	committed := filepath.Join(repoRoot, "examples", "flux", "rendered")
	requireSameTree(t, readTree(t, committed), readTree(t, filepath.Join(root, "examples", "flux", "rendered")))

	checks := map[string]func(*testing.T, []*yaml.RNode){"dev": requireDevObjects, "prod": requireProdObjects}
	for cluster, check := range checks {
		t.Run(cluster, func(t *testing.T) {
			res := mustRun(t, t.TempDir(), nil, "kubectl", "kustomize", filepath.Join(committed, cluster))
			objs := parseObjects(t, res.stdout)
			check(t, objs)
			requireFluxObjects(t, cluster, objs)
		})
	}
}

// requireFluxObjects validates the cluster's Flux objects against the Flux
// CRDs and checks they point at the rendered directory, wait for every
// object they apply (each ModelDeployment by its Ready condition) and
// prune, and that the directory carries the Namespace of its objects.
func requireFluxObjects(t *testing.T, cluster string, rendered []*yaml.RNode) {
	t.Helper()
	data := readFileString(t, filepath.Join(repoRoot, "examples", "flux", "clusters", cluster, "models.yaml"))
	objs := parseObjects(t, data)
	requireObject(t, objs, "source.toolkit.fluxcd.io/v1", "GitRepository", "flux-system", "platform")
	ks := requireObject(t, objs, "kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "airunway-models")
	for _, o := range objs {
		requireSchemaValid(t, o)
	}
	for field, want := range map[string]string{"path": "./examples/flux/rendered/" + cluster, "wait": "true", "prune": "true"} {
		v, err := ks.Pipe(yaml.Lookup("spec", field))
		require.NoError(t, err)
		require.Equal(t, want, yaml.GetValue(v), "spec.%s", field)
	}
	namespaces := map[string]bool{}
	for _, o := range rendered {
		if o.GetKind() == "Namespace" {
			namespaces[o.GetName()] = true
		}
	}
	for _, o := range rendered {
		if ns := o.GetNamespace(); ns != "" {
			require.True(t, namespaces[ns], "%s %s is in namespace %q, which the rendered directory does not create", o.GetKind(), o.GetName(), ns)
		}
	}
}

func TestFluxRenderPrunesAndRefusesEmptyOutput(t *testing.T) {
	root := examplesTree(t)
	base := filepath.Join(root, "examples", "kustomize", "base", "kustomization.yaml")

	editFile(t, base, "- llama-3-1-8b.yaml\n", "")
	res := fluxRender(t, root)
	require.Zero(t, res.exit, "stderr:\n%s", res.stderr)
	for _, cluster := range []string{"dev", "prod"} {
		tree := readTree(t, filepath.Join(root, "examples", "flux", "rendered", cluster))
		for name := range tree {
			require.NotContains(t, name, "llama-3-1-8b", "objects of a deleted model must go")
		}
		require.NotContains(t, tree["kustomization.yaml"], "llama-3-1-8b")
		require.Contains(t, tree["kustomization.yaml"], "qwen3-0-6b")
	}

	editFile(t, base, "- qwen3-0-6b.yaml\n", "")
	before := readTree(t, filepath.Join(root, "examples", "flux", "rendered"))
	res = fluxRender(t, root)
	require.NotZero(t, res.exit, "an empty render must fail, not prune the cluster")
	require.Contains(t, res.stderr, "rendered no ModelDeployment")
	requireSameTree(t, before, readTree(t, filepath.Join(root, "examples", "flux", "rendered")))
}

// The sample workflow runs the same script the tests run.
func TestFluxWorkflowRunsRenderScript(t *testing.T) {
	data := readFileString(t, filepath.Join(repoRoot, "examples", "flux", "ci-workflow.yaml"))
	wf, err := yaml.Parse(data)
	require.NoError(t, err)
	steps, err := wf.Pipe(yaml.Lookup("jobs", "render", "steps"))
	require.NoError(t, err)
	var runs []string
	elements, err := steps.Elements()
	require.NoError(t, err)
	for _, s := range elements {
		if r := s.Field("run"); r != nil {
			runs = append(runs, strings.TrimSpace(yaml.GetValue(r.Value)))
		}
	}
	require.Contains(t, runs, "examples/flux/render.sh")
}
