package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const fleetDir = "../examples/fleet/clusters"

// The fleet example's plan in every format, held to
// cli/testdata/plan/fleet.<format> (-update rewrites them). The example's
// models carry the assignment the plan gives, so --write on a copy
// changes nothing: the example is what plan --fleet --write leaves.
func TestFleetPlanGolden(t *testing.T) {
	for _, format := range planFormats {
		t.Run(format, func(t *testing.T) {
			out, stderr, code := run(t, "", "plan", "--fleet", fleetDir, "-f", "../examples/fleet/models", "-o", format)
			require.Equal(t, 0, code, stderr)
			golden := filepath.Join("testdata", "plan", "fleet."+format)
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "go test ./cli -run TestFleetPlanGolden -update")
			require.Equal(t, string(want), out)
		})
	}
	clusters, models := copyFleet(t, false)
	_, stderr, code := run(t, "", "plan", "--fleet", clusters, "-f", models, "--write")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "every model is already assigned; no file was changed")
}

// copyFleet copies the example fleet (its clusters' overlays, models and
// renderer) to a temporary directory, the models without their
// assignments when strip is set, and returns the clusters' and the
// models' directories: each cluster's overlay includes the copied models.
func copyFleet(t *testing.T, strip bool) (clusters, models string) {
	t.Helper()
	root := t.TempDir()
	copyTree(t, "../examples/fleet/clusters", filepath.Join(root, "clusters"))
	copyTree(t, "../examples/fleet/render", filepath.Join(root, "render"))
	models = filepath.Join(root, "models")
	entries, err := os.ReadDir("../examples/fleet/models")
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("../examples/fleet/models", e.Name()))
		require.NoError(t, err)
		text := string(data)
		if strip {
			text = stripAssignment(text)
		}
		writeFile(t, filepath.Join(models, e.Name()), text)
	}
	return filepath.Join(root, "clusters"), models
}

// addFleetModel writes a model file into the copied fleet's models and
// lists it in their kustomization, as a pull request adding a model does.
func addFleetModel(t *testing.T, models, name, text string) {
	t.Helper()
	path := filepath.Join(models, name+".yaml")
	_, err := os.Stat(path)
	writeFile(t, path, text)
	if os.IsNotExist(err) {
		k := filepath.Join(models, "kustomization.yaml")
		data, err := os.ReadFile(k)
		require.NoError(t, err)
		writeFile(t, k, string(data)+"- "+name+".yaml\n")
	}
}

// stripAssignment removes the airunway.ai/cluster line, and the
// annotations key when it was the only annotation.
func stripAssignment(text string) string {
	var out []string
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "airunway.ai/cluster:") {
			continue
		}
		if strings.TrimSpace(l) == "annotations:" && i+2 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "airunway.ai/cluster:") && !strings.HasPrefix(lines[i+2], "    ") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

type fleetJSON struct {
	Fits   bool
	Models []struct {
		Namespace, Name, Cluster, Reason string
		Kept, Fits                       bool
		Verdicts                         []struct {
			Cluster, Reason string
			Fits            bool
		}
	}
	Clusters []struct {
		Name   string
		Fits   bool
		Models []string
		Plan   struct{ Fits bool }
	}
}

func fleetPlan(t *testing.T, wantCode int, args ...string) fleetJSON {
	t.Helper()
	out, stderr, code := run(t, "", append([]string{"plan", "-o", "json"}, args...)...)
	require.Equal(t, wantCode, code, stderr)
	var f fleetJSON
	require.NoError(t, json.Unmarshal([]byte(out), &f), out)
	return f
}

func clusterOf(f fleetJSON, name string) string {
	for _, m := range f.Models {
		if m.Name == name {
			return m.Cluster
		}
	}
	return "(absent)"
}

// --write records the assignment on unassigned models, keeping comments
// and layout; a second run changes nothing; rendering each cluster then
// takes exactly its models.
func TestFleetPlanWrite(t *testing.T) {
	fleet, models := copyFleet(t, true)
	f := fleetPlan(t, 0, "--fleet", fleet, "-f", models)
	for _, m := range f.Models {
		require.False(t, m.Kept, m.Name)
	}
	require.Equal(t, "gpu-west", clusterOf(f, "llama-3-1-8b"), "the HIPAA selector allows only gpu-west")
	require.Equal(t, "gpu-west", clusterOf(f, "llama-3-3-70b"), "four L4s hold no 70B model")
	require.Equal(t, "gpu-west", clusterOf(f, "qwen3-0-6b"), "free GPUs of the H100 node in use cost nothing more")
	require.Equal(t, "gpu-east", clusterOf(f, "qwen3-8b"), "gpu-west's node in use is full: a second one costs more than an L4 node")
	table, _, tableCode := run(t, "", "plan", "--fleet", fleet, "-f", models)
	require.Equal(t, 0, tableCode)
	doc, err := os.ReadFile("../docs/plan.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), table, "docs/plan.md shows this plan; paste the new one")

	_, stderr, code := run(t, "", "plan", "--fleet", fleet, "-f", models, "--write")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "qwen3-8b.yaml: airunway.ai/v1alpha1/ModelDeployment/inference/qwen3-8b: assigned to cluster \"gpu-east\" (annotation airunway.ai/cluster)")
	require.Contains(t, stderr, "recorded the cluster of 4 model(s) in 4 file(s)")
	for _, name := range []string{"llama-3-1-8b", "llama-3-3-70b", "qwen3-0-6b", "qwen3-8b"} {
		written, err := os.ReadFile(filepath.Join(models, name+".yaml"))
		require.NoError(t, err)
		example, err := os.ReadFile(filepath.Join("../examples/fleet/models", name+".yaml"))
		require.NoError(t, err)
		require.Equal(t, string(example), string(written), "written as the example has it, comments kept")
	}
	f = fleetPlan(t, 0, "--fleet", fleet, "-f", models)
	for _, m := range f.Models {
		require.True(t, m.Kept, m.Name)
	}

	for _, c := range f.Clusters {
		out, stderr, code := run(t, "", "render", "--capabilities", filepath.Join(fleet, c.Name, "capabilities.yaml"), models)
		require.Equal(t, 0, code, stderr)
		for _, m := range f.Models {
			rendered := strings.Contains(out, "render.airunway.ai/generated-from: "+m.Name+"\n")
			require.Equal(t, m.Cluster == c.Name, rendered, "%s rendered for %s", m.Name, c.Name)
		}
		require.Contains(t, stderr, fmt.Sprintf("[info fleet-skipped]: rendered %d model(s) for cluster %q and skipped %d not assigned to it", len(c.Models), c.Name, 4-len(c.Models)))
	}
}

// Assignments in Git are never moved, even when the plan would now
// choose otherwise; a model added later takes what is left.
func TestFleetPlanKeepsAssignments(t *testing.T) {
	fleet, models := copyFleet(t, false)
	// By hand, qwen3-0-6b goes to gpu-east, where the plan would not put it.
	path := filepath.Join(models, "qwen3-0-6b.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	writeFile(t, path, strings.Replace(string(data), "airunway.ai/cluster: gpu-west", "airunway.ai/cluster: gpu-east", 1))
	addFleetModel(t, models, "extra", fleetModel("extra", 1, ""))
	// gpu-east's four L4s now run four pods and have no room for a
	// rollout's new one: every model fits, but exit 4 says the rollouts
	// stall.
	f := fleetPlan(t, exitRolloutShort, "--fleet", fleet, "-f", models)
	require.Equal(t, "gpu-east", clusterOf(f, "qwen3-0-6b"))
	require.Equal(t, "gpu-east", clusterOf(f, "qwen3-8b"))
	require.Equal(t, "gpu-west", clusterOf(f, "extra"), "the node already in use on gpu-west has room: it adds no cost there")

	// A kept model that no longer fits stays, and the plan says so.
	addFleetModel(t, models, "extra", fleetModel("extra", 4, "gpu-east"))
	f = fleetPlan(t, exitShort, "--fleet", fleet, "-f", models)
	require.False(t, f.Fits)
	short := 0
	for _, m := range f.Models {
		require.True(t, m.Kept, m.Name)
		if !m.Fits {
			short++
			require.Equal(t, "gpu-east", m.Cluster, "not moved")
			require.Contains(t, m.Reason, `pool "l4" would need`)
		}
	}
	require.Positive(t, short)
	for _, c := range f.Clusters {
		require.Equal(t, c.Name == "gpu-west", c.Fits, "gpu-east's plan shows every model assigned there, those that do not fit too")
	}
}

// fleetModel is a one-GPU-per-replica vLLM model with replicas pods,
// assigned to cluster when it is not "".
func fleetModel(name string, replicas int, cluster string) string {
	annotations := ""
	if cluster != "" {
		annotations = "  annotations: {airunway.ai/cluster: " + cluster + "}\n"
	}
	return fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: %s
  namespace: inference
%sspec:
  model: {id: Qwen/Qwen3-0.6B}
  engine: {type: vllm, contextLength: 4096}
  scaling: {replicas: %d}
  resources: {gpu: {count: 1}}
`, name, annotations, replicas)
}

// A model that fits no cluster: exit 3, each cluster's reason, and
// --write writes nothing.
func TestFleetPlanFitsNowhere(t *testing.T) {
	fleet, models := copyFleet(t, true)
	addFleetModel(t, models, "huge", fleetModel("huge", 12, ""))
	f := fleetPlan(t, exitShort, "--fleet", fleet, "-f", models)
	require.False(t, f.Fits)
	require.Equal(t, "", clusterOf(f, "huge"))
	out, stderr, code := run(t, "", "plan", "--fleet", fleet, "-f", models, "--write")
	require.Equal(t, exitShort, code)
	require.Contains(t, out, "Nowhere: inference/huge fits no cluster:\n  - gpu-east: pool \"l4\" would need")
	require.Contains(t, out, "  - gpu-west: pool \"h100\" would need")
	require.Contains(t, stderr, "nothing was written: the fleet does not fit")
	data, err := os.ReadFile(filepath.Join(models, "qwen3-8b.yaml"))
	require.NoError(t, err)
	require.NotContains(t, string(data), "airunway.ai/cluster")
}

func TestFleetPlanErrors(t *testing.T) {
	fleet, models := copyFleet(t, false)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"with capabilities", []string{"--fleet", fleet, "--capabilities", "x.yaml", "-f", models}, "`--fleet` and `--capabilities` cannot be used together"},
		{"write without fleet", []string{"--capabilities", "x.yaml", "--write", "-f", models}, "`--write` records a fleet's assignment and needs `--fleet DIR`"},
		{"write with base", []string{"--fleet", fleet, "--write", "--base", "HEAD", "-f", models}, "`--write` cannot be used with `--base`"},
		{"no capability file", []string{"--fleet", models, "-f", models}, "holds no ClusterCapabilities: `--fleet` must name a directory with one capability file per cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := run(t, "", append([]string{"plan"}, tc.args...)...)
			require.Equal(t, 1, code, stderr)
			require.Empty(t, out)
			require.Contains(t, stderr, tc.want)
		})
	}

	t.Run("unknown cluster", func(t *testing.T) {
		writeFile(t, filepath.Join(models, "lost.yaml"), fleetModel("lost", 1, "gpu-north"))
		defer os.Remove(filepath.Join(models, "lost.yaml"))
		out, stderr, code := run(t, "", "plan", "--fleet", fleet, "-f", models)
		require.Equal(t, 1, code)
		require.Empty(t, out)
		require.Contains(t, stderr, `ModelDeployment inference/lost is assigned to cluster "gpu-north" (annotation airunway.ai/cluster), which the fleet does not have: must be one of "gpu-east", "gpu-west"`)
	})

	t.Run("invalid model is an input error, not a shortage", func(t *testing.T) {
		writeFile(t, filepath.Join(models, "bad.yaml"), "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: bad, namespace: inference}\nspec: {engine: {type: vllm}}\n")
		defer os.Remove(filepath.Join(models, "bad.yaml"))
		out, stderr, code := run(t, "", "plan", "--fleet", fleet, "-f", models)
		require.Equal(t, 1, code)
		require.Empty(t, out)
		require.Contains(t, stderr, "spec.model")
	})

	t.Run("two capability files of one cluster", func(t *testing.T) {
		dir := t.TempDir()
		data, err := os.ReadFile(filepath.Join(fleet, "gpu-east", "capabilities.yaml"))
		require.NoError(t, err)
		writeFile(t, filepath.Join(dir, "a.yaml"), string(data))
		writeFile(t, filepath.Join(dir, "b.yaml"), string(data))
		_, stderr, code := run(t, "", "plan", "--fleet", dir, "-f", models)
		require.Equal(t, 1, code)
		require.Contains(t, stderr, `names cluster "gpu-east", as`)
	})

	t.Run("two currencies", func(t *testing.T) {
		dir := t.TempDir()
		for _, c := range []string{"gpu-east", "gpu-west"} {
			data, err := os.ReadFile(filepath.Join(fleet, c, "capabilities.yaml"))
			require.NoError(t, err)
			text := string(data)
			if c == "gpu-west" {
				text = strings.Replace(text, "currency: USD", "currency: EUR", 1)
			}
			writeFile(t, filepath.Join(dir, c+".yaml"), text)
		}
		_, stderr, code := run(t, "", "plan", "--fleet", dir, "-f", models)
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "`pricePerNodeHour` must use one currency across the fleet")
	})
}

// fleetCapabilityFiles are the example fleet's capability files, by
// repository path clusters/<name>.yaml.
func fleetCapabilityFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, c := range []string{"gpu-east", "gpu-west"} {
		data, err := os.ReadFile(filepath.Join(fleetDir, c, "capabilities.yaml"))
		require.NoError(t, err)
		files["clusters/"+c+".yaml"] = string(data)
	}
	return files
}

// --base: what a change moves, on a real repository.
func TestFleetPlanBase(t *testing.T) {
	r := newDiffTestRepo(t)
	files := fleetCapabilityFiles(t)
	files["models/a.yaml"] = fleetModel("a", 1, "gpu-east")
	files["models/b.yaml"] = fleetModel("b", 1, "gpu-east")
	r.commit("base", files)
	r.commit("move", map[string]string{"models/a.yaml": fleetModel("a", 1, "gpu-west"), "models/c.yaml": fleetModel("c", 2, "")})
	out, stderr, code := run(t, "", "plan", "-C", r.dir, "--fleet", "clusters", "--base", "HEAD~1", "models")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "inference/a  gpu-east  gpu-west  moved")
	// c's two GPUs would open a second L4 node on gpu-east; the H100 node
	// a now opens on gpu-west has room for them at no added cost.
	require.Contains(t, out, "inference/c  -         gpu-west  added")
	require.NotContains(t, out, "inference/b", "a model that stays is not listed")
	require.Contains(t, out, "Against HEAD~1: 1 model(s) moved, 1 added, 0 removed; every model has a cluster where its pods fit.")
}

// --base: a change after which a kept model no longer renders on its
// cluster fails that cluster's build; the plan says so, not "fewer GPUs",
// and names where the model would run.
func TestFleetPlanBaseBuildFails(t *testing.T) {
	r := newDiffTestRepo(t)
	files := fleetCapabilityFiles(t)
	files["models/a.yaml"] = fleetModel("a", 1, "gpu-west")
	files["models/b.yaml"] = fleetModel("b", 1, "gpu-east")
	r.commit("base", files)
	west := strings.Replace(files["clusters/gpu-west.yaml"], "  providers:\n  - name: vllm\n    images:\n      vllm: vllm/vllm-openai:v0.19.1\n", "  providers: []\n", 1)
	require.NotEqual(t, files["clusters/gpu-west.yaml"], west)
	r.commit("vLLM gone from gpu-west", map[string]string{"clusters/gpu-west.yaml": west})

	out, stderr, code := run(t, "", "plan", "-C", r.dir, "--fleet", "clusters", "--base", "HEAD~1", "models")
	require.Equal(t, exitShort, code, stderr)
	require.Contains(t, out, "inference/a  gpu-west  gpu-west  no longer fits")
	require.Regexp(t, `gpu-west +1 → 0 \(-1\) .* \*\*no\*\*`, out, "the GPUs it no longer counts are no saving")
	require.Contains(t, out, `Cluster "gpu-west": its build FAILS after the change, and delivers nothing: inference/a: `)
	require.Contains(t, out, "inference/a would render and fit on: gpu-east (edit its annotation airunway.ai/cluster to move it)")

	out, _, code = run(t, "", "plan", "--fleet", filepath.Join(r.dir, "clusters"), "-f", filepath.Join(r.dir, "models"))
	require.Equal(t, exitShort, code)
	require.Contains(t, out, `Cluster "gpu-west": its build FAILS, and delivers nothing: inference/a: `)
	require.Contains(t, out, "; it would render and fit on: gpu-east")
}

// build of each cluster's overlay, as the Argo CD plugin runs it: the
// cluster's models and nothing else.
func TestFleetBuild(t *testing.T) {
	f := fleetPlan(t, 0, "--fleet", fleetDir, "-f", "../examples/fleet/models")
	t.Setenv(asFunction, "1")
	for _, c := range f.Clusters {
		out, stderr, code := run(t, "", "build", filepath.Join(fleetDir, c.Name), "--root", "../examples/fleet")
		require.Equal(t, 0, code, stderr)
		var got []string
		for _, doc := range strings.Split(out, "\n---\n") {
			if strings.Contains(doc, "kind: ModelDeployment\n") {
				for _, m := range f.Models {
					if strings.Contains(doc, "\n  name: "+m.Name+"\n") {
						got = append(got, m.Namespace+"/"+m.Name)
					}
				}
			}
		}
		// The function's own stderr (its fleet-skipped line) goes to the
		// process's, as kustomize passes it on; fn's tests read it.
		require.Equal(t, c.Models, got, c.Name)
	}
}

// --write writes only inside the paths named: a model file that is a
// link out of them is refused as migrate refuses it, and nothing is
// written.
func TestFleetPlanWriteStaysInside(t *testing.T) {
	fleet, models := copyFleet(t, true)
	outside := filepath.Join(t.TempDir(), "outside.yaml")
	writeFile(t, outside, fleetModel("outside", 1, ""))
	require.NoError(t, os.Symlink(outside, filepath.Join(models, "link.yaml")))
	_, stderr, code := run(t, "", "plan", "--fleet", fleet, "-f", models, "--write")
	require.Equal(t, 1, code, stderr)
	data, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, fleetModel("outside", 1, ""), string(data))
	data, err = os.ReadFile(filepath.Join(models, "qwen3-8b.yaml"))
	require.NoError(t, err)
	require.NotContains(t, string(data), "airunway.ai/cluster:")
}

// copyTree copies a directory of regular files.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(to, rel), string(data))
		return nil
	}))
}

// The fleet's capability files declare its clusters: a model assigned to
// a misspelt cluster, or to none, fails every cluster's build (what the
// Argo CD plugin and kustomize run) instead of running nowhere, or
// everywhere, with an info line nobody sees.
func TestFleetBuildRefusesUnknownAndUnassigned(t *testing.T) {
	t.Setenv(asFunction, "1")
	root := t.TempDir()
	copyTree(t, "../examples/fleet/clusters", filepath.Join(root, "clusters"))
	copyTree(t, "../examples/fleet/models", filepath.Join(root, "models"))
	copyTree(t, "../examples/fleet/render", filepath.Join(root, "render"))
	model := filepath.Join(root, "models", "qwen3-8b.yaml")
	data, err := os.ReadFile(model)
	require.NoError(t, err)
	require.Contains(t, string(data), "airunway.ai/cluster: gpu-east")

	// The examples build as they are.
	_, stderr, code := run(t, "", "build", filepath.Join(root, "clusters", "gpu-east"), "--root", root)
	require.Equal(t, 0, code, stderr)

	writeFile(t, model, strings.Replace(string(data), "airunway.ai/cluster: gpu-east", "airunway.ai/cluster: gpu-eats", 1))
	// The function's own message goes to the process's stderr, as
	// kustomize passes it on (the Argo CD plugin's log shows it); render
	// prints the same check's message here.
	for _, c := range []string{"gpu-east", "gpu-west"} {
		out, stderr, code := run(t, "", "build", filepath.Join(root, "clusters", c), "--root", root)
		require.Equal(t, 1, code, "%s: %s", c, out)
		require.Empty(t, out)
		require.Contains(t, stderr, "couldn't execute function")
		out, stderr, code = run(t, "", "render", "--capabilities", filepath.Join(root, "clusters", c, "capabilities.yaml"), filepath.Join(root, "models"))
		require.Equal(t, 1, code, "%s: %s", c, out)
		require.Contains(t, stderr, `assigns the model to cluster "gpu-eats", which the fleet does not have, so no cluster would run it`)
		require.Contains(t, stderr, `did you mean "gpu-east"?`)
	}

	writeFile(t, model, stripAssignment(string(data)))
	_, _, code = run(t, "", "build", filepath.Join(root, "clusters", "gpu-west"), "--root", root)
	require.Equal(t, 1, code)
	_, stderr, code = run(t, "", "render", "--capabilities", filepath.Join(root, "clusters", "gpu-west", "capabilities.yaml"), filepath.Join(root, "models"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "is not set: the model is assigned to no cluster of the fleet (gpu-east, gpu-west)")
}
