package twin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// Argo CD on the twin: its own repo-server, the plugin in a real
// argocd-cmp-server configured by examples/argocd/plugin.yaml, and the
// application-controller, built by hack/install-gitops.sh and run as
// processes with every address on 127.0.0.1 (Redis too), syncing the
// example Applications from the platform repository into the twin. The
// ModelDeployment health check is deploy/argocd/argocd-cm.yaml, as users
// install it.
const argoNamespace = "argocd"

var (
	argoOnce sync.Once
	argoErr  error
)

// gitopsAssets is the directory hack/install-gitops.sh printed.
func gitopsAssets(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GITOPS_ASSETS")
	if dir == "" {
		t.Fatal("GITOPS_ASSETS must name the directory hack/install-gitops.sh printed (make gitops sets it)")
	}
	return dir
}

func startArgoCD(t *testing.T) {
	t.Helper()
	assets := gitopsAssets(t)
	url := usePlatformRepo(t).URL
	argoOnce.Do(func() { argoErr = launchArgoCD(assets, url) })
	require.NoError(t, argoErr, "starting Argo CD\n%s", cluster.Logs(30))
}

func launchArgoCD(assets, repoURL string) error {
	redis, err := startRedis(assets)
	if err != nil {
		return err
	}
	if err := installCRDDir(filepath.Join(assets, "argocd", "crds")); err != nil {
		return err
	}
	if err := argoSettings(); err != nil {
		return err
	}
	bin := filepath.Join(assets, "argocd", "argocd")
	dir := filepath.Join(scratch, "argocd")
	sockets, config, tools := filepath.Join(dir, "plugins"), filepath.Join(dir, "cmp-config"), filepath.Join(dir, "bin")
	for _, d := range []string{sockets, config, tools, filepath.Join(dir, "cmp"), filepath.Join(dir, "repo-tmp"), filepath.Join(dir, "conf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	// The sidecar's configuration and the command it names, as the image
	// bakes them in.
	plugin, err := os.ReadFile(filepath.Join(repoRoot, "examples", "argocd", "plugin.yaml"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(config, "plugin.yaml"), plugin, 0o644); err != nil {
		return err
	}
	render, err := filepath.Abs(os.Getenv("AIRUNWAY_RENDER_BIN"))
	if err != nil {
		return err
	}
	if err := os.Symlink(render, filepath.Join(tools, "airunway-render")); err != nil {
		return err
	}
	common := argoEnv()
	if err := cluster.StartProcess("argocd-cmp-server", bin, append(common,
		"ARGOCD_BINARY_NAME=argocd-cmp-server", "ARGOCD_CMP_WORKDIR="+filepath.Join(dir, "cmp"),
		"PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH")),
		"--config-dir-path", config, "--loglevel", "info"); err != nil {
		return err
	}
	// Every port 0: the repo-server says which port it got; nothing reads
	// the metrics.
	if err := cluster.StartProcess("argocd-repo-server", bin, append(common,
		"ARGOCD_BINARY_NAME=argocd-repo-server", "TMPDIR="+filepath.Join(dir, "repo-tmp"), "ARGOCD_ASK_PASS_SOCK="+filepath.Join(dir, "askpass.sock")),
		"--address", "127.0.0.1", "--port", "0",
		"--metrics-address", "127.0.0.1", "--metrics-port", "0",
		"--disable-tls", "--redis", redis, "--loglevel", "info"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	listening, err := cluster.WaitLog(ctx, "argocd-repo-server", repoServerListening)
	if err != nil {
		return err
	}
	argoRepoServer = listening[1]
	// The commit server is only dialled for source hydration, which is
	// off: an address where nothing listens.
	return cluster.StartProcess("argocd-application-controller", bin, append(common, "ARGOCD_BINARY_NAME=argocd-application-controller"),
		"--kubeconfig", cluster.Kubeconfig, "--namespace", argoNamespace,
		"--repo-server", argoRepoServer, "--repo-server-plaintext", "--commit-server", "127.0.0.1:0",
		"--redis", redis, "--metrics-port", "0",
		"--status-processors", "2", "--operation-processors", "2", "--app-resync", "10",
		"--self-heal-timeout-seconds", "2", "--loglevel", "info")
}

// repoServerListening is the line where the repo-server says the address
// it listens on (port 0 given, the one it got).
var repoServerListening = regexp.MustCompile(`argocd-repo-server is listening on (127\.0\.0\.1:\d+)`)

// startBound only catches a component that never comes up.
const startBound = twin.HangBound

// argoRepoServer is the repo-server's address, once launchArgoCD has run.
var argoRepoServer string

// argoEnv is the environment every Argo CD component runs with: its
// directories under scratch, no GPG, no proxy.
func argoEnv() []string {
	dir := filepath.Join(scratch, "argocd")
	return []string{
		"ARGOCD_PLUGINSOCKFILEPATH=" + filepath.Join(dir, "plugins"), "ARGOCD_GPG_ENABLED=false",
		"ARGOCD_APP_CONF_PATH=" + filepath.Join(dir, "conf"), "ARGOCD_TLS_DATA_PATH=" + filepath.Join(dir, "conf"), "ARGOCD_SSH_DATA_PATH=" + filepath.Join(dir, "conf"),
		"HTTP_PROXY=", "HTTPS_PROXY=", "http_proxy=", "https_proxy=", "NO_PROXY=127.0.0.1",
	}
}

var (
	redisOnce sync.Once
	redisAddr string
	redisErr  error
)

// startRedis runs Debian's redis-server on 127.0.0.1, without persistence.
// Redis must be told its port (port 0 turns TCP off), so it is started
// again should another process take the port first (StartOnFreePort).
func startRedis(assets string) (string, error) {
	redisOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startBound)
		defer cancel()
		dir := filepath.Join(assets, "redis")
		var port int
		port, redisErr = cluster.StartOnFreePort(ctx, "redis-server", filepath.Join(dir, "bin", "redis-server"), []string{"LD_LIBRARY_PATH=" + filepath.Join(dir, "lib")},
			func(port int) []string {
				return []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", scratch}
			})
		redisAddr = "127.0.0.1:" + strconv.Itoa(port)
	})
	return redisAddr, redisErr
}

// argoSettings creates what Argo CD reads in its namespace: argocd-cm with
// the shipped health check, argocd-secret and the default AppProject
// (which argocd-server would create).
func argoSettings() error {
	ctx := context.Background()
	if err := createIgnoringExisting(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNamespace}}); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "argocd", "argocd-cm.yaml"))
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	if err := sigsyaml.Unmarshal(data, cm); err != nil {
		return err
	}
	objs := []client.Object{cm,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "argocd-secret", Namespace: argoNamespace, Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"}},
			StringData: map[string]string{"server.secretkey": "twin"}},
	}
	project := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": argoNamespace},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"name": "*", "server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}}
	objs = append(objs, project)
	for _, o := range objs {
		if err := createIgnoringExisting(ctx, o); err != nil {
			return fmt.Errorf("%s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	return nil
}

// argoCluster declares the twin to Argo CD as the cluster the example
// Applications name (`destination.name`) for as long as the test runs.
// One at a time: Argo CD keys clusters by server URL, and dev and prod are
// the same twin.
func argoCluster(t *testing.T, name string) {
	t.Helper()
	cfg, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{
		"caData":   base64.StdEncoding.EncodeToString(cluster.Config.CAData),
		"certData": base64.StdEncoding.EncodeToString(cluster.Config.CertData),
		"keyData":  base64.StdEncoding.EncodeToString(cluster.Config.KeyData),
	}})
	require.NoError(t, err)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + name, Namespace: argoNamespace, Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: map[string]string{"name": name, "server": cluster.Config.Host, "config": string(cfg)},
	}
	require.NoError(t, cluster.Client.Create(context.Background(), secret))
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), secret) })
}

// exampleApplication is one of examples/argocd/applications.yaml, pointed
// at the platform repository.
func exampleApplication(t *testing.T, name, repoURL string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "argocd", "applications.yaml"))
	require.NoError(t, err)
	for _, doc := range strings.Split(string(data), "\n---\n") {
		app := &unstructured.Unstructured{}
		require.NoError(t, sigsyaml.Unmarshal([]byte(doc), &app.Object))
		if app.GetName() != name {
			continue
		}
		require.NoError(t, unstructured.SetNestedField(app.Object, repoURL, "spec", "source", "repoURL"))
		return app
	}
	t.Fatalf("examples/argocd/applications.yaml has no Application %q", name)
	return nil
}

// appState is what an Application's status says at one moment: sync and
// health status, and the last operation's phase, message, start and
// request (requestSync's mark; "" for one it did not request).
type appState struct{ sync, health, phase, message, started, revision, request string }

func readApp(t tb, name string) (appState, *unstructured.Unstructured) {
	t.Helper()
	app := &unstructured.Unstructured{}
	app.SetAPIVersion("argoproj.io/v1alpha1")
	app.SetKind("Application")
	require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: argoNamespace, Name: name}, app))
	var s appState
	s.sync, _, _ = unstructured.NestedString(app.Object, "status", "sync", "status")
	s.health, _, _ = unstructured.NestedString(app.Object, "status", "health", "status")
	s.phase, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "phase")
	s.message, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "message")
	s.started, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "startedAt")
	s.revision, _, _ = unstructured.NestedString(app.Object, "status", "sync", "revision")
	s.request = operationInfo(app, requestInfo)
	return s, app
}

// healthTimeline records the health an engine reports, as it changes.
type healthTimeline struct{ seen []string }

func (h *healthTimeline) observe(health string) {
	if health == "" {
		return
	}
	if n := len(h.seen); n == 0 || h.seen[n-1] != health {
		h.seen = append(h.seen, health)
	}
}

func (h *healthTimeline) String() string { return strings.Join(h.seen, " → ") }

// waitApp polls the Application until done says so, recording its health.
func waitApp(t *testing.T, name string, h *healthTimeline, within time.Duration, done func(appState) bool) appState {
	t.Helper()
	var last appState
	waitUntil(t, within, 250*time.Millisecond, func(c *assert.CollectT) {
		s, app := readApp(c, name)
		h.observe(s.health)
		last = s
		if !done(s) {
			status, _ := json.MarshalIndent(app.Object["status"], "", "  ")
			c.Errorf("Application %s: %+v (health seen: %s)\nstatus: %s", name, s, h, status)
		}
	}, func() string { return "models:\n" + modelConditions(t) + "\n" + cluster.Logs(20) }, "Application %s is not done after %s", name, within)
	return last
}

// TestGitOpsArgoCD syncs each example Application (its cluster's
// kustomize overlay through the plugin) into the twin with the real Argo
// CD, the status reporter running: the sync succeeds, the live objects are
// the rendered ones (prod with its overlay's patch), Argo CD computes the
// health from the reporter's status with deploy/argocd's health check, and
// a second sync changes nothing.
func TestGitOpsArgoCD(t *testing.T) {
	startArgoCD(t)
	for _, cluster := range []string{"dev", "prod"} {
		t.Run("models-"+cluster, func(t *testing.T) { runArgoApplication(t, cluster) })
	}
}

func runArgoApplication(t *testing.T, clusterName string) {
	name := "models-" + clusterName
	overlay := filepath.Join("examples", "kustomize", "clusters", clusterName)
	nodes := useCluster(t, filepath.Join(overlay, "capabilities.yaml"))
	want := build(t, overlay)
	if clusterName == "prod" {
		installDynamoCRD(t)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exampleNamespace}}
	t.Cleanup(func() { deleteNamespace(t, ns) })
	startReporter(t, exampleNamespace)
	if clusterName == "prod" {
		runStandIn(t, exampleNamespace, dynamoStandIn(t))
	}

	argoCluster(t, clusterName)
	app := exampleApplication(t, name, usePlatformRepo(t).URL)
	start := time.Now()
	require.NoError(t, cluster.Client.Create(context.Background(), app))
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), app) })
	if _, automated, _ := unstructured.NestedMap(app.Object, "spec", "syncPolicy", "automated"); !automated {
		// Prod syncs by hand (the example says why): what someone
		// pressing Sync does, once Argo CD shows the Application compared.
		// Before that, its controller may not know the cluster by this
		// name yet (the previous test's secret named the same server):
		// a sync then fails with "there are no clusters with this name"
		// and, being manual, is not retried (seen once in a loaded run).
		waitUntil(t, twin.HangBound, 250*time.Millisecond, func(c *assert.CollectT) {
			s, _ := readApp(c, name)
			require.Contains(c, []string{"OutOfSync", "Synced"}, s.sync, "Application %s compared", name)
		}, func() string { return "" }, "Application %s compared with its cluster", name)
		requestSync(t, name, "main")
	}
	h := &healthTimeline{}
	s := waitApp(t, name, h, twin.HangBound, func(s appState) bool {
		return s.sync == "Synced" && s.health == "Healthy" && s.phase == "Succeeded"
	})
	toHealthy := time.Since(start)
	requireLive(t, want)

	noop := requireNoOpSync(t, name, want)

	if clusterName == "dev" {
		// A model's pods are lost and wait Pending on the cordoned pool:
		// the reporter says Deploying, and Argo CD Progressing (the
		// Deployment has not passed its progress deadline), then Healthy
		// once they are back.
		var model, pool string
		for _, o := range want {
			if o.GetKind() == "ModelDeployment" && model == "" {
				model, pool = o.GetName(), o.GetAnnotations()["render.airunway.ai/node-pool"]
			}
		}
		cordonPoolAndDeletePods(t, nodes, pool, model)
		waitApp(t, name, h, twin.HangBound, func(s appState) bool { return s.health == "Progressing" })
		setUnschedulable(t, poolNodes(nodes, pool), false)
	} else {
		// The provider fails: its operator is uninstalled (its CRD goes,
		// and the graphs with it). The reporter says ProviderCRDMissing,
		// and Argo CD Degraded; reinstalled and synced, Healthy again.
		uninstallDynamoCRD(t)
		waitApp(t, name, h, twin.HangBound, func(s appState) bool { return s.health == "Degraded" })
		installDynamoCRD(t)
		requestSync(t, name, "main")
	}
	waitApp(t, name, h, twin.HangBound, func(s appState) bool { return s.health == "Healthy" && s.sync == "Synced" })

	addGitOpsRow("argocd (real) | %s (%s) | %s, %s; %s | %s | %.1f", name, overlay, s.phase, s.sync, noop, h, toHealthy.Seconds())
}

// build runs `airunway-render build` on a directory of the repository.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	out := runRender(t, "build", dir)
	return decodeObjects(t, out)
}

// requireLive checks that every rendered object is live with every field
// it was rendered with (the API server and Argo CD add fields).
func requireLive(t *testing.T, want []*unstructured.Unstructured) {
	t.Helper()
	for _, w := range want {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(w.GroupVersionKind())
		require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(w), live), "%s %s", w.GetKind(), w.GetName())
		for _, field := range []string{"spec", "data"} {
			if v, ok := w.Object[field]; ok {
				require.NoError(t, subset(v, live.Object[field], field), "%s %s", w.GetKind(), w.GetName())
			}
		}
		for k, v := range w.GetLabels() {
			require.Equal(t, v, live.GetLabels()[k], "%s %s label %s", w.GetKind(), w.GetName(), k)
		}
		for k, v := range w.GetAnnotations() {
			require.Equal(t, v, live.GetAnnotations()[k], "%s %s annotation %s", w.GetKind(), w.GetName(), k)
		}
	}
}

// subset reports where want is not contained in got: maps key by key,
// lists item by item, scalars equal (numbers compared as JSON numbers).
func subset(want, got any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: live is %T, rendered a map", path, got)
		}
		for k, v := range w {
			if err := subset(v, g[k], path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: live %v, rendered %v", path, got, want)
		}
		for i := range w {
			if err := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Errorf("%s: live %v, rendered %v", path, got, want)
		}
	}
	return nil
}

// requireNoOpSync syncs the Application again with nothing changed in Git:
// it succeeds, no object's spec or metadata changes, and Argo CD still
// finds nothing out of sync.
func requireNoOpSync(t *testing.T, name string, want []*unstructured.Unstructured) string {
	t.Helper()
	before := snapshot(t, want)
	first, _ := readApp(t, name)
	request := requestSync(t, name, first.revision)
	s := waitApp(t, name, &healthTimeline{}, twin.HangBound, func(s appState) bool {
		return s.request == request && s.phase == "Succeeded"
	})
	require.Equal(t, "Synced", s.sync)
	require.Equal(t, before, snapshot(t, want), "the second sync changed objects")
	return "second sync changed nothing"
}

// requestSync asks Argo CD to sync the Application to revision, as the
// CLI or the UI does: an `operation` on the Application. It returns the
// request's mark, an item of the operation's info (as `argocd app sync
// --info` adds), which the operation state keeps: the way to tell this
// sync from any other (its startedAt counts whole seconds, which two syncs
// may share).
func requestSync(t tb, name, revision string) string {
	t.Helper()
	request := fmt.Sprintf("twin-%d", syncRequests.Add(1))
	_, app := readApp(t, name)
	patch := client.MergeFrom(app.DeepCopy())
	require.NoError(t, unstructured.SetNestedMap(app.Object, map[string]any{
		"initiatedBy": map[string]any{"username": "twin"},
		"sync":        map[string]any{"revision": revision},
		"info":        []any{map[string]any{"name": requestInfo, "value": request}},
	}, "operation"))
	require.NoError(t, cluster.Client.Patch(context.Background(), app, patch))
	return request
}

// requestInfo names requestSync's mark among an operation's info.
const requestInfo = "twin-request"

// syncRequests numbers requestSync's marks.
var syncRequests atomic.Int64

// operationInfo is the value of the last operation's info item name.
func operationInfo(app *unstructured.Unstructured, name string) string {
	items, _, _ := unstructured.NestedSlice(app.Object, "status", "operationState", "operation", "info")
	for _, item := range items {
		if m, ok := item.(map[string]any); ok && m["name"] == name {
			v, _ := m["value"].(string)
			return v
		}
	}
	return ""
}

// snapshot is each object's generation, labels and annotations: what a
// sync that changes nothing leaves alone (status writes bump only the
// resourceVersion).
func snapshot(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(o), live))
		meta, _ := json.Marshal([]any{live.GetGeneration(), live.GetLabels(), live.GetAnnotations()})
		out[o.GetKind()+"/"+o.GetName()] = string(meta)
	}
	return out
}

// poolNodes are the nodes of one pool.
func poolNodes(nodes []corev1.Node, pool string) []corev1.Node {
	var out []corev1.Node
	for i := range nodes {
		if poolOf(&nodes[i]) == pool {
			out = append(out, nodes[i])
		}
	}
	return out
}

// cordonPoolAndDeletePods cordons the pool and deletes the model's pods,
// so they come back Pending.
func cordonPoolAndDeletePods(t *testing.T, nodes []corev1.Node, pool, model string) {
	t.Helper()
	cordoned := poolNodes(nodes, pool)
	require.NotEmpty(t, cordoned, "no node of pool %q", pool)
	cordonAndEvict(t, cordoned, exampleNamespace, func(p *corev1.Pod) bool {
		return p.Labels["airunway.ai/model-deployment"] == model && gpuRequest(p) > 0
	})
}

// modelConditions lists the example namespace's models with their
// conditions and pods, for a failure message.
func modelConditions(t *testing.T) string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("airunway.ai/v1alpha1")
	list.SetKind("ModelDeploymentList")
	if err := cluster.Client.List(context.Background(), list, client.InNamespace(exampleNamespace)); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, md := range list.Items {
		conds, _, _ := unstructured.NestedSlice(md.Object, "status", "conditions")
		c, _ := json.Marshal(conds)
		fmt.Fprintf(&b, "%s: %s\n", md.GetName(), c)
	}
	pods := &corev1.PodList{}
	if err := cluster.Client.List(context.Background(), pods, client.InNamespace(exampleNamespace)); err == nil {
		b.WriteString(podSummary(pods.Items))
	}
	return b.String()
}
