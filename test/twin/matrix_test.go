package twin_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
)

var update = flag.Bool("update", false, "rewrite testdata/examples.golden from this run")

// The shipped examples and the shipped capability files ("" is the
// embedded default). TestExampleMatrix runs every pair.
var (
	exampleModels = []string{"examples/vllm-basic/modeldeployment.yaml", "examples/kpt/modeldeployment.yaml", "examples/gateway/modeldeployment.yaml", "examples/kustomize/base"}
	exampleCaps   = []string{"", "examples/kustomize/clusters/dev/capabilities.yaml", "examples/kustomize/clusters/prod/capabilities.yaml",
		"examples/kpt/capabilities.yaml", "examples/gateway/capabilities.yaml", "examples/capabilities/prod-eastus.yaml"}
)

// TestExampleMatrix renders every shipped example for every shipped
// capability file and runs what renders on the twin, with the real
// consumer of each provider's output (the controller-manager for
// Deployments, the real KubeRay operator, the Dynamo and KAITO
// stand-ins): every GPU pod on the pool the model's annotation names, with
// its GPUs; every pod without GPUs on a node of the CPU pool. What renders
// where, and what the renderer refuses, is held to testdata/examples.golden
// (`go test ./test/twin -run TestExampleMatrix -update` rewrites it), so a
// refusal is a decision, not a skipped case.
func TestExampleMatrix(t *testing.T) {
	var outcomes []string
	for _, caps := range exampleCaps {
		name := caps
		if name == "" {
			name = "embedded default"
		}
		t.Run(name, func(t *testing.T) {
			file := caps
			if file == "" {
				file = filepath.Join(t.TempDir(), "default.yaml")
				require.NoError(t, os.WriteFile(file, capabilities.DefaultYAML(), 0o644))
			}
			nodes := useCluster(t, file)
			for _, example := range exampleModels {
				t.Run(example, func(t *testing.T) {
					objs, refused := tryRender(t, file, example)
					if refused != "" {
						outcomes = append(outcomes, name+" | "+example+" | refused: "+refused)
						addRow("- | %s | %s | refused: %s | - | - | -", example, name, refused)
						return
					}
					for _, m := range runExample(t, name, example, file, objs, nodes) {
						outcomes = append(outcomes, name+" | "+example+" | "+m)
					}
				})
			}
		})
	}
	golden := filepath.Join("testdata", "examples.golden")
	got := strings.Join(outcomes, "\n") + "\n"
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "what renders where changed; if on purpose, rerun with -update")
}

// tryRender renders inputs for the capability file: the objects, or the
// renderer's first error line when it refuses.
func tryRender(t *testing.T, caps string, inputs ...string) ([]*unstructured.Unstructured, string) {
	t.Helper()
	cmd := exec.Command(renderBin(t), append([]string{"render", "--capabilities", caps}, inputs...)...)
	cmd.Dir = repoRoot
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(line, "[error]") {
				return nil, line
			}
		}
		t.Fatalf("render failed without an [error] line: %v\n%s", err, stderr.String())
	}
	return render(t, caps, inputs...), ""
}

// runExample deploys rendered objects with their consumers and checks the
// placement; it returns "model | provider | pool" per model.
func runExample(t *testing.T, capsName, example, capsFile string, objs []*unstructured.Unstructured, nodes []corev1.Node) []string {
	t.Helper()
	startConsumers := prepareConsumers(t, objs)
	want := expectedPods(objs)
	start := time.Now()
	ns, models := deploy(t, objs)
	startConsumers(ns)
	got := waitPlaced(t, ns, models, want, start, time.Minute)
	cpu := cpuPoolSelectors(t, capsFile)
	var out []string
	for _, m := range models {
		p := got[m.GetName()]
		provider := m.GetAnnotations()[hub.AnnotationProvider]
		on := requireOnPool(t, p, nodes)
		require.NotEmpty(t, on, "%s: no pod requests GPUs", m.GetName())
		helpers := requireHelpersOnCPUSelector(t, p, nodes, cpu)
		addRow("%s (%s) | %s %s | %s | %s | %d/%d%s | %s | %s",
			provider, consumerOf(provider), example, m.GetName(), capsName, p.pool, len(on), len(p.pods), helpers, strings.Join(on, ","), p.readyAfter.Round(100*time.Millisecond))
		out = append(out, m.GetName()+" | "+provider+" | "+p.pool)
	}
	return out
}

// consumerOf says what turns a provider's objects into pods on the twin.
func consumerOf(provider string) string {
	switch provider {
	case "kuberay":
		return "real operator " + kuberayVersion
	case "dynamo", "kaito":
		return "stand-in"
	}
	return "real controllers"
}

// cpuPoolSelectors are the selectors of the capability file's pools
// without GPUs.
func cpuPoolSelectors(t *testing.T, capsFile string) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, p := range resolveCaps(t, capsFile).NodePools {
		if p.GPU == nil {
			out = append(out, p.Selector)
		}
	}
	return out
}

// requireHelpersOnCPUSelector checks that the model's pods without GPUs
// (a Ray head, a Dynamo frontend, an endpoint picker) run on nodes a CPU
// pool's selector matches, and says where they ran.
func requireHelpersOnCPUSelector(t *testing.T, p *placed, nodes []corev1.Node, cpu []map[string]string) string {
	t.Helper()
	byName := map[string]*corev1.Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var on []string
	for _, pod := range p.pods {
		if gpuRequest(&pod) > 0 {
			continue
		}
		n := byName[pod.Spec.NodeName]
		require.NotNil(t, n, "pod %s runs on %q, not a node of the capability file", pod.Name, pod.Spec.NodeName)
		if len(cpu) > 0 {
			matched := false
			for _, sel := range cpu {
				matched = matched || labels.SelectorFromSet(sel).Matches(labels.Set(n.Labels))
			}
			require.True(t, matched, "pod %s of %s requests no GPU and runs on %s, which no CPU pool selects", pod.Name, p.model, n.Name)
		}
		on = append(on, n.Name)
	}
	if len(on) == 0 {
		return ""
	}
	return ", no-GPU pods on " + strings.Join(on, ",")
}

// prepareConsumers installs the CRDs the rendered kinds need (and starts
// the KubeRay operator) before the objects are applied, and returns what
// starts the stand-ins for the namespace they are applied in.
func prepareConsumers(t *testing.T, objs []*unstructured.Unstructured) func(ns string) {
	t.Helper()
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
	}
	if kinds["RayService"] {
		startKubeRay(t)
	}
	if kinds["DynamoGraphDeployment"] {
		installDynamoCRD(t)
	}
	if kinds["Workspace"] {
		installKAITOCRD(t)
	}
	if kinds["InferencePool"] || kinds["HTTPRoute"] {
		installGatewayCRDs(t)
	}
	return func(ns string) {
		if kinds["DynamoGraphDeployment"] {
			runStandIn(t, ns, dynamoStandIn(t))
		}
		if kinds["Workspace"] {
			runStandIn(t, ns, kaitoStandIn)
		}
	}
}

// expectedPods is how many pods each model gets from its consumer.
func expectedPods(objs []*unstructured.Unstructured) map[string]int {
	want := deploymentPods(objs)
	for _, count := range []func([]*unstructured.Unstructured) map[string]int{rayPods, dynamoPods, kaitoPods} {
		for model, n := range count(objs) {
			want[model] += n
		}
	}
	return want
}
