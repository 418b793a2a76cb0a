package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocsSnippets ties the snippets of docs/gitops.md (and the README's
// walk-through) to the commands and edits the tests in this package run:
// each line below is run (or applied) by a test, and must appear in those
// pages verbatim, so the documentation cannot drift from what is tested.
func TestDocsSnippets(t *testing.T) {
	readme := readFileString(t, filepath.Join(repoRoot, "docs", "gitops.md")) +
		readFileString(t, filepath.Join(repoRoot, "docs", "versioning.md")) +
		readFileString(t, filepath.Join(repoRoot, "README.md"))
	for _, snippet := range []string{
		// TestKustomizeDevOverlay, TestKustomizeProdOverlay
		"kustomize build --enable-alpha-plugins --enable-exec examples/kustomize/clusters/dev\n",
		"kustomize build --enable-alpha-plugins --enable-exec examples/kustomize/clusters/prod\n",
		// TestImages: kustomize and kubectl kustomize container functions
		"- ../../render/image    # was ../../render/exec\n",
		"kubectl kustomize --enable-alpha-plugins examples/kustomize/clusters/dev",
		// TestKptFnRenderWritesPrunesAndIsIdempotent, TestKptFnEval
		"PATH=$PWD/bin:$PATH kpt fn render examples/kpt --allow-exec\n",
		"kpt fn eval examples/kpt --exec bin/airunway-render --fn-config examples/kpt/capabilities.yaml -o stdout\n",
		// TestImages: Kptfile image step and kpt fn eval --image
		"- image: " + functionImage,
		"--image " + functionImage + " --fn-config capabilities.yaml",
		// TestArgoCDPluginApplications (the Applications are read from the example)
		"    path: examples/kustomize/clusters/prod   # the base, prod's patches and capability file, the renderer\n",
		// TestBuildMatchesKustomize
		"airunway-render build examples/kustomize/clusters/prod\n",
		// TestFluxRenderedManifests
		"examples/flux/render.sh ",
		"kubectl kustomize examples/flux/rendered/prod ",
		// TestReadmeOutputDirSnippet
		"airunway-render render --capabilities examples/kustomize/clusters/dev/capabilities.yaml \\\n  --output-dir rendered/dev --kustomization examples/kustomize/base\n",
		// TestDiffPullRequest
		"airunway-render diff --capabilities examples/kustomize/clusters/prod/capabilities.yaml origin/main HEAD -- examples/kustomize/clusters/prod\n",
		// TestReadmePreviewSnippet
		previewSnippet + "\n",
		// TestKptMigrate
		"kpt fn eval DIR --exec \"airunway-render migrate\"",
	} {
		require.Contains(t, readme, snippet)
	}
}

// The --output-dir snippet of docs/gitops.md, run as written (from the repository
// root), writes a directory kubectl kustomize builds into the dev objects.
func TestReadmeOutputDirSnippet(t *testing.T) {
	root := examplesTree(t)
	mustRun(t, root, nil, renderBin(t), "render", "--capabilities", "examples/kustomize/clusters/dev/capabilities.yaml",
		"--output-dir", "rendered/dev", "--kustomization", "examples/kustomize/base")
	res := mustRun(t, root, nil, "kubectl", "kustomize", filepath.Join(root, "rendered", "dev"))
	requireDevObjects(t, parseObjects(t, res.stdout))
}

// previewSnippet is the upgrade preview of docs/gitops.md, run from the repository
// root.
const previewSnippet = "airunway-render preview --from cli/testdata/preview/kaito-0.6-to-0.8/from.yaml --to cli/testdata/preview/kaito-0.6-to-0.8/to.yaml cli/testdata/preview/kaito-0.6-to-0.8/models"

// TestReadmePreviewSnippet runs the preview of docs/gitops.md with the shipped
// binary: exit 0 without --exit-code, the Workspace changed, and both
// breaking findings of a KAITO 0.6 → 0.8 upgrade.
func TestReadmePreviewSnippet(t *testing.T) {
	args := strings.Fields(previewSnippet)[1:]
	res := mustRun(t, repoRoot, nil, renderBin(t), args...)
	for _, want := range []string{
		"~ Workspace/inference/phi-4-mini (kaito.sh/v1beta1)",
		"+      nvidia.com/gpu.present: \"true\"",
		"BREAKING: KAITO 0.8 runs every Workspace as a StatefulSet",
		"BREAKING: Workspace/inference/phi-4-mini: `resource.labelSelector` changes",
	} {
		require.Contains(t, res.stdout, want)
	}
	res = run(t, repoRoot, nil, renderBin(t), append([]string{"preview", "--exit-code"}, args[1:]...)...)
	require.Equal(t, 3, res.exit, "--exit-code on a breaking upgrade")
}

// TestReadmeQuickStart runs the README's quick start as a newcomer would:
// the two files it shows, written as it names them, and its commands, in a
// shell, with the built binary on PATH. The model lands on the pool the
// capability file describes.
func TestReadmeQuickStart(t *testing.T) {
	readme := readFileString(t, filepath.Join(repoRoot, "README.md"))
	blocks := regexp.MustCompile("(?s)<!-- quickstart:(\\S+) -->\n```\\w*\n(.*?)```").FindAllStringSubmatch(readme, -1)
	require.Len(t, blocks, 3, "the quick start has a model, a capability file and the commands")
	dir := t.TempDir()
	var script string
	for _, b := range blocks {
		if b[1] == "run" {
			script = b[2]
			continue
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, b[1]), []byte(b[2]), 0o644))
	}
	lines := strings.Split(strings.TrimSpace(script), "\n")
	require.Len(t, lines, 3, "three commands")
	env := []string{"PATH=" + filepath.Dir(renderBin(t)) + string(os.PathListSeparator) + os.Getenv("PATH")}
	var outputs [3][]string // the kinds each command prints
	for i, line := range lines {
		res := mustRun(t, dir, env, "bash", "-euo", "pipefail", "-c", line)
		require.Empty(t, res.stderr, "%s: with a capability file, nothing to warn about", line)
		for _, o := range parseObjects(t, res.stdout) {
			outputs[i] = append(outputs[i], o.GetKind())
		}
		if i == 0 {
			require.Contains(t, res.stdout, "render.airunway.ai/node-pool: l4\n")
			require.Contains(t, res.stdout, "cloud.google.com/gke-accelerator: nvidia-l4\n")
			require.Contains(t, res.stdout, "nvidia.com/gpu: \"1\"\n")
		}
	}
	require.Equal(t, []string{"ModelDeployment", "Deployment", "Service"}, outputs[0], "the model and its objects")
	require.Empty(t, outputs[1], "--output-dir writes files, not stdout")
	require.ElementsMatch(t, outputs[0], outputs[2], "kubectl kustomize builds the directory into the same objects")
	require.FileExists(t, filepath.Join(dir, "rendered", "my-cluster", "kustomization.yaml"))

	// The capability file states the GPU's memory, so the memory fit runs:
	// without its contextLength the model is refused, as vLLM refuses it.
	model := readFileString(t, filepath.Join(dir, "model.yaml"))
	cut := regexp.MustCompile(`(?m)^  engine:\n    contextLength: .*\n`)
	require.Regexp(t, cut, model)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "default-context.yaml"), []byte(cut.ReplaceAllString(model, "")), 0o644))
	res := run(t, dir, env, "bash", "-c", "airunway-render render -f default-context.yaml --capabilities cluster.yaml")
	require.Equal(t, 1, res.exit, res.stderr)
	require.Contains(t, res.stderr, "serve at most 27,392 tokens")
}
