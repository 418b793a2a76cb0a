package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// prWorkflow is the part of examples/ci/pr-diff.yaml the test runs.
type prWorkflow struct {
	On   map[string]any    `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Strategy struct {
			Matrix struct {
				Cluster []string `yaml:"cluster"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			With map[string]any    `yaml:"with"`
			Env  map[string]string `yaml:"env"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// step returns the script and environment of a step by id.
func (w prWorkflow) step(t *testing.T, job, id string) (run string, env map[string]string) {
	t.Helper()
	for _, s := range w.Jobs[job].Steps {
		if s.ID == id {
			return s.Run, s.Env
		}
	}
	t.Fatalf("examples/ci/pr-diff.yaml: job %s has no step with id %s", job, id)
	return "", nil
}

// gitCommit runs git with the machine's configuration shut out.
func gitCommit(t *testing.T, dir string, args ...string) {
	t.Helper()
	env := []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	mustRun(t, dir, env, "git", append([]string{"-c", "user.name=x", "-c", "user.email=x@example.com", "-c", "commit.gpgsign=false"}, args...)...)
}

// diffRepo is a GitOps repository like the workflow expects: the example
// model under models/, two clusters' overlays (capability file, the
// models, the renderer), main mirrored as origin/main, and a pull request
// that raises the model's GPU count.
func diffRepo(t *testing.T) string {
	repo := t.TempDir()
	copyDir(t, filepath.Join(repoRoot, "examples", "vllm-basic"), filepath.Join(repo, "models", "vllm-basic"))
	copyDir(t, filepath.Join(repoRoot, "examples", "kustomize", "render", "exec"), filepath.Join(repo, "render"))
	writeRepoFile(t, repo, "models/kustomization.yaml", "resources:\n- vllm-basic/modeldeployment.yaml\n")
	prod := readFileString(t, filepath.Join(repoRoot, "examples", "capabilities", "prod-eastus.yaml"))
	for cluster, caps := range map[string]string{"prod": prod, "dev": strings.Replace(prod, "name: prod-eastus", "name: dev", 1)} {
		writeRepoFile(t, repo, "clusters/"+cluster+"/capabilities.yaml", caps)
		writeRepoFile(t, repo, "clusters/"+cluster+"/kustomization.yaml", "resources:\n- ../../models\n- capabilities.yaml\ntransformers:\n- ../../render\n")
	}
	gitCommit(t, repo, "init", "-q")
	gitCommit(t, repo, "symbolic-ref", "HEAD", "refs/heads/main")
	gitCommit(t, repo, "add", "-A")
	gitCommit(t, repo, "commit", "-q", "-m", "base")
	gitCommit(t, repo, "update-ref", "refs/remotes/origin/main", "HEAD")
	editFile(t, filepath.Join(repo, "models", "vllm-basic", "modeldeployment.yaml"), "      count: 1\n", "      count: 2\n")
	gitCommit(t, repo, "commit", "-q", "-am", "two GPUs")
	return repo
}

func TestDiffPullRequest(t *testing.T) {
	repo := diffRepo(t)
	bin := renderBin(t)

	t.Run("text", func(t *testing.T) {
		res := mustRun(t, repo, nil, bin, "diff", "--capabilities", "clusters/prod/capabilities.yaml", "HEAD~1", "HEAD", "--", "models")
		for _, want := range []string{
			"~ Deployment/inference/llama-3-1-8b (apps/v1)\n",
			"--- HEAD~1:Deployment/inference/llama-3-1-8b\n+++ HEAD:Deployment/inference/llama-3-1-8b\n",
			"-            nvidia.com/gpu: \"1\"\n+            nvidia.com/gpu: \"2\"\n",
			"-        nvidia.com/gpu.product: NVIDIA-L4\n+        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n",
			"3 objects: 0 added, 2 changed, 0 removed, 1 unchanged\n",
		} {
			require.Contains(t, res.stdout, want)
		}
	})

	t.Run("exit code", func(t *testing.T) {
		res := run(t, repo, nil, bin, "diff", "--exit-code", "--capabilities", "clusters/prod/capabilities.yaml", "HEAD~1", "HEAD", "--", "models")
		require.Equal(t, 2, res.exit, "stderr:\n%s", res.stderr)
		res = run(t, repo, nil, bin, "diff", "--exit-code", "--capabilities", "clusters/prod/capabilities.yaml", "HEAD", "--", "models")
		require.Equal(t, 0, res.exit, "the working tree is HEAD; stderr:\n%s", res.stderr)
	})

	t.Run("the workflow's commands", func(t *testing.T) {
		runWorkflow(t, repo, bin)
	})
}

// runWorkflow runs the scripts of examples/ci/pr-diff.yaml as GitHub would,
// one diff job per matrix entry, then the comment job with a fake gh that
// has no earlier comment to edit.
func runWorkflow(t *testing.T, repo, bin string) {
	var wf prWorkflow
	require.NoError(t, yaml.Unmarshal([]byte(readFileString(t, filepath.Join(repoRoot, "examples", "ci", "pr-diff.yaml"))), &wf))
	require.Contains(t, wf.On, "pull_request")
	checkout := wf.Jobs["diff"].Steps[0]
	require.Equal(t, "actions/checkout@v4", checkout.Uses)
	require.Equal(t, 0, checkout.With["fetch-depth"], "the base branch must be fetched")

	bindir, ws := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(bin, filepath.Join(bindir, "airunway-render")))
	require.NoError(t, os.WriteFile(filepath.Join(bindir, "gh"), []byte(`#!/bin/sh
for a in "$@"; do [ "$a" = --edit-last ] && { echo "no comments found for current user" >&2; exit 1; }; done
printf '%s\n' "$@" > "$GH_LOG"
`), 0o755))
	path := "PATH=" + bindir + string(os.PathListSeparator) + os.Getenv("PATH")
	shell := []string{"--noprofile", "--norc", "-eo", "pipefail", "-c"}

	script, stepEnv := wf.step(t, "diff", "diff")
	require.Equal(t, map[string]string{"BASE_REF": "${{ github.base_ref }}", "CLUSTER": "${{ matrix.cluster }}"}, stepEnv)
	matrix := wf.Jobs["diff"].Strategy.Matrix.Cluster
	require.Equal(t, []string{"clusters/dev", "clusters/prod"}, matrix)
	for i, cluster := range matrix {
		caps := cluster + "/capabilities.yaml"
		env := []string{path, "BASE_REF=main", "CLUSTER=" + cluster}
		mustRun(t, repo, env, "bash", append(shell, script)...)
		md := readFileString(t, filepath.Join(repo, "diff.md"))
		for _, want := range []string{
			"### airunway-render diff for `" + caps + "`\n",
			"`origin/main` → `HEAD`: 3 objects: 0 added, 2 changed, 0 removed, 1 unchanged\n",
			"| changed | Deployment | `inference/llama-3-1-8b` | `apps/v1` |\n",
			"```diff\n--- origin/main:Deployment/inference/llama-3-1-8b\n+++ HEAD:Deployment/inference/llama-3-1-8b\n",
			"+            nvidia.com/gpu: \"2\"\n",
			// The plan diff under it: two GPUs move the model from the L4
			// pool to an H100 node.
			"#### GPU plan against `origin/main`\n",
			"| l4 | 1 → 0 (-1) | 1 → 0 (-1) | 584.00 → 0.00 (-584.00 USD) | yes | -inference/llama-3-1-8b (1 pod, 1 GPU) |\n",
			"| h100 | 0 → 2 (+2) | 0 → 1 (+1) | 0.00 → 71773.60 (+71773.60 USD) | yes | +inference/llama-3-1-8b (1 pod, 2 GPU) |\n",
		} {
			require.Contains(t, md, want)
		}
		// What upload-artifact and download-artifact make of it.
		artifact := filepath.Join(ws, "diff-"+string(rune('0'+i)))
		require.NoError(t, os.MkdirAll(artifact, 0o755))
		require.NoError(t, os.Rename(filepath.Join(repo, "diff.md"), filepath.Join(artifact, "diff.md")))
	}

	script, _ = wf.step(t, "comment", "comment")
	log := filepath.Join(ws, "gh.log")
	mustRun(t, ws, []string{path, "PR=42", "GH_LOG=" + log}, "bash", append(shell, script)...)
	require.Equal(t, "pr\ncomment\n42\n--body-file\ncomment.md\n", readFileString(t, log), "created after --edit-last found none")
	comment := readFileString(t, filepath.Join(ws, "comment.md"))
	dev := strings.Index(comment, "for `clusters/dev/capabilities.yaml`")
	prod := strings.Index(comment, "for `clusters/prod/capabilities.yaml`")
	require.True(t, dev >= 0 && prod > dev, "one section per cluster in matrix order:\n%s", comment)

	// A pull request the cluster cannot hold: the prod H100 pool may not
	// grow at all. The section says so, and the check fails.
	prodCaps := filepath.Join(repo, "clusters", "prod", "capabilities.yaml")
	editFile(t, prodCaps, "    nodes: {min: 0, max: 2}\n", "    nodes: {count: 0}\n")
	gitCommit(t, repo, "commit", "-q", "-am", "no H100 nodes")
	script, _ = wf.step(t, "diff", "diff")
	env := []string{path, "BASE_REF=main", "CLUSTER=clusters/prod"}
	res := run(t, repo, env, "bash", append(shell, script)...)
	require.Equal(t, 1, res.exit, "stderr:\n%s", res.stderr)
	md := readFileString(t, filepath.Join(repo, "diff.md"))
	require.Contains(t, md, "| h100 | 0 → 2 (+2) | 0 → 1 (+1) | 0.00 → 71773.60 (+71773.60 USD) | **no** |")
	require.Contains(t, md, "**The change does not fit `clusters/prod/capabilities.yaml`'s node pools**")
	require.NoError(t, os.Remove(filepath.Join(repo, "diff.md")))

	// migrate-check passes on current models and fails, naming the file,
	// once a model uses the deprecated spec.image.
	script, _ = wf.step(t, "migrate-check", "migrate")
	env = []string{path, "MODEL_PATHS=" + wf.Env["MODEL_PATHS"]}
	mustRun(t, repo, env, "bash", append(shell, script)...)
	model := filepath.Join(repo, "models", "vllm-basic", "modeldeployment.yaml")
	editFile(t, model, "    contextLength: 8192\n", "    contextLength: 8192\n  image: vllm/vllm-openai:v0.11.0\n")
	res = run(t, repo, env, "bash", append(shell, script)...)
	require.Equal(t, 2, res.exit, "stderr:\n%s", res.stderr)
	require.Contains(t, res.stdout, "models/vllm-basic/modeldeployment.yaml: airunway.ai/v1alpha1/ModelDeployment/inference/llama-3-1-8b: moved `spec.image` to `spec.engine.image`")
}

// examplesRepo is a git repository holding the examples in one commit,
// mirrored as origin/main.
func examplesRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	copyDir(t, filepath.Join(repoRoot, "examples"), filepath.Join(repo, "examples"))
	gitCommit(t, repo, "init", "-q")
	gitCommit(t, repo, "add", "-A")
	gitCommit(t, repo, "commit", "-q", "-m", "base")
	gitCommit(t, repo, "update-ref", "refs/remotes/origin/main", "HEAD")
	return repo
}

// TestDiffReadmeSnippet runs the diff command of docs/gitops.md as written, in a
// repository holding the examples, where a pull request moves prod's A100
// pool to other nodes: only the model placed there changes.
func TestDiffReadmeSnippet(t *testing.T) {
	repo := examplesRepo(t)
	caps := filepath.Join(repo, "examples", "kustomize", "clusters", "prod", "capabilities.yaml")
	editFile(t, caps, "      nvidia.com/gpu.product: NVIDIA-A100-PCIE-80GB\n", "      nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n")
	gitCommit(t, repo, "commit", "-q", "-am", "A100 SXM nodes")

	res := mustRun(t, repo, nil, renderBin(t), "diff", "--capabilities", "examples/kustomize/clusters/prod/capabilities.yaml",
		"origin/main", "HEAD", "--", "examples/kustomize/clusters/prod")
	require.Contains(t, res.stdout, "~ DynamoGraphDeployment/inference/llama-3-1-8b (nvidia.com/v1alpha1)\n")
	require.Contains(t, res.stdout, "-          nvidia.com/gpu.product: NVIDIA-A100-PCIE-80GB\n")
	require.Contains(t, res.stdout, "+          nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n")
	require.NotContains(t, res.stdout, "qwen3-0-6b (nvidia.com", "the model on the L4 pool must not change")
	require.Contains(t, res.stdout, "5 objects: 0 added, 1 changed, 0 removed, 4 unchanged\n") // the Namespace, two models and their graphs
}

// TestPlanReadmeSnippet runs the README's plan diff as written, in a
// repository holding the examples, on the pull request it describes
// (llama-3-1-8b gets two replicas), and finds its output in the README:
// prod's overlay built, its qwen patch included in the cost. On dev the
// same change leaves no room for a rollout: exit 4, as the README says.
func TestPlanReadmeSnippet(t *testing.T) {
	repo := examplesRepo(t)
	model := filepath.Join(repo, "examples", "kustomize", "base", "llama-3-1-8b.yaml")
	editFile(t, model, "      count: 2\n", "      count: 2\n  scaling:\n    replicas: 2\n")
	gitCommit(t, repo, "commit", "-q", "-am", "two llama replicas")

	readme := readFileString(t, filepath.Join(repoRoot, "README.md"))
	const command = "airunway-render plan --base origin/main --capabilities examples/kustomize/clusters/prod/capabilities.yaml examples/kustomize/clusters/prod"
	require.Contains(t, readme, "$ "+command+"\n")
	res := mustRun(t, repo, nil, renderBin(t), strings.Fields(command)[1:]...)
	require.Contains(t, res.stdout, "inference/llama-3-1-8b (1 → 2 pod, 2 → 4 GPU)")
	require.Contains(t, readme, "$ "+command+"\n"+res.stdout+"```", "the README shows this output; paste the new one")

	dev := strings.ReplaceAll(command, "clusters/prod", "clusters/dev")
	res = run(t, repo, nil, renderBin(t), strings.Fields(dev)[1:]...)
	require.Equal(t, 4, res.exit, "stderr:\n%s", res.stderr)
	require.Contains(t, res.stdout, "**no** (rollout stalls)")
}

// writeRepoFile writes a file of a test repository, making its directory.
func writeRepoFile(t *testing.T, repo, name, content string) {
	t.Helper()
	p := filepath.Join(repo, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}
