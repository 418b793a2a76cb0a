package twin_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/internal/twin"
)

// The KubeRay release the placement golden's capability file declares.
const kuberayVersion = "1.3.0"

var (
	kuberayOnce sync.Once
	kuberayErr  error
)

// startKubeRay installs the CRDs of the KubeRay release and runs its real
// operator (hack/install-twin.sh builds both), once per package.
func startKubeRay(t *testing.T) {
	t.Helper()
	kuberayOnce.Do(func() {
		dir := filepath.Join(os.Getenv("TWIN_ASSETS"), "kuberay-"+kuberayVersion)
		if kuberayErr = installCRDDir(filepath.Join(dir, "crds")); kuberayErr != nil {
			return
		}
		kuberayErr = cluster.StartOperator("kuberay-operator", filepath.Join(dir, "kuberay-operator"),
			"--metrics-addr", "127.0.0.1:"+twin.FreePort(), "--health-probe-bind-address", "127.0.0.1:"+twin.FreePort(),
			"--enable-leader-election=false")
	})
	require.NoError(t, kuberayErr, "the KubeRay operator v%s (hack/install-twin.sh builds it)", kuberayVersion)
}

// rayPods is how many pods each model's RayService asks for: the head and
// every worker group's replicas.
func rayPods(objs []*unstructured.Unstructured) map[string]int {
	want := map[string]int{}
	for _, o := range objs {
		if o.GetKind() != "RayService" {
			continue
		}
		n := 1 // the head
		groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "rayClusterConfig", "workerGroupSpecs")
		for _, g := range groups {
			r, _, _ := unstructured.NestedInt64(g.(map[string]any), "replicas")
			n += int(r)
		}
		want[o.GetLabels()["airunway.ai/model-deployment"]] += n
	}
	return want
}

// TestKubeRayPlacementGolden runs the KubeRay placement golden on the real
// KubeRay operator: it turns each rendered RayService into a RayCluster and
// its head and worker pods, which the scheduler places: the GPU workers on
// the model's pool, the head (no GPUs) on the CPU pool. The RayService
// itself never reports ready here, since it waits on the Ray dashboard that
// a KWOK pod does not serve.
func TestKubeRayPlacementGolden(t *testing.T) {
	startKubeRay(t)
	dir := "golden/testdata/placement-kuberay"
	caps := dir + "/functionConfig/capabilities.yaml"
	nodes := useCluster(t, caps)
	objs := render(t, caps, dir+"/models.yaml")
	start := time.Now()
	ns, models := deploy(t, objs)
	got := waitPlaced(t, ns, models, rayPods(objs), start, 2*time.Minute)
	for _, m := range models {
		p := got[m.GetName()]
		on := requireOnPool(t, p, nodes)
		require.NotEmpty(t, on, "%s: no pod requests GPUs", m.GetName())
		requireHelpersOnCPUPool(t, p, nodes)
		addRow("kuberay %s (real operator) | placement golden %s | %s | %s | %d/%d | %s | %s", kuberayVersion, m.GetName(), caps, p.pool, len(on), len(p.pods), strings.Join(on, ","), p.readyAfter.Round(100*time.Millisecond))
	}
}
