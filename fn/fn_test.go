package fn

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/fntest"
)

// Fixtures shared with the command line's tests (internal/testing/fntest).
const (
	goodMD     = fntest.GoodMD
	badMD      = fntest.BadMD
	capsPinned = fntest.CapsPinned
)

var resourceList = fntest.ResourceList

func run(t *testing.T, stdin string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func items(t *testing.T, rl string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(rl), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	return nodes
}

func find(nodes []*yaml.RNode, kind, name string) *yaml.RNode {
	for _, n := range nodes {
		if n.GetKind() == kind && n.GetName() == name {
			return n
		}
	}
	return nil
}

func TestFunctionUsesFunctionConfigCapabilities(t *testing.T) {
	out, stderr, code := run(t, resourceList(capsPinned, goodMD))
	require.Equal(t, 0, code, stderr)
	d := find(items(t, out), "Deployment", "qwen")
	require.NotNil(t, d)
	require.Contains(t, d.MustString(), "image: vllm/vllm-openai:v0.11.0")
}

func TestFunctionIgnoresDeclarationConfigMap(t *testing.T) {
	decl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: airunway-render}\n"
	out, stderr, code := run(t, resourceList(decl, goodMD))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, find(items(t, out), "Deployment", "qwen").MustString(), "image: vllm/vllm-openai:cu130-nightly")
}

func TestFunctionErrorLeavesItemsUnchanged(t *testing.T) {
	in := resourceList("", goodMD, badMD)
	out, stderr, code := run(t, in)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "[error] airunway.ai/v1alpha1/ModelDeployment/ml/broken spec.scaling.replicas: must be less than or equal to 32, got 99")
	require.Contains(t, stderr, "nothing was rendered")

	got := items(t, out)
	require.Len(t, got, 2, "no generated objects")
	for _, n := range got {
		require.Empty(t, n.GetAnnotations()["render.airunway.ai/provider"], "input items come back unannotated")
	}
	require.Contains(t, out, "results:")
	require.Contains(t, out, "path: spec.scaling.replicas")
	require.Contains(t, out, "severity: error")
}

func TestFunctionRejectsGarbage(t *testing.T) {
	_, stderr, code := run(t, "this is not a ResourceList")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "[error]")
}

func TestFunctionPassesLocalConfigThrough(t *testing.T) {
	kptfile := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n# a comment that must survive\npipeline: {mutators: [{exec: airunway-render}]}\n"
	out, stderr, code := run(t, resourceList("", kptfile, capsPinned, goodMD))
	require.Equal(t, 0, code, stderr)
	got := items(t, out)
	require.Contains(t, find(got, "Kptfile", "pkg").MustString(), "# a comment that must survive")
	require.NotNil(t, find(got, "ClusterCapabilities", "pinned"), "a local-config capability file stays in the package")
	require.Contains(t, find(got, "Deployment", "qwen").MustString(), "v0.11.0", "and is used")
}

func TestFunctionConsumesNonLocalCapabilities(t *testing.T) {
	caps := strings.Replace(capsPinned, "    config.kubernetes.io/local-config: \"true\"\n", "    team: infra\n", 1)
	out, stderr, code := run(t, resourceList("", caps, goodMD))
	require.Equal(t, 0, code, stderr)
	require.Nil(t, find(items(t, out), "ClusterCapabilities", "pinned"))
	require.Contains(t, stderr, "[warning capabilities-input]")
	require.Contains(t, stderr, "consumed and left out of the output")
}

func TestFunctionConfigAndCapabilityItem(t *testing.T) {
	// kpt passes a configPath file both ways: no warning.
	_, stderr, code := run(t, resourceList(capsPinned, capsPinned, goodMD))
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	// A second, different capability object is ignored, and said so.
	other := strings.Replace(capsPinned, "name: pinned", "name: other", 1)
	_, stderr, code = run(t, resourceList(capsPinned, other, goodMD))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, `[warning capabilities-input] airunway.ai/v1alpha1/ClusterCapabilities/other: ignored: the function config already provides the cluster capabilities (ClusterCapabilities "pinned")`)
}

// TestKptSeesEachProblemOnce: kpt prints a function's results and then its
// stderr, so for items kpt marks (config.k8s.io/id without kustomize's
// id) the problems are results only and stderr counts them; kustomize
// marks its items with its own id and shows only stderr, which then has
// every problem.
func TestKptSeesEachProblemOnce(t *testing.T) {
	model := func(annotations string) string {
		return "- apiVersion: airunway.ai/v1alpha1\n  kind: ModelDeployment\n  metadata:\n    name: m\n    namespace: ns\n    annotations: {" + annotations + "}\n  spec: {model: {id: a/b}, image: x/y:1, scaling: {replicas: 40}, resources: {gpu: {count: 1}}, provider: {name: vllm}}\n"
	}
	in := func(annotations string) string {
		return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + model(annotations)
	}
	for _, tc := range []struct {
		name, annotations string
		lines             bool
	}{
		{"kpt", `config.k8s.io/id: "1"`, false},
		{"kustomize", `config.k8s.io/id: "1", kustomize.config.k8s.io/id: "kind: ModelDeployment"`, true},
		{"by hand", ``, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.Equal(t, 1, Run(strings.NewReader(in(tc.annotations)), &stdout, &stderr))
			require.Contains(t, stdout.String(), "must be less than or equal to 32, got 40", "the results have every problem")
			require.Contains(t, stdout.String(), "code: deprecated-field")
			if tc.lines {
				require.Contains(t, stderr.String(), "[error] airunway.ai/v1alpha1/ModelDeployment/ns/m spec.scaling.replicas: must be less than or equal to 32, got 40\n")
				require.Contains(t, stderr.String(), "[warning deprecated-field] ")
			} else {
				require.Equal(t, "airunway-render: 1 error(s), 1 warning(s); nothing was rendered (the results say why)\n", stderr.String())
			}
		})
	}
}

// A model assigned to another cluster of a fleet: kustomize (and a
// ResourceList by hand) gets it left out, since what it prints is
// applied; kpt gets it back unchanged, since kpt deletes the file of an
// item a function leaves out.
func TestFleetModelOfAnotherCluster(t *testing.T) {
	in := func(id string) string {
		return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
			"- apiVersion: airunway.ai/v1alpha1\n  kind: ModelDeployment\n  metadata:\n    name: m\n    namespace: ns\n    annotations: {airunway.ai/cluster: west, " + id + "}\n  spec: {model: {id: Qwen/Qwen3-0.6B}, resources: {gpu: {count: 1}}, provider: {name: vllm}}\n" +
			"functionConfig:\n  apiVersion: airunway.ai/v1alpha1\n  kind: ClusterCapabilities\n  metadata: {name: east}\n  spec: {providers: [{name: vllm}]}\n"
	}
	for _, tc := range []struct {
		name, id string
		kept     bool
	}{
		{"kpt", `config.k8s.io/id: "1"`, true},
		{"kustomize", `config.k8s.io/id: "1", kustomize.config.k8s.io/id: "kind: ModelDeployment"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := run(t, in(tc.id))
			require.Equal(t, 0, code, stderr)
			got := items(t, out)
			require.Equal(t, tc.kept, find(got, "ModelDeployment", "m") != nil)
			require.Nil(t, find(got, "Deployment", "m"), "rendered for no cluster but west")
			require.Contains(t, out, `rendered 0 model(s) for cluster "east" and skipped 1 not assigned to it: ns/m (assigned to cluster west)`)
		})
	}
}

// failingWriter takes n bytes, then fails.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("pipe closed")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestFunctionStreamsItsOutput: the ResourceList goes to stdout as it is
// written, the same bytes as Processor.Run returns; a stdout that fails
// part of the way is an error of the run, said on stderr.
func TestFunctionStreamsItsOutput(t *testing.T) {
	in := resourceList(capsPinned, goodMD)
	want, err := (&Processor{}).Run([]byte(in))
	require.NoError(t, err)
	out, _, code := run(t, in)
	require.Zero(t, code)
	require.Equal(t, string(want), out)

	var errOut bytes.Buffer
	code = Run(strings.NewReader(in), &failingWriter{n: 100}, &errOut)
	require.Equal(t, 1, code)
	require.Contains(t, errOut.String(), "airunway-render: cannot write the ResourceList: pipe closed")
}
