package twin_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// Flux on the twin: its source-controller and kustomize-controller, built
// by hack/install-gitops.sh and run as processes, apply the rendered
// directories (examples/flux/rendered) from the platform repository. The
// source-controller serves its artifacts on 127.0.0.1, on a port of its own
// choosing, and the kustomize-controller fetches them from there
// (SOURCE_CONTROLLER_LOCALHOST, which Flux reads to run its controllers
// outside a cluster, takes the place of the address advertised in each
// artifact's URL).
const fluxNamespace = "flux-system"

var (
	fluxOnce sync.Once
	fluxErr  error
)

func startFlux(t *testing.T) {
	t.Helper()
	assets := gitopsAssets(t)
	usePlatformRepo(t)
	fluxOnce.Do(func() { fluxErr = launchFlux(assets) })
	require.NoError(t, fluxErr, "starting Flux\n%s", cluster.Logs(30))
}

func launchFlux(assets string) error {
	for _, c := range []string{"source-controller", "kustomize-controller"} {
		if err := installCRDDir(filepath.Join(assets, c, "crds")); err != nil {
			return err
		}
	}
	dir := filepath.Join(scratch, "flux")
	storage := filepath.Join(dir, "storage")
	for _, d := range []string{storage, filepath.Join(dir, "sc-tmp"), filepath.Join(dir, "kc-tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// No --kubeconfig flag: both read KUBECONFIG, which StartProcess sets.
	// No metrics or health endpoints ("0"): the artifact server is the
	// source-controller's one port, which the kernel tells.
	if err := cluster.StartProcess("source-controller", filepath.Join(assets, "source-controller", "source-controller"),
		[]string{"TMPDIR=" + filepath.Join(dir, "sc-tmp"), "EVENTS_ADDR=", "HTTP_PROXY=", "HTTPS_PROXY="},
		"--storage-path", storage, "--storage-addr", "127.0.0.1:0", "--storage-adv-addr", "source-controller."+fluxNamespace+".svc.cluster.local.",
		"--metrics-addr", "0", "--health-addr", "0",
		"--enable-leader-election=false", "--watch-all-namespaces=true", "--log-encoding", "console"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	port, err := cluster.ListeningPort(ctx, "source-controller")
	if err != nil {
		return err
	}
	return cluster.StartProcess("kustomize-controller", filepath.Join(assets, "kustomize-controller", "kustomize-controller"),
		[]string{"TMPDIR=" + filepath.Join(dir, "kc-tmp"), "SOURCE_CONTROLLER_LOCALHOST=127.0.0.1:" + strconv.Itoa(port), "HTTP_PROXY=", "HTTPS_PROXY="},
		"--metrics-addr", "0", "--health-addr", "0",
		"--enable-leader-election=false", "--watch-all-namespaces=true", "--no-remote-bases=true", "--log-encoding", "console")
}

// exampleFluxObjects are examples/flux/clusters/<cluster>/models.yaml,
// pointed at the platform repository, with intervals short enough for a
// test (the example's suit models that take minutes to load).
func exampleFluxObjects(t *testing.T, clusterName, repoURL string) []*unstructured.Unstructured {
	t.Helper()
	return fluxObjects(t, filepath.Join(repoRoot, "examples", "flux", "clusters", clusterName, "models.yaml"), repoURL, "30s")
}

// fluxObjects are the Flux objects of an example file, the GitRepository
// pointed at repoURL, every interval 5 s and each Kustomization's timeout
// the one given.
func fluxObjects(t *testing.T, file, repoURL, timeout string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		o := &unstructured.Unstructured{}
		require.NoError(t, sigsyaml.Unmarshal([]byte(doc), &o.Object))
		switch o.GetKind() {
		case "GitRepository":
			require.NoError(t, unstructured.SetNestedField(o.Object, repoURL, "spec", "url"))
			require.NoError(t, unstructured.SetNestedField(o.Object, "5s", "spec", "interval"))
		case "Kustomization":
			for field, v := range map[string]string{"interval": "5s", "retryInterval": "5s", "timeout": timeout} {
				require.NoError(t, unstructured.SetNestedField(o.Object, v, "spec", field))
			}
		}
		out = append(out, o)
	}
	return out
}

// fluxHealth names a Kustomization's Ready condition status in the table.
var fluxHealth = map[string]string{"True": "Ready", "False": "NotReady", "Unknown": "Reconciling"}

// kustomizationReady is the Kustomization's Ready condition: status and
// message.
func kustomizationReady(t tb, name string) (string, string, *unstructured.Unstructured) {
	t.Helper()
	k, err := getKustomization(name)
	require.NoError(t, err)
	return conditionStatus(k, "Ready"), conditionMessage(k, "Ready"), k
}

func getKustomization(name string) (*unstructured.Unstructured, error) {
	k := &unstructured.Unstructured{}
	k.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	k.SetKind("Kustomization")
	return k, cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: fluxNamespace, Name: name}, k)
}

// healthCheckFailed is the reason of a Kustomization's Ready=False once
// its health check (wait: true) has given up on what it applied.
const healthCheckFailed = "HealthCheckFailed"

// waitKustomization polls the Kustomization's Ready condition until done
// says so, recording it as health ("Ready", "NotReady", "Unknown").
func waitKustomization(t *testing.T, name string, h *healthTimeline, within time.Duration, done func(status string) bool) {
	t.Helper()
	waitUntil(t, within, 250*time.Millisecond, func(c *assert.CollectT) {
		status, msg, _ := kustomizationReady(c, name)
		h.observe(fluxHealth[status])
		if !done(status) {
			c.Errorf("Kustomization %s: Ready=%q %q (seen: %s)", name, status, msg, h)
		}
	}, func() string { return cluster.Logs(20) }, "Kustomization %s is not done after %s", name, within)
}

// TestGitOpsFlux applies the dev cluster's rendered directory with the
// real Flux controllers, the status reporter running. The Kustomization
// (examples/flux/clusters/dev, `wait: true`) becomes Ready only once every
// ModelDeployment is Ready, which kstatus reads from the reporter's
// conditions: with the pool cordoned it stays not Ready; it goes not Ready
// when a model degrades, and back; a model removed from Git is pruned.
func TestGitOpsFlux(t *testing.T) {
	startFlux(t)
	repo := usePlatformRepo(t)
	const clusterName = "dev"
	dir := filepath.Join("examples", "flux", "rendered", clusterName)
	nodes := useCluster(t, filepath.Join("examples", "kustomize", "clusters", clusterName, "capabilities.yaml"))
	want := decodeObjects(t, runRender(t, "build", filepath.Join("examples", "kustomize", "clusters", clusterName)))
	var models []string
	pool := ""
	for _, o := range want {
		if o.GetKind() == "ModelDeployment" {
			models = append(models, o.GetName())
			pool = o.GetAnnotations()["render.airunway.ai/node-pool"]
		}
	}
	require.Len(t, models, 2)
	t.Cleanup(func() { deleteNamespace(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exampleNamespace}}) })
	startReporter(t, exampleNamespace)

	// Held back: the pool cordoned, no model can become Ready.
	setUnschedulable(t, poolNodes(nodes, pool), true)
	t.Cleanup(func() { setUnschedulable(t, poolNodes(nodes, pool), false) })
	require.NoError(t, createIgnoringExisting(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fluxNamespace}}))
	objs := exampleFluxObjects(t, clusterName, repo.URL)
	start := time.Now()
	for _, o := range objs {
		require.NoError(t, cluster.Client.Create(context.Background(), o))
		t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), o) })
	}
	name := objs[len(objs)-1].GetName()
	h := &healthTimeline{}
	// Applied, but not Ready: the models wait for their pods.
	require.Eventually(t, func() bool {
		return readyStatusIfAny(t, exampleNamespace, models[0]) == "False"
	}, twin.HangBound, 250*time.Millisecond, "the Kustomization did not apply the models")
	// Flux's verdict: the health check, having waited its timeout (30 s)
	// for the models, fails. A Ready Kustomization ends the wait too, and
	// fails the test.
	var status, msg string
	waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
		var k *unstructured.Unstructured
		status, msg, k = kustomizationReady(c, name)
		h.observe(fluxHealth[status])
		if reason := conditionField(k, "Ready", "reason"); status != "True" && reason != healthCheckFailed {
			c.Errorf("Kustomization %s: Ready=%q (%s) %q, not yet failed for want of the models", name, status, reason, msg)
		}
	}, func() string { return cluster.Logs(20) }, "the Kustomization's health check did not fail with no model Ready")
	require.NotEqual(t, "True", status, "the Kustomization is Ready while no model is: %s", msg)
	// Nor is it Ready when it tries again (retryInterval, 5 s). Never runs
	// its condition off the test's goroutine: no t in it.
	require.Never(t, func() bool {
		k, err := getKustomization(name)
		return err != nil || conditionStatus(k, "Ready") == "True"
	}, 5*time.Second, 250*time.Millisecond, "the Kustomization turned Ready while no model is (or could not be read)")

	setUnschedulable(t, poolNodes(nodes, pool), false)
	waitKustomization(t, name, h, twin.HangBound, func(s string) bool { return s == "True" })
	toReady := time.Since(start)
	for _, m := range models {
		require.Equal(t, "True", readyStatus(t, exampleNamespace, m), "the Kustomization is Ready, %s is not", m)
	}
	requireLive(t, want)

	// One model degrades: its pods are lost and cannot come back.
	cordonPoolAndDeletePods(t, nodes, pool, models[0])
	waitKustomization(t, name, h, twin.HangBound, func(s string) bool { return s == "False" })
	setUnschedulable(t, poolNodes(nodes, pool), false)
	waitKustomization(t, name, h, twin.HangBound, func(s string) bool { return s == "True" })

	// A model removed from Git is pruned.
	pruned := models[0]
	removeRendered(t, repo, dir, pruned)
	require.NoError(t, repo.commitAll("remove "+pruned))
	require.Eventually(t, func() bool { return readyStatusIfAny(t, exampleNamespace, pruned) == "gone" }, twin.HangBound, 250*time.Millisecond, "%s was not pruned", pruned)
	waitKustomization(t, name, h, twin.HangBound, func(s string) bool { return s == "True" })
	addGitOpsRow("flux (real) | %s (%s) | applied; %s pruned after its removal from Git | %s | %.1f", name, dir, pruned, h, toReady.Seconds())
}

// readyStatusIfAny is the model's Ready status, "gone" when it does not
// exist.
func readyStatusIfAny(t *testing.T, ns, name string) string {
	t.Helper()
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("airunway.ai/v1alpha1")
	md.SetKind("ModelDeployment")
	if err := cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, md); err != nil {
		if apierrors.IsNotFound(err) {
			return "gone"
		}
		require.NoError(t, err)
	}
	return conditionStatus(md, "Ready")
}

// removeRendered deletes a model's files from a rendered directory of the
// platform work tree and its kustomization.yaml's resources, as render.sh
// would after the model left the base.
func removeRendered(t *testing.T, repo *platformRepo, dir, model string) {
	t.Helper()
	abs := filepath.Join(repo.work, dir)
	entries, err := os.ReadDir(abs)
	require.NoError(t, err)
	removed := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_"+model+".yaml") {
			require.NoError(t, os.Remove(filepath.Join(abs, e.Name())))
			removed++
		}
	}
	require.NotZero(t, removed)
	k := filepath.Join(abs, "kustomization.yaml")
	data, err := os.ReadFile(k)
	require.NoError(t, err)
	var kept []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasSuffix(line, "_"+model+".yaml") {
			kept = append(kept, line)
		}
	}
	require.NoError(t, os.WriteFile(k, []byte(strings.Join(kept, "\n")), 0o644))
}
