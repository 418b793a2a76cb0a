package twin_test

import (
	"flag"
	"fmt"
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
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

var update = flag.Bool("update", false, "rewrite testdata/examples.golden and testdata/plan-agreement.golden from this run")

// The shipped examples and the shipped capability files ("" is the
// embedded default). TestExampleMatrix runs every pair.
var (
	exampleModels = []string{"examples/vllm-basic/modeldeployment.yaml", "examples/kpt/modeldeployment.yaml", "examples/gateway/modeldeployment.yaml", "examples/kustomize/base"}
	exampleCaps   = []string{"", "examples/kustomize/clusters/dev/capabilities.yaml", "examples/kustomize/clusters/prod/capabilities.yaml",
		"examples/kpt/capabilities.yaml", "examples/gateway/capabilities.yaml", "examples/capabilities/prod-eastus.yaml", draCaps}
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
					for _, m := range place(t, example, name, file, objs, nodes).models {
						outcomes = append(outcomes, name+" | "+example+" | "+m.GetName()+" | "+m.GetAnnotations()[hub.AnnotationProvider]+" | "+m.GetAnnotations()[hub.AnnotationNodePool])
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

// placement is rendered output running on the twin.
type placement struct {
	ns     string
	models []*unstructured.Unstructured
	got    map[string]*placed
}

// place applies objects rendered for capsFile (whose nodes the test uses)
// with the consumer of each provider's output, waits until every model's
// pods are bound and Ready, and checks them: every pod that requests GPUs
// on the pool the model's annotation names, with its GPUs, and at least one
// unless that pool has none; every other pod (a Ray head, a Dynamo
// frontend, a CPU model) on a node a CPU pool selects. It adds a row per
// model, naming it after what.
func place(t *testing.T, what, capsName, capsFile string, objs []*unstructured.Unstructured, nodes []corev1.Node) placement {
	t.Helper()
	want := expectedPods(objs)
	ns, models, start := deployConsumed(t, objs)
	got := waitPlaced(t, ns, models, want, start, twin.HangBound)
	cpu := cpuPoolSelectors(t, capsFile)
	// On DRA pools: every bound pod's claim allocated from its node's
	// slice, no device twice.
	var allocated map[string][]device
	if published := resolveCaps(t, capsFile); len(published.ResourceSlices()) > 0 {
		allocated = requireAllocated(t, ns, published, nodes, models)
	}
	for _, m := range models {
		p := got[m.GetName()]
		provider := m.GetAnnotations()[hub.AnnotationProvider]
		on := requireOnPool(t, p, nodes)
		if _, cpuPool := cpu[p.pool]; !cpuPool {
			require.NotEmpty(t, on, "%s: no pod requests GPUs", m.GetName())
		}
		helpers := requireHelpersOnCPUPool(t, p, nodes, cpu)
		if allocated != nil {
			devices := 0
			for _, pod := range p.pods {
				devices += len(allocated[pod.Name])
			}
			helpers += fmt.Sprintf(", %d DRA devices allocated", devices)
		}
		addRow("%s (%s) | %s %s | %s | %s | %d/%d%s | %s | %s",
			provider, consumerOf(provider), what, m.GetName(), capsName, p.pool, len(on), len(p.pods), helpers, strings.Join(on, ","), p.readyAfter.Round(100*time.Millisecond))
	}
	return placement{ns: ns, models: models, got: got}
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
// without GPUs, by pool name.
func cpuPoolSelectors(t *testing.T, capsFile string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, p := range resolveCaps(t, capsFile).NodePools {
		if p.GPU == nil {
			out[p.Name] = p.Selector
		}
	}
	return out
}

// requireHelpersOnCPUPool checks that the model's pods without GPUs run
// on nodes a CPU pool's selector matches (what the renderer promises; under
// the embedded default that selector matches GPU nodes too), and says
// where they ran.
func requireHelpersOnCPUPool(t *testing.T, p *placed, nodes []corev1.Node, cpu map[string]map[string]string) string {
	t.Helper()
	byName := map[string]*corev1.Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var on []string
	for _, pod := range p.pods {
		if gpuPod(&pod) {
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
// deployConsumed deploys objs (deploy) with the stand-ins for the
// operators that consume them running on its namespace
// (prepareConsumers), and says when the deployment started.
func deployConsumed(t *testing.T, objs []*unstructured.Unstructured) (ns string, models []*unstructured.Unstructured, start time.Time) {
	t.Helper()
	startConsumers := prepareConsumers(t, objs)
	start = time.Now()
	ns, models = deploy(t, objs)
	startConsumers(ns)
	return ns, models, start
}

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
	if kinds["DynamoModel"] {
		installCRD(t, "nvidia.com", "DynamoModel")
	}
	if kinds["Workspace"] || kinds["InferenceSet"] {
		installKAITOCRD(t)
	}
	if kinds["InferenceSet"] {
		installCRD(t, "kaito.sh", "InferenceSet")
	}
	if kinds["InferencePool"] || kinds["HTTPRoute"] {
		installGatewayCRDs(t)
	}
	return func(ns string) {
		if kinds["DynamoGraphDeployment"] {
			runStandIn(t, ns, dynamoStandIn(t))
		}
		if kinds["Workspace"] || kinds["InferenceSet"] {
			runStandIn(t, ns, kaitoStandIn)
		}
		if kinds["InferenceSet"] {
			runStandIn(t, ns, inferenceSetStandIn)
		}
	}
}

// expectedPods is how many pods each model gets from its consumer.
func expectedPods(objs []*unstructured.Unstructured) map[string]int {
	want := deploymentPods(objs)
	for _, count := range []func([]*unstructured.Unstructured) map[string]int{rayPods, dynamoPods, kaitoPods, inferenceSetPods} {
		for model, n := range count(objs) {
			want[model] += n
		}
	}
	return want
}
