package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/render"
)

// modelsDir writes the fixture model and its capability file, and returns
// the directory and the two paths.
func modelsDir(t *testing.T) (dir, model, caps string) {
	dir = t.TempDir()
	model, caps = filepath.Join(dir, "models", "qwen.yaml"), filepath.Join(dir, "caps.yaml")
	writeFile(t, model, goodMD)
	writeFile(t, caps, capsPinned)
	return dir, model, caps
}

// -f, repeated, reads the same inputs as arguments, and mixes with them.
func TestFilenameFlag(t *testing.T) {
	dir, model, caps := modelsDir(t)
	want, stderr, code := run(t, "", "render", "--capabilities", caps, model)
	require.Equal(t, 0, code, stderr)
	for _, args := range [][]string{
		{"render", "--capabilities", caps, "-f", model},
		{"render", "--capabilities", caps, "--filename", filepath.Join(dir, "models")},
		{"render", "-f", model, "--capabilities", caps},
	} {
		got, stderr, code := run(t, "", args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.Equal(t, want, got, "%v", args)
	}
	both, stderr, code := run(t, "", "render", "--capabilities", caps, "-f", model, filepath.Join(dir, "other.yaml"))
	require.Equal(t, 1, code, "an argument besides -f is read too: %s", both)
	require.Contains(t, stderr, "other.yaml")
}

// `-f -` reads stdin: the same output as the file, problems named
// <stdin>; stdin may be named once.
func TestFilenameStdin(t *testing.T) {
	_, model, caps := modelsDir(t)
	want, _, _ := run(t, "", "render", "--capabilities", caps, model)
	got, stderr, code := run(t, goodMD, "render", "--capabilities", caps, "-f", "-")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, want, got)

	_, stderr, code = run(t, "kind: [", "render", "--capabilities", caps, "-f", "-")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "(file <stdin>)")

	_, stderr, code = run(t, goodMD, "render", "-f", "-", "-")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "`-` (stdin) may be given only once")
}

// -o json prints one v1 List holding exactly the objects -o yaml prints.
func TestOutputJSON(t *testing.T) {
	_, model, caps := modelsDir(t)
	asYAML, _, _ := run(t, "", "render", "--capabilities", caps, "-f", model)
	asJSON, stderr, code := run(t, "", "render", "--capabilities", caps, "-f", model, "-o", "json")
	require.Equal(t, 0, code, stderr)
	var list struct {
		APIVersion, Kind string
		Items            []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(asJSON), &list))
	require.Equal(t, "v1", list.APIVersion)
	require.Equal(t, "List", list.Kind)
	docs := items(t, asYAML)
	require.Len(t, list.Items, len(docs))
	for i, d := range docs {
		var want map[string]any
		require.NoError(t, sigsyaml.Unmarshal([]byte(d.MustString()), &want))
		require.Equal(t, want, list.Items[i])
	}
	again, _, _ := run(t, "", "render", "--capabilities", caps, "-f", model, "-o", "json")
	require.Equal(t, asJSON, again, "deterministic")
}

func TestOutputFlagErrors(t *testing.T) {
	_, model, caps := modelsDir(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "-f", model, "-o", "xml"}, "`-o` must be \"yaml\" or \"json\", got \"xml\""},
		{[]string{"render", "-f", model, "-o", "json", "--output-dir", t.TempDir()}, "`-o` formats the stream on stdout; `--output-dir` writes YAML files"},
		{[]string{"render", "--capabilities", caps}, "no input: name files or directories as arguments or with `-f`"},
	} {
		out, stderr, code := run(t, "", tc.args...)
		require.Equal(t, 1, code, "%v", tc.args)
		require.Empty(t, out)
		require.Contains(t, stderr, tc.want)
	}
}

// A usage error says what is wrong, the usage line and where help is: a
// few lines, not the whole help.
func TestUsageErrorIsShort(t *testing.T) {
	for _, args := range [][]string{{"render"}, {"render", "--bogus", "x"}, {"rendr"}, {"version", "x"}, {"diff"}} {
		out, stderr, code := run(t, "", args...)
		require.Equal(t, 1, code, "%v", args)
		require.Empty(t, out)
		require.Contains(t, stderr, "\nUsage: airunway-render", "%v", args)
		require.Contains(t, stderr, "--help' for examples and every flag.\n", "%v", args)
		require.LessOrEqual(t, strings.Count(stderr, "\n"), 6, "%v: %s", args, stderr)
		require.NotContains(t, stderr, "Flags:", "%v", args)
	}
	_, stderr, _ := run(t, "", "rendr")
	require.Contains(t, stderr, "Did you mean this?\n\trender", "cobra's suggestion is kept")
}

// Every command's --help goes to stdout with examples and exits 0, and
// `help COMMAND` prints the same.
func TestHelpEveryCommand(t *testing.T) {
	var walk func(c *cobra.Command)
	var seen []string
	walk = func(c *cobra.Command) {
		seen = append(seen, c.CommandPath())
		path := strings.Fields(c.CommandPath())[1:]
		out, stderr, code := run(t, "", append(path, "--help")...)
		require.Equal(t, 0, code, "%v --help", path)
		require.Empty(t, stderr, "%v --help", path)
		require.Contains(t, out, "Usage:\n", "%v --help", path)
		if c.Name() != "help" {
			require.Contains(t, out, "Examples:\n", "%v --help has no examples", path)
		}
		viaHelp, _, code := run(t, "", append([]string{"help"}, path...)...)
		require.Equal(t, 0, code)
		require.Equal(t, out, viaHelp, "help %v", path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	root := Command()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root)
	for _, want := range []string{"airunway-render render", "airunway-render argocd generate", "airunway-render completion bash"} {
		require.Contains(t, seen, want)
	}
}

func TestVersionAndCompletion(t *testing.T) {
	out, stderr, code := run(t, "", "--version")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `^airunway-render version \S+\n$`, out)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, stderr, code := run(t, "", "completion", shell)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, "airunway-render", shell)
	}
	out, _, code = run(t, "", "__complete", "render", "-o", "")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "yaml\njson\n"), "-o completes its formats: %q", out)
}

// Without a capability file the run says what it assumed; with one, or
// with a ClusterCapabilities among the inputs, it does not.
func TestNoCapabilitiesWarns(t *testing.T) {
	dir, model, caps := modelsDir(t)
	out, stderr, code := run(t, "", "render", "-f", model)
	require.Equal(t, 0, code, stderr)
	require.NotEmpty(t, out)
	require.Contains(t, stderr, "[warning default-capabilities]: "+defaultCapabilitiesWarning()+"\n")
	require.Contains(t, stderr, `the embedded default capabilities, which assume every one of dynamo 1.1.1, kaito 0.10.0, kuberay 1.3.0, llmd 0.6.0, vllm installed and ready; node pools "nvidia-gpu"`)

	_, stderr, code = run(t, "", "render", "-f", model, "--capabilities", caps)
	require.Equal(t, 0, code)
	require.Empty(t, stderr)
	_, stderr, code = run(t, "", "render", dir) // caps.yaml is among the inputs
	require.Equal(t, 0, code)
	require.Empty(t, stderr)
}

// Warnings carry a code; --ignore-warnings silences codes and
// --warnings-as-errors fails the run, writing nothing; the capability
// file's spec.warnings does the same for every run that reads it.
func TestWarningPolicy(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.yaml")
	writeFile(t, model, "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: m, namespace: ns}\nspec:\n  model: {id: Qwen/Qwen3-0.6B}\n  provider: {name: vllm}\n  engine: {trustRemoteCode: true}\n  resources: {gpu: {count: 1}}\n")
	caps := func(extra string) string {
		p := filepath.Join(t.TempDir(), "caps.yaml")
		writeFile(t, p, "apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: c}\nspec:\n  providers: [{name: vllm}]\n  nodePools: [{name: l4, selector: {a: b}, gpu: {resourceName: nvidia.com/gpu, perNode: 1}}]\n"+extra)
		return p
	}
	plain := caps("")

	out, stderr, code := run(t, "", "render", "-f", model, "--capabilities", plain)
	require.Equal(t, 0, code, stderr)
	require.NotEmpty(t, out)
	require.Contains(t, stderr, "[warning trust-remote-code] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.engine.trustRemoteCode: is true")
	require.Contains(t, stderr, "[warning floating-image] ")

	_, stderr, code = run(t, "", "render", "-f", model, "--capabilities", plain, "--ignore-warnings", "trust-remote-code,floating-image")
	require.Equal(t, 0, code)
	require.Empty(t, stderr)

	outDir := filepath.Join(t.TempDir(), "out")
	out, stderr, code = run(t, "", "render", "-f", model, "--capabilities", plain, "--ignore-warnings", "floating-image", "--warnings-as-errors", "--output-dir", outDir)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, stderr, "[error trust-remote-code] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.engine.trustRemoteCode: is true: the model repository may run arbitrary code in the model server (a warning, made an error by warnings-as-errors)")
	require.NoDirExists(t, outDir, "nothing is written")

	_, stderr, code = run(t, "", "render", "-f", model, "--capabilities", caps("  warnings: {ignore: [floating-image], asErrors: true}\n"))
	require.Equal(t, 1, code, "the capability file's policy applies")
	require.Contains(t, stderr, "[error trust-remote-code] ")

	_, stderr, code = run(t, "", "render", "-f", model, "--capabilities", caps("  warnings: {ignore: [floating-imag]}\n"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `spec.warnings.ignore[0]: "floating-imag" is not a warning code: must be one of `)
	require.Contains(t, stderr, `; did you mean "floating-image"?`)

	_, stderr, code = run(t, "", "render", "-f", model, "--ignore-warnings", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "`--ignore-warnings`: \"nope\" is not a warning code")
}

// `capabilities nodes` prints the Nodes of a capability file as YAML (or a
// JSON List) that parses back into Nodes; it needs -f.
func TestCapabilitiesNodes(t *testing.T) {
	caps := "../examples/kustomize/clusters/prod/capabilities.yaml" // l4: 4 nodes, a100: 1 to 4 (generated at 4), cpu: 3
	out, stderr, code := run(t, "", "capabilities", "nodes", "-f", caps)
	require.Equal(t, 0, code, stderr)
	docs := items(t, out)
	require.Len(t, docs, 11)
	for _, d := range docs {
		require.Equal(t, "Node", d.GetKind())
		require.Equal(t, "fake", d.GetAnnotations()["kwok.x-k8s.io/node"])
	}
	again, _, _ := run(t, "", "capabilities", "nodes", "-f", caps)
	require.Equal(t, out, again)

	asJSON, _, code := run(t, "", "capabilities", "nodes", "-f", caps, "-o", "json")
	require.Equal(t, 0, code)
	var list struct{ Items []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(asJSON), &list))
	require.Len(t, list.Items, len(docs))

	_, stderr, code = run(t, "", "capabilities", "nodes")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "`-f FILE` must name the capability file")
}

// TestJSONListIsMarshalIndents: the List written an item at a time is
// the bytes json.MarshalIndent gives for the whole List (what -o json
// printed when it held every item as JSON at once): none, one and several
// items, nested lists, empty objects, and characters JSON escapes.
func TestJSONListIsMarshalIndents(t *testing.T) {
	objects := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ml}\ndata: {html: \"<a href='x'>&</a>\", separators: \"\u2028\u2029\", quote: '\"\\'}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b, labels: {}}\nspec: {replicas: 2, template: {spec: {containers: [{name: c, args: [], env: [{name: X, value: \"1\"}]}]}}}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: c}\nspec: {ports: [{port: 80}, {port: 8080}], selector: {b: \"2\", a: \"1\"}}\n",
	}
	for n := 0; n <= len(objects); n++ {
		var encoded []render.Encoded
		raw := []json.RawMessage{}
		for _, o := range objects[:n] {
			encoded = append(encoded, render.Encoded{YAML: []byte(o)})
			j, err := sigsyaml.YAMLToJSON([]byte(o))
			require.NoError(t, err)
			raw = append(raw, j)
		}
		want, err := json.MarshalIndent(struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}{"v1", "List", raw}, "", "    ")
		require.NoError(t, err)
		var got strings.Builder
		require.NoError(t, writeJSONList(&got, encoded))
		require.Equal(t, string(want)+"\n", got.String(), "%d items", n)
	}
}
