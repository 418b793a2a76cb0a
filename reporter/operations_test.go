package reporter_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/internal/testing/procnet"
	"github.com/airunway-render/airunway-render/reporter"
)

// requestCounter counts the API requests a reporter makes, by verb and
// whether they write a status subresource, and the discovery requests
// that found no API server.
type requestCounter struct {
	mu              sync.Mutex
	byKey           map[string]int
	discoveryFailed int
}

func (c *requestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	c.byKey = map[string]int{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			k := req.Method
			switch {
			case strings.HasSuffix(req.URL.Path, "/status"):
				k += " status"
			case strings.Contains(req.URL.Path, "/leases"):
				k += " lease"
			case strings.Contains(req.URL.Path, "/modeldeployments"):
				k += " modeldeployments"
			}
			c.mu.Lock()
			c.byKey[k]++
			c.mu.Unlock()
			resp, err := rt.RoundTrip(req)
			if err != nil && isDiscovery(req) {
				c.mu.Lock()
				c.discoveryFailed++
				c.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

// isDiscovery is true of a request for a group version's resources
// (/api/v1, /apis/ray.io/v1), which the reporter makes to learn the kinds
// the cluster serves.
func isDiscovery(req *http.Request) bool {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return req.Method == http.MethodGet && (len(parts) == 2 && parts[0] == "api" || len(parts) == 3 && parts[0] == "apis")
}

// discoveryFailures is how many discovery requests found no API server.
func (c *requestCounter) discoveryFailures() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.discoveryFailed
}

func (c *requestCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.byKey {
		out[k] = v
	}
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNoWriteAtSteadyState: resyncs of a ModelDeployment whose provider
// object does not change reconcile it and write nothing.
func TestNoWriteAtSteadyState(t *testing.T) {
	t.Parallel() // its own namespace and reporter: see cluster
	c := cluster(t)
	ns, objs, md := c.model(t, "steady", "vllm-minimal")
	deployment := pick(objs, "Deployment")[0]
	var counter requestCounter
	o := testOptions(ns)
	o.SyncPeriod = time.Second
	rep, _ := run(t, counter.wrap(c.cfg), o)
	c.apply(t, objs...)
	c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
	// A model's reconciles run one at a time: two more, and the one that
	// wrote Running has ended, its write counted.
	reconcilesAtLeast(t, rep, rep.Reconciles()+2)

	writes, reconciles, before := rep.Writes(), rep.Reconciles(), counter.snapshot()
	reconcilesAtLeast(t, rep, reconciles+3)
	after := counter.snapshot()
	require.Equal(t, writes, rep.Writes(), "a resync wrote status")
	for k := range after {
		delta := after[k] - before[k]
		t.Logf("steady state, %d reconciles: %s: %d requests", rep.Reconciles()-reconciles, k, delta)
		// Discovery GETs and Lease renewals are expected; nothing else.
		if k != "GET" && !strings.HasSuffix(k, "lease") {
			require.Zero(t, delta, "steady state made %d %s requests", delta, k)
		}
	}
	require.Zero(t, rep.Failures(), "reconciles failed")
	require.Zero(t, after["PATCH status"]-before["PATCH status"])
}

// reconcilesAtLeast waits until rep has ended n reconciles; the SyncPeriod
// of the test's options makes them come. The hangBound only catches a reporter
// that stopped reconciling.
func reconcilesAtLeast(t *testing.T, rep *reporter.Reporter, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return rep.Reconciles() >= n }, hangBound, 20*time.Millisecond,
		"fewer than %d reconciles: the resyncs did not reconcile", n)
}

// TestProviderCRDRemovedAndInstalled: the reporter is running when a
// provider's CRD disappears (Ready=False, naming it) and when it comes
// back; no restart is needed either way.
func TestProviderCRDRemovedAndInstalled(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	ns, objs, md := c.model(t, "crd", "kuberay-aggregated-1-7")
	rayService := pick(objs, "RayService")[0]
	run(t, c.cfg, testOptions(ns))
	c.apply(t, objs...)
	c.setStatus(t, rayService, "kuberay-operator", rayServiceRunning)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})

	crd, err := providerCRD("ray.io", "RayService")
	require.NoError(t, err)
	t.Cleanup(func() { installCRD(t, c, crd) }) // leave the cluster as found
	require.NoError(t, c.admin.Delete(ctx, crd.DeepCopy()))
	s := c.waitFor(t, key(md), want{phase: "Failed", ready: "False", reason: reporter.ReasonCRDMissing, messageHas: "ray.io/v1 RayService"})
	requireConditions(t, md, s, map[string]string{"Ready": "False", "Stalled": "True"})

	// The CRD is installed again (deleting it deleted the RayService, as
	// in a real cluster): the model is pending until Argo CD re-applies it.
	installCRD(t, c, crd)
	c.waitFor(t, key(md), want{phase: "Pending", ready: "False", reason: reporter.ReasonNotFound})
	c.apply(t, rayService)
	c.waitFor(t, key(md), want{phase: "Deploying"})
	c.setStatus(t, rayService, "kuberay-operator", rayServiceRunning)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
}

// installCRD creates a CRD unless it exists and waits until it is served
// (one being deleted is created again once it is gone).
func installCRD(t *testing.T, c *controlPlane, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := context.Background()
	var failed error
	require.Eventually(t, func() bool {
		err := c.admin.Create(ctx, crd.DeepCopy())
		switch {
		case apierrors.IsConflict(err):
			return false
		case err != nil && !apierrors.IsAlreadyExists(err):
			failed = err
			return true
		}
		got := &apiextensionsv1.CustomResourceDefinition{}
		return c.admin.Get(ctx, types.NamespacedName{Name: crd.Name}, got) == nil && got.DeletionTimestamp == nil && established(got)
	}, hangBound, 200*time.Millisecond, "CRD %s not established", crd.Name)
	require.NoError(t, failed, "creating CRD %s", crd.Name)
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestTwoReplicasElectOneLeader: two reporters share a Lease; only one
// writes, and the other takes over when the leader stops.
func TestTwoReplicasElectOneLeader(t *testing.T) {
	c := cluster(t)
	ns, objs, md := c.model(t, "leader", "vllm-minimal")
	deployment := pick(objs, "Deployment")[0]
	c.apply(t, objs...)
	first, stopFirst := run(t, c.cfg, testOptions(ns))
	second, stopSecond := run(t, c.cfg, testOptions(ns))
	c.waitFor(t, key(md), want{phase: "Deploying"})

	leader, follower, stopLeader := first, second, stopFirst
	select {
	case <-first.Elected():
	case <-second.Elected():
		leader, follower, stopLeader = second, first, stopSecond
	case <-time.After(30 * time.Second):
		t.Fatal("no reporter was elected")
	}
	leaseRenewed(t, c, ns, "reporter", 3) // the follower tries to take it as often
	select {
	case <-follower.Elected():
		t.Fatal("both reporters are leaders")
	default:
	}
	require.Zero(t, follower.Reconciles(), "the follower reconciled")
	// The write is counted once the API server has answered it, which a
	// loaded machine may take longer to see than waitFor took.
	require.Eventually(t, func() bool { return leader.Writes() > 0 }, hangBound, 100*time.Millisecond, "the leader wrote no status")

	lease := &coordinationv1.Lease{}
	require.NoError(t, c.admin.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "reporter"}, lease))
	require.NotNil(t, lease.Spec.HolderIdentity)
	t.Logf("lease holder: %s", *lease.Spec.HolderIdentity)

	// The leader stops (a rolling update): it releases the Lease and the
	// follower picks up the work.
	stopLeader()
	select {
	case <-follower.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the follower did not take over")
	}
	c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
	// Counted once the answer is back, maybe after waitFor saw the status.
	require.Eventually(t, func() bool { return follower.Writes() > 0 }, hangBound, 100*time.Millisecond, "the new leader wrote no status")
}

// leaseRenewed waits until Lease ns/name has been renewed n times.
func leaseRenewed(t *testing.T, c *controlPlane, ns, name string, n int) {
	t.Helper()
	renewals := map[int64]bool{}
	require.Eventually(t, func() bool {
		lease := &coordinationv1.Lease{}
		if c.admin.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, lease) == nil && lease.Spec.RenewTime != nil {
			renewals[lease.Spec.RenewTime.UnixMicro()] = true
		}
		return len(renewals) > n
	}, hangBound, 50*time.Millisecond, "Lease %s/%s was not renewed %d times", ns, name, n)
}

// TestAPIServerRestart: the API server goes away mid-run and comes back;
// the reporter keeps its provider kinds (a failed discovery proves
// nothing) and its watches resume.
func TestAPIServerRestart(t *testing.T) {
	c := cluster(t)
	ns, objs, md := c.model(t, "restart", "dynamo-vllm-aggregated-frontend")
	graph := pick(objs, "DynamoGraphDeployment")[0]
	o := testOptions(ns)
	// Long enough to keep the Lease through the restart; a shorter one
	// makes the process exit and Kubernetes restart it, which is also fine.
	o.LeaseDuration, o.RenewDeadline = 2*time.Minute, 90*time.Second
	var counter requestCounter
	rep, _ := run(t, counter.wrap(c.cfg), o)
	c.apply(t, objs...)
	c.setStatus(t, graph, "dynamo-operator", `{state: successful}`)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})

	// The API server is killed if it does not stop within 5 s (its
	// graceful shutdown waits for the open watches; startControlPlane sets
	// the bound): a crash is the harder case anyway.
	api := c.env.ControlPlane.GetAPIServer()
	if err := api.Stop(); err != nil {
		t.Logf("stopping the API server: %v (it was killed)", err)
	}
	// Discovery fails meanwhile (and so do the watches).
	failed := counter.discoveryFailures()
	require.Eventually(t, func() bool { return counter.discoveryFailures() >= failed+3 }, hangBound, 50*time.Millisecond,
		"the reporter's discovery did not fail while the API server was down")
	require.NoError(t, api.Start())
	writes := rep.Writes()

	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
	c.setStatus(t, graph, "dynamo-operator", `{state: failed}`)
	c.waitFor(t, key(md), want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed})
	require.Eventually(t, func() bool { return rep.Writes() == writes+1 }, hangBound, 50*time.Millisecond,
		"one change, one write; no CRD-missing flap after the restart (writes: %d before, %d after)", writes, rep.Writes())
	require.Zero(t, rep.Failures(), "reconciles failed")
}

// TestRunsAsItsServiceAccount runs the airunway-status-reporter binary as
// the ServiceAccount deploy/base creates, with only the RBAC it ships:
// it reports status, serves its probes and metrics, logs no permission
// error, and that identity can neither read Secrets nor change anything
// but ModelDeployment status.
func TestRunsAsItsServiceAccount(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	const system = "airunway-system"
	for _, file := range []string{"namespace.yaml", "rbac.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "deploy", "base", file))
		require.NoError(t, err)
		for _, obj := range splitYAML(t, data) {
			switch obj.GetKind() {
			case "ServiceAccount", "Role", "RoleBinding":
				obj.SetNamespace(system) // as the kustomization does
			}
			c.apply(t, obj)
		}
	}
	ns, objs, md := c.model(t, "sa", "vllm-minimal")
	deployment := pick(objs, "Deployment")[0]
	c.apply(t, objs...)

	sa := rest.CopyConfig(c.cfg)
	sa.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + system + ":airunway-status-reporter",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + system, "system:authenticated"},
	}
	kubeconfig := writeKubeconfig(t, sa)
	bin := reporterBinary(t)
	var cmd *exec.Cmd
	var exited chan error
	var logs *lockedBuffer
	t.Cleanup(func() {
		if cmd != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			t.Logf("the reporter, killed at cleanup, exited: %v", <-exited)
		}
	})
	// Every endpoint on port 0: the kernel picks the ports, and the test
	// learns them from the reporter's log and from /proc, so no other
	// process can take one between its choice and its use.
	logs = &lockedBuffer{}
	cmd = exec.Command(bin, "--kubeconfig", kubeconfig, "--namespace", ns,
		"--leader-election-namespace", system, "--leader-election-id", "reporter-"+ns,
		"--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
		// The conversion webhook keeps its certificate in a Secret of its
		// namespace; this envtest's CRD converts without a webhook (the
		// webhook itself is tested in deploy/conversion_test.go).
		"--conversion-bind-address", "127.0.0.1:0", "--conversion-hosts", "127.0.0.1",
		"--discovery-interval", "500ms", "-v", "1")
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	metrics, probes := boundAddrs(t, cmd.Process.Pid, exited, logs)

	waitHTTP(t, "http://"+probes+"/readyz", "ok")
	waitHTTP(t, "http://"+probes+"/healthz", "ok")
	webhookSecret := &corev1.Secret{}
	require.NoError(t, c.admin.Get(ctx, types.NamespacedName{Namespace: system, Name: reporter.DefaultConversionSecret}, webhookSecret),
		"ready means the webhook has its certificate, kept in a Secret the shipped RBAC lets it create")
	c.waitFor(t, key(md), want{phase: "Deploying"})
	c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
	body := waitHTTP(t, "http://"+metrics+"/metrics", "airunway_status_reporter_status_writes_total")
	require.Contains(t, body, `controller_runtime_reconcile_total{controller="modeldeployment-status",result="success"}`)

	as, err := client.New(sa, client.Options{})
	require.NoError(t, err)
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = "hf-token", ns
	secret.StringData = map[string]string{"token": "hf_secret"}
	require.NoError(t, c.admin.Create(ctx, secret))
	denied := []struct {
		what string
		err  error
	}{
		{"get a Secret", as.Get(ctx, key(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "hf-token", "namespace": ns}}}), &corev1.Secret{})},
		{"list Secrets", as.List(ctx, &corev1.SecretList{}, client.InNamespace(ns))},
		{"patch a Deployment", as.Patch(ctx, deployment.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`)))},
		{"patch a ModelDeployment's spec", as.Patch(ctx, md.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`)))},
		{"delete a ModelDeployment", as.Delete(ctx, md.DeepCopy())},
		{"create a ConfigMap", as.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}})},
		{"list Pods", as.List(ctx, &corev1.PodList{})},
		{"update a ModelDeployment", as.Update(ctx, md.DeepCopy())},
		{"create an Event outside its namespace", as.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}, InvolvedObject: corev1.ObjectReference{Namespace: ns}})},
		{"delete its Lease", as.Delete(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "reporter-" + ns, Namespace: system}})},
		{"list Leases", as.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace(system))},
		{"update a Secret other than its webhook's", as.Update(ctx, secret.DeepCopy())},
	}
	for _, d := range denied {
		require.True(t, apierrors.IsForbidden(d.err), "the reporter's identity can %s (err: %v)", d.what, d.err)
	}
	// The leader renews the webhook's certificate in place before it
	// expires (reporter/certs.go): an update of that Secret only.
	require.NoError(t, as.Update(ctx, webhookSecret.DeepCopy()), "the shipped RBAC must let the leader renew the webhook certificate")
	// What it may patch, the status subresource, carries nothing else: the
	// API server drops a status patch's labels, annotations and spec.
	sneaky := []byte(`{"metadata":{"labels":{"owned":"yes"},"annotations":{"render.airunway.ai/provider":"other"},"finalizers":["x/y"]},"spec":{"replicas":7}}`)
	require.NoError(t, as.Status().Patch(ctx, md.DeepCopy(), client.RawPatch(types.MergePatchType, sneaky)))
	_, live := c.modelStatus(t, key(md))
	require.Empty(t, live.GetLabels()["owned"])
	require.Equal(t, md.GetAnnotations()["render.airunway.ai/provider"], live.GetAnnotations()["render.airunway.ai/provider"])
	require.Empty(t, live.GetFinalizers())
	replicas, _, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", "replicas")
	require.NotEqual(t, int64(7), replicas)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit after SIGTERM; logs:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the reporter did not exit after SIGTERM; logs:\n%s", logs.String())
	}
	require.NotContains(t, strings.ToLower(logs.String()), "forbidden", "the shipped RBAC is not enough; logs:\n%s", logs.String())
}

// reporterBinary is the binary `make test` built, or one built now.
func reporterBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("AIRUNWAY_STATUS_REPORTER_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "airunway-status-reporter")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/airunway-status-reporter").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func writeKubeconfig(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["reporter"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Impersonate: cfg.Impersonate.UserName, ImpersonateGroups: cfg.Impersonate.Groups,
	}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "reporter"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}

// The reporter's log lines that name the address an endpoint bound: the
// health probes' (controller-runtime's server) and the conversion
// webhook's. The metrics server logs only the address it was given.
var (
	probesBound     = regexp.MustCompile(`"starting server" name="health probe" addr="(127\.0\.0\.1:\d+)"`)
	conversionBound = regexp.MustCompile(`"serving the ModelDeployment conversion webhook" .*address="(127\.0\.0\.1:\d+)"`)
)

// boundAddrs waits until the reporter, every endpoint given 127.0.0.1:0,
// listens on three ports, and returns the metrics and probe addresses:
// the probes' and the webhook's as the reporter logged them, the metrics'
// the third port the kernel says it holds (procnet). The 60 s only catch
// a reporter that never gets there.
func boundAddrs(t *testing.T, pid int, exited <-chan error, logs *lockedBuffer) (metrics, probes string) {
	t.Helper()
	hung := time.After(60 * time.Second)
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		p, c := probesBound.FindStringSubmatch(logs.String()), conversionBound.FindStringSubmatch(logs.String())
		ports, err := procnet.ListeningPorts(pid)
		require.NoError(t, err)
		if p != nil && c != nil && len(ports) == 3 {
			var others []int
			for _, port := range ports {
				if a := "127.0.0.1:" + strconv.Itoa(port); a != p[1] && a != c[1] {
					others = append(others, port)
				}
			}
			require.Len(t, others, 1, "the reporter listens on %v; the probes on %s, the webhook on %s", ports, p[1], c[1])
			return "127.0.0.1:" + strconv.Itoa(others[0]), p[1]
		}
		require.LessOrEqual(t, len(ports), 3, "the reporter listens on %v: more than its metrics, probes and webhook", ports)
		select {
		case err := <-exited:
			t.Fatalf("the reporter exited before it listened (%v); logs:\n%s", err, logs.String())
		case <-hung:
			t.Fatalf("the reporter does not listen on its three endpoints after 60s (ports %v); logs:\n%s", ports, logs.String())
		case <-poll.C:
		}
	}
}

// waitHTTP polls a URL until it answers 200 with a body containing want.
func waitHTTP(t *testing.T, url, want string) string {
	t.Helper()
	var answered string
	require.EventuallyWithT(t, func(collect *assert.CollectT) {
		resp, err := http.Get(url)
		if !assert.NoError(collect, err) {
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if !assert.NoError(collect, err) {
			return
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			collect.Errorf("%s answered %d %.500s", url, resp.StatusCode, body)
			return
		}
		answered = string(body)
	}, hangBound, 200*time.Millisecond, "%s never answered 200 with %q", url, want)
	return answered
}

// TestRunsOutOfClusterWithOnlyKubeconfig starts the binary as a user would
// from a laptop or a CI job: a kubeconfig and nothing about leader
// election. There is no pod namespace for a Lease, so it says election is
// off and reports. (--namespace keeps it to this test's models; the
// endpoints are off so that it cannot collide with another process's
// ports.)
func TestRunsOutOfClusterWithOnlyKubeconfig(t *testing.T) {
	c := cluster(t)
	ns, objs, md := c.model(t, "laptop", "vllm-minimal")
	deployment := pick(objs, "Deployment")[0]
	c.apply(t, objs...)

	logs := &lockedBuffer{}
	cmd := exec.Command(reporterBinary(t), "--kubeconfig", writeKubeconfig(t, c.cfg), "--namespace", ns,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	c.waitFor(t, key(md), want{phase: "Deploying"})
	c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
	require.Contains(t, logs.String(), "leader election is off: not running in a pod")
}

// lockedBuffer is a bytes.Buffer a running process writes while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
