package twin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// A fleet of clusters (issue 39) on two more twins, each its own etcd,
// kube-apiserver, controller-manager, scheduler and KWOK, with the Nodes of
// examples/fleet/clusters/<cluster>/capabilities.yaml. `airunway-render
// plan --fleet` assigns each model of examples/fleet/models to a cluster
// and records it (annotation airunway.ai/cluster); the GitOps engines,
// running in the suite's main twin as a management cluster, deliver each
// cluster its own models: the real ApplicationSet controller generates an
// Application per cluster directory (examples/fleet/argocd), and Flux
// applies each cluster's rendered directory through a kubeconfig Secret
// (examples/fleet/flux).

// fleetDir is the fleet example, relative to a repository's root.
var fleetDir = filepath.Join("examples", "fleet")

// fleetMember is one cluster of the fleet: its twin, its name and labels
// from its capability file, its Nodes.
type fleetMember struct {
	name   string
	twin   *twin.Twin
	labels map[string]string
	nodes  map[string]string // node name → pool
}

var (
	fleetOnce    sync.Once
	fleet        map[string]*fleetMember
	fleetNames   []string
	fleetErr     error
	fleetStartup time.Duration
)

// useFleet starts the fleet's twins once (at once, beside each other) for
// every fleet test; they run until the suite ends.
func useFleet(t *testing.T) map[string]*fleetMember {
	t.Helper()
	fleetOnce.Do(func() {
		start := time.Now()
		fleet, fleetErr = startFleet()
		fleetStartup = time.Since(start)
	})
	require.NoError(t, fleetErr, "starting the fleet's twins")
	return fleet
}

func startFleet() (map[string]*fleetMember, error) {
	dirs, err := filepath.Glob(filepath.Join(repoRoot, fleetDir, "clusters", "*", "capabilities.yaml"))
	if err != nil {
		return nil, err
	}
	if len(dirs) < 2 {
		return nil, fmt.Errorf("%s: a fleet needs two clusters, found %d", filepath.Join(fleetDir, "clusters"), len(dirs))
	}
	caps := map[string]*capabilities.Resolved{}
	labels := map[string]map[string]string{}
	for _, f := range dirs {
		name := filepath.Base(filepath.Dir(f))
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, problems := capabilities.Decode(data)
		if problems.HasErrors() {
			return nil, fmt.Errorf("%s: %v", f, problems)
		}
		if c.Name != name {
			return nil, fmt.Errorf("%s: metadata.name is %q; the fleet names a cluster by its directory", f, c.Name)
		}
		r, problems := capabilities.Resolve(c)
		if problems.HasErrors() {
			return nil, fmt.Errorf("%s: %v", f, problems)
		}
		caps[name], labels[name] = r, c.Labels
		fleetNames = append(fleetNames, name)
	}
	reporterBin, err := filepath.Abs(os.Getenv("AIRUNWAY_STATUS_REPORTER_BIN"))
	if err != nil || os.Getenv("AIRUNWAY_STATUS_REPORTER_BIN") == "" {
		return nil, errors.New("AIRUNWAY_STATUS_REPORTER_BIN must name the status reporter binary (make gitops sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), twin.HangBound)
	defer cancel()
	// The CRDs before the controllers, as in a cluster that has run for a
	// while: the garbage collector then tracks ModelDeployments from its
	// start (a pruned model is deleted in the foreground).
	twins, err := twin.StartFleet(ctx, func(tw *twin.Twin) error { return installCRDsOn(ctx, tw) }, fleetNames...)
	if err != nil {
		return nil, err
	}
	atExit(func() {
		// The engines in the main twin hold watches on the fleet's API
		// servers, which then would not stop within envtest's 20 s: they go
		// first.
		for _, p := range []string{"argocd-applicationset-controller", "argocd-application-controller", "kustomize-controller"} {
			cluster.StopProcess(p)
		}
		for _, tw := range twins {
			if err := tw.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "twin %s: stopping: %v\n", tw.Name, err)
			}
		}
	})
	out := map[string]*fleetMember{}
	for i, name := range fleetNames {
		m := &fleetMember{name: name, twin: twins[i], labels: labels[name], nodes: map[string]string{}}
		// The status reporter in each cluster, as deploy/base installs it:
		// Argo CD's health and Flux's wait read the Ready it writes.
		if err := m.twin.StartProcess("airunway-status-reporter", reporterBin, nil,
			"--kubeconfig", m.twin.Kubeconfig, "--namespace", exampleNamespace,
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--discovery-interval", "2s"); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, n := range caps[name].Nodes() {
			if err := createNode(ctx, m.twin, &n); err != nil {
				return nil, fmt.Errorf("%s: node %s: %w", name, n.Name, err)
			}
			m.nodes[n.Name] = poolOf(&n)
		}
		out[name] = m
	}
	return out, nil
}

// createNode creates a Node with its capacity (a status patch should the
// create drop it), as useCluster does on the main twin.
func createNode(ctx context.Context, tw *twin.Twin, node *corev1.Node) error {
	n := node.DeepCopy()
	if err := tw.Client.Create(ctx, n); err != nil {
		return err
	}
	if len(n.Status.Allocatable) == 0 {
		patch := client.MergeFrom(n.DeepCopy())
		n.Status.Capacity, n.Status.Allocatable = node.Status.Capacity, node.Status.Allocatable
		return tw.Client.Status().Patch(ctx, n, patch)
	}
	return nil
}

// fleetLogs are the tails of the fleet twins' component logs.
func fleetLogs(lines int) string {
	var b strings.Builder
	for _, name := range fleetNames {
		fmt.Fprintf(&b, "=== twin %s\n%s", name, fleet[name].twin.Logs(lines))
	}
	return b.String()
}

// fleetPlan is what `airunway-render plan --fleet -o json` prints, the
// parts the tests read.
type fleetPlan struct {
	Fits   bool `json:"fits"`
	Models []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Cluster   string `json:"cluster"`
	} `json:"models"`
	Clusters []struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
		Fits   bool              `json:"fits"`
		// Plan is the cluster's own capacity plan (`plan -o json` of its
		// models on its capability file).
		Plan struct {
			RolloutsProceed bool `json:"rolloutsProceed"`
			Pools           []struct {
				Name          string `json:"name"`
				GPUsPerNode   int    `json:"gpusPerNode"`
				NodesAvail    int    `json:"nodesAvailable"`
				GPUsRequested int    `json:"gpusRequested"`
				PendingPods   int    `json:"pendingPods"`
				Models        []struct {
					Name string `json:"name"`
					Pods int    `json:"pods"`
					GPUs int    `json:"gpus"`
				} `json:"models"`
			} `json:"pools"`
		} `json:"plan"`
	} `json:"clusters"`
}

// assignment is each model's cluster.
func (p *fleetPlan) assignment() map[string]string {
	out := map[string]string{}
	for _, m := range p.Models {
		out[m.Name] = m.Cluster
	}
	return out
}

// fits is each cluster's verdict.
func (p *fleetPlan) fits() map[string]bool {
	out := map[string]bool{}
	for _, c := range p.Clusters {
		out[c.Name] = c.Fits
	}
	return out
}

// pending is how many pods the plan says stay Pending in each cluster: none
// where it fits.
func (p *fleetPlan) pending() map[string]int {
	out := map[string]int{}
	for _, c := range p.Clusters {
		out[c.Name] = 0
		for _, pool := range c.Plan.Pools {
			out[c.Name] += pool.PendingPods
		}
	}
	return out
}

// planFleet runs `airunway-render plan --fleet` on the fleet example of a
// work tree, with --write when write is set (the models then carry their
// cluster), and reads its JSON.
func planFleet(t *testing.T, work string, write bool) *fleetPlan {
	t.Helper()
	p, out := runFleetPlan(t, work, write)
	require.True(t, p.Fits, "the fleet plan does not fit: %s", out)
	return p
}

// runFleetPlan runs `plan --fleet` and checks what its JSON says whether
// or not the fleet fits (exit 0; 3 when some model fits nowhere; 4 when
// every model fits but some cluster's rolling updates stall).
func runFleetPlan(t *testing.T, work string, write bool) (*fleetPlan, []byte) {
	t.Helper()
	args := []string{"plan", "--fleet", filepath.Join(fleetDir, "clusters"), "-f", filepath.Join(fleetDir, "models"), "-o", "json"}
	if write {
		args = append(args, "--write")
	}
	cmd := exec.Command(renderBin(t), args...)
	cmd.Dir = work
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err, "airunway-render %s: %s", strings.Join(args, " "), stderr.String())
	}
	require.Contains(t, []int{0, 3, 4}, code, "airunway-render %s: %s", strings.Join(args, " "), stderr.String())
	p := &fleetPlan{}
	require.NoError(t, json.Unmarshal(out, p), "plan --fleet -o json:\n%s", out)
	proceed := true
	for _, c := range p.Clusters {
		proceed = proceed && c.Plan.RolloutsProceed
	}
	require.Equal(t, planExitFor(p.Fits, proceed), code, "plan --fleet exits %d and says fits=%t, rollouts proceed=%t", code, p.Fits, proceed)
	require.NotEmpty(t, p.Models)
	for _, m := range p.Models {
		require.Contains(t, fleetNames, m.Cluster, "the plan puts %s in cluster %q", m.Name, m.Cluster)
		require.Equal(t, exampleNamespace, m.Namespace)
	}
	// One verdict per cluster of the fleet, each with its labels.
	require.ElementsMatch(t, fleetNames, slices.Collect(maps.Keys(p.fits())))
	for _, c := range p.Clusters {
		require.Equal(t, fleet[c.Name].labels, c.Labels, "cluster %s", c.Name)
	}
	return p, out
}

// annotationRE finds a model's airunway.ai/cluster annotation (not
// airunway.ai/cluster-selector).
var annotationRE = regexp.MustCompile(`(?m)^(\s+airunway\.ai/cluster:\s*)["']?([A-Za-z0-9.-]+)["']?\s*$`)

// modelFile is a model's file in the fleet example of a work tree.
func modelFile(work, model string) string {
	return filepath.Join(work, fleetDir, "models", model+".yaml")
}

// assignedInGit reads each model's airunway.ai/cluster annotation in a
// work tree: what every engine delivers by.
func assignedInGit(t *testing.T, work string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(work, fleetDir, "models", "*.yaml"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		if !strings.Contains(string(data), "kind: ModelDeployment") {
			continue
		}
		m := annotationRE.FindStringSubmatch(string(data))
		require.NotNil(t, m, "%s carries no airunway.ai/cluster annotation after plan --write", f)
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = m[2]
	}
	return out
}

// moveModel changes a model's airunway.ai/cluster annotation in the work
// tree, as a reviewed commit would.
func moveModel(t *testing.T, work, model, to string) {
	t.Helper()
	f := modelFile(work, model)
	data, err := os.ReadFile(f)
	require.NoError(t, err)
	matches := annotationRE.FindAllSubmatchIndex(data, -1)
	require.Len(t, matches, 1, "%s: one airunway.ai/cluster annotation", f)
	m := matches[0]
	moved := string(data[:m[4]]) + to + string(data[m[5]:])
	require.NoError(t, os.WriteFile(f, []byte(moved), 0o644))
}

// deliveryState is one look at the fleet: per cluster, the models present
// and what is wrong.
type deliveryState struct {
	present  map[string][]string // cluster → ModelDeployments
	problems []string
}

// readDelivery checks the fleet against an assignment: each model's
// ModelDeployment and Deployment exist in its cluster only, its pods
// (as many as the Deployment asks for, at least one) are bound to a Node of
// that cluster, of the pool the renderer annotated, and Running (KWOK);
// in every other cluster no ModelDeployment, Deployment or pod of it
// exists; each cluster holds exactly the models assigned to it; and in
// each cluster exactly as many pods are Pending (unbound) as the plan
// says: none where it fits.
func readDelivery(ctx context.Context, assign map[string]string, pendingPlanned map[string]int) deliveryState {
	s := deliveryState{present: map[string][]string{}}
	bad := func(format string, args ...any) { s.problems = append(s.problems, fmt.Sprintf(format, args...)) }
	for _, name := range fleetNames {
		c := fleet[name].twin.Client
		mds := &unstructured.UnstructuredList{}
		mds.SetAPIVersion("airunway.ai/v1alpha1")
		mds.SetKind("ModelDeploymentList")
		if err := c.List(ctx, mds, client.InNamespace(exampleNamespace)); err != nil {
			bad("%s: listing ModelDeployments: %v", name, err)
			continue
		}
		pools := map[string]string{}
		for _, md := range mds.Items {
			s.present[name] = append(s.present[name], md.GetName())
			pools[md.GetName()] = md.GetAnnotations()["render.airunway.ai/node-pool"]
		}
		sort.Strings(s.present[name])
		var want []string
		for model, cl := range assign {
			if cl == name {
				want = append(want, model)
			}
		}
		sort.Strings(want)
		if !slices.Equal(want, s.present[name]) {
			bad("%s holds ModelDeployments %v, the plan assigns it %v", name, s.present[name], want)
		}
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(exampleNamespace)); err != nil {
			bad("%s: listing pods: %v", name, err)
			continue
		}
		pending := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				pending++
			}
		}
		if pending != pendingPlanned[name] {
			bad("%s: %d pods are Pending, the plan says %d:\n%s", name, pending, pendingPlanned[name], podSummary(pods.Items))
		}
		for model, cl := range assign {
			var own []corev1.Pod
			for _, p := range pods.Items {
				if p.Labels["airunway.ai/model-deployment"] == model {
					own = append(own, p)
				}
			}
			dep := &appsv1.Deployment{}
			depErr := c.Get(ctx, client.ObjectKey{Namespace: exampleNamespace, Name: model}, dep)
			if cl != name {
				if len(own) > 0 {
					bad("%s: %d pods of %s, which the plan puts in %s", name, len(own), model, cl)
				}
				if !apierrors.IsNotFound(depErr) {
					bad("%s: Deployment %s exists (or: %v), the plan puts it in %s", name, model, depErr, cl)
				}
				continue
			}
			if depErr != nil {
				bad("%s: Deployment %s: %v", name, model, depErr)
				continue
			}
			replicas := int32(1)
			if dep.Spec.Replicas != nil {
				replicas = *dep.Spec.Replicas
			}
			if replicas < 1 || len(own) != int(replicas) {
				bad("%s: %s has %d pods, its Deployment asks for %d", name, model, len(own), replicas)
			}
			for _, p := range own {
				pool, known := fleet[name].nodes[p.Spec.NodeName]
				switch {
				case p.Spec.NodeName == "":
					// Pending: counted against the plan above.
				case p.Status.Phase != corev1.PodRunning:
					bad("%s: pod %s of %s: phase %s, node %q", name, p.Name, model, p.Status.Phase, p.Spec.NodeName)
				case !known:
					bad("%s: pod %s of %s is on node %q, not one of the cluster's", name, p.Name, model, p.Spec.NodeName)
				case pool != pools[model]:
					bad("%s: pod %s of %s is on pool %q, the renderer chose %q", name, p.Name, model, pool, pools[model])
				}
			}
		}
	}
	return s
}

// waitDelivery waits until the fleet is as readDelivery wants it.
func waitDelivery(t *testing.T, assign map[string]string, pending map[string]int, within time.Duration, diagnose func() string) deliveryState {
	t.Helper()
	var last deliveryState
	waitUntil(t, within, 250*time.Millisecond, func(c *assert.CollectT) {
		last = readDelivery(context.Background(), assign, pending)
		for _, p := range last.problems {
			c.Errorf("%s", p)
		}
	}, func() string { return diagnose() + "\n" + fleetLogs(15) }, "the fleet is not delivered as planned (%v) after %s", assign, within)
	return last
}

// cleanFleet deletes the example namespace in every cluster of the fleet
// and waits until it is gone, so the next fleet test starts from empty
// clusters.
func cleanFleet(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exampleNamespace}}
	// Its content first, pods at once: the namespace controller then
	// finds it empty on its first pass instead of coming back after a
	// backoff. Every cluster's deletions first, then the waits.
	in := client.InNamespace(exampleNamespace)
	for _, name := range fleetNames {
		c := fleet[name].twin.Client
		md := &unstructured.Unstructured{}
		md.SetAPIVersion("airunway.ai/v1alpha1")
		md.SetKind("ModelDeployment")
		for _, o := range []client.Object{md, &appsv1.Deployment{}, &corev1.Service{}} {
			if err := c.DeleteAllOf(ctx, o, in); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("%s: deleting %T: %v", name, o, err)
			}
		}
		_ = c.DeleteAllOf(ctx, &appsv1.ReplicaSet{}, in)
		_ = c.DeleteAllOf(ctx, &corev1.Pod{}, in, client.GracePeriodSeconds(0))
		if err := c.Delete(ctx, ns.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("%s: deleting namespace %s: %v", name, exampleNamespace, err)
		}
	}
	for _, name := range fleetNames {
		c := fleet[name].twin.Client
		assert.EventuallyWithT(t, func(ct *assert.CollectT) {
			_ = c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(exampleNamespace), client.GracePeriodSeconds(0))
			assert.True(ct, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})), "%s: namespace %s still there", name, exampleNamespace)
		}, twin.HangBound, 250*time.Millisecond, "%s: namespace %s was not deleted", name, exampleNamespace)
	}
}

// moveOneModel moves the first model (by name) that another cluster can
// take, its airunway.ai/cluster annotation changed in the work tree as a
// reviewed commit would: `plan --fleet` on the changed tree keeps Git's
// assignments, so it fits exactly when the new cluster holds the model
// beside its others. It returns the move and that plan.
func moveOneModel(t *testing.T, work string, assign map[string]string) (model, from, to string, after *fleetPlan) {
	t.Helper()
	models := slices.Sorted(maps.Keys(assign))
	var tried []string
	for _, model := range models {
		from := assign[model]
		for _, to := range fleetNames {
			if to == from {
				continue
			}
			f := modelFile(work, model)
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			moveModel(t, work, model, to)
			p, _ := runFleetPlan(t, work, false)
			if p.Fits && p.assignment()[model] == to {
				return model, from, to, p
			}
			tried = append(tried, model+"→"+to)
			require.NoError(t, os.WriteFile(f, data, 0o644))
		}
	}
	t.Fatalf("no model of the fleet can move to another cluster (tried %v): the move cannot be shown", tried)
	return "", "", "", nil
}

// preparePlatform writes the fleet plan into the platform repository's
// models (`plan --fleet --write`, as the fleet's CI does) and commits it;
// the assignment the models now carry is the plan's. It registers a
// cleanup that puts the fleet example back as it was.
func preparePlatform(t *testing.T, repo *platformRepo) (*fleetPlan, map[string]string) {
	t.Helper()
	dir := filepath.Join(repo.work, fleetDir)
	saved := filepath.Join(t.TempDir(), "fleet")
	require.NoError(t, os.CopyFS(saved, os.DirFS(dir)))
	t.Cleanup(func() {
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.CopyFS(dir, os.DirFS(saved)))
		require.NoError(t, repo.commitAll("fleet: the example as it was"))
	})
	plan := planFleet(t, repo.work, true)
	assign := plan.assignment()
	require.Equal(t, assign, assignedInGit(t, repo.work), "the models' airunway.ai/cluster annotations after plan --write are not the plan's assignment")
	// Both clusters run models: the test could not tell a cluster that
	// gets everything from one that gets its own.
	for _, name := range fleetNames {
		require.Contains(t, slices.Collect(maps.Values(assign)), name, "the plan assigns no model to %s", name)
	}
	return plan, assign
}

// The Argo CD side.

var (
	appsetOnce sync.Once
	appsetErr  error
)

// startApplicationSetController runs the real ApplicationSet controller
// (from the same binary as the rest of Argo CD) in the main twin beside
// the application-controller, the git generators asking the suite's
// repo-server: every address on 127.0.0.1, no leader election, no SCM or
// pull-request providers (the only generators that would reach out of the
// machine).
func startApplicationSetController(t *testing.T) {
	t.Helper()
	startArgoCD(t)
	assets := gitopsAssets(t)
	_, err := os.Stat(filepath.Join(assets, "argocd", "crds", "applicationset-crd.yaml"))
	require.NoError(t, err, "the Argo CD build in GITOPS_ASSETS has no ApplicationSet controller: run hack/install-gitops.sh again")
	appsetOnce.Do(func() {
		appsetErr = cluster.StartProcess("argocd-applicationset-controller", filepath.Join(assets, "argocd", "argocd"),
			append(argoEnv(), "ARGOCD_BINARY_NAME=argocd-applicationset-controller"),
			"--kubeconfig", cluster.Kubeconfig, "--namespace", argoNamespace,
			"--argocd-repo-server", argoRepoServer, "--repo-server-plaintext",
			// No metrics or probes; the Git webhook on a port of its
			// own choosing, which nothing calls.
			"--metrics-addr", "0", "--probe-addr", "0", "--webhook-addr", "127.0.0.1:0",
			"--enable-leader-election=false", "--enable-scm-providers=false", "--loglevel", "info")
	})
	require.NoError(t, appsetErr)
}

// argoFleetCluster registers a fleet member with Argo CD under its name,
// labelled with its capability file's labels, for as long as the test runs.
func argoFleetCluster(t *testing.T, m *fleetMember) {
	t.Helper()
	cfg, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{
		"caData":   base64.StdEncoding.EncodeToString(m.twin.Config.CAData),
		"certData": base64.StdEncoding.EncodeToString(m.twin.Config.CertData),
		"keyData":  base64.StdEncoding.EncodeToString(m.twin.Config.KeyData),
	}})
	require.NoError(t, err)
	labels := maps.Clone(m.labels)
	labels["argocd.argoproj.io/secret-type"] = "cluster"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + m.name, Namespace: argoNamespace, Labels: labels},
		StringData: map[string]string{"name": m.name, "server": m.twin.Config.Host, "config": string(cfg)},
	}
	require.NoError(t, cluster.Client.Create(context.Background(), secret))
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), secret) })
}

// syncPushed makes Argo CD see the commit just pushed, as its Git webhook
// would (the repo-server caches a branch's head for
// --revision-cache-expiration, 3 minutes by default, so a poll alone would
// see it that late), and waits until each Application's sync to it has
// succeeded. It returns the commit.
func syncPushed(t *testing.T, repo *platformRepo, apps map[string]string, timelines map[string]*healthTimeline) string {
	t.Helper()
	head, err := gitIn(repo.work, "rev-parse", "HEAD")
	require.NoError(t, err)
	head = strings.TrimSpace(head)
	for _, name := range fleetNames {
		hardRefresh(t, apps[name])
	}
	for _, name := range fleetNames {
		waitApp(t, apps[name], timelines[name], twin.HangBound, func(s appState) bool { return s.phase == "Succeeded" && s.revision == head })
	}
	return head
}

// replicasRE finds a model's spec.scaling.replicas.
var replicasRE = regexp.MustCompile(`(?m)^(\s+replicas:\s*)(\d+)\s*$`)

// overcommit scales a model, in the work tree, to one replica more than
// its cluster has free GPUs for (by the plan), and returns the plan of
// the changed tree, which must say that cluster is short and the others
// fit.
func overcommit(t *testing.T, work, model, cluster string, p *fleetPlan) *fleetPlan {
	t.Helper()
	free, perPod := 0, 0
	for _, c := range p.Clusters {
		if c.Name != cluster {
			continue
		}
		for _, pool := range c.Plan.Pools {
			free += pool.GPUsPerNode*pool.NodesAvail - pool.GPUsRequested
			for _, m := range pool.Models {
				if m.Name == model && m.Pods > 0 {
					perPod = m.GPUs / m.Pods
				}
			}
		}
	}
	require.Positive(t, perPod, "the plan of %s has no pods of %s", cluster, model)
	f := modelFile(work, model)
	data, err := os.ReadFile(f)
	require.NoError(t, err)
	m := replicasRE.FindSubmatchIndex(data)
	require.NotNil(t, m, "%s sets no spec.scaling.replicas to change", f)
	var replicas int
	_, err = fmt.Sscan(string(data[m[4]:m[5]]), &replicas)
	require.NoError(t, err)
	more := replicas + free/perPod + 1
	require.NoError(t, os.WriteFile(f, []byte(string(data[:m[4]])+fmt.Sprint(more)+string(data[m[5]:])), 0o644))
	short, out := runFleetPlan(t, work, false)
	for _, c := range short.Clusters {
		require.Equal(t, c.Name != cluster, c.Fits, "%s scaled to %d replicas: the plan of %s\n%s", model, more, c.Name, out)
	}
	require.Positive(t, short.pending()[cluster], "the plan says %s is short but leaves no pod Pending:\n%s", cluster, out)
	return short
}

// requireStillPending holds that the cluster's Pending pods stay Pending:
// once the scheduler has tried each and marked it unschedulable (its
// verdict, which only a change of the cluster makes it reconsider), none
// is bound while the scheduler gets another look (a scheduler that binds
// them late would not agree with the plan after all).
func requireStillPending(t *testing.T, name string, want int) {
	t.Helper()
	pending := func() ([]corev1.Pod, error) {
		pods := &corev1.PodList{}
		if err := fleet[name].twin.Client.List(context.Background(), pods, client.InNamespace(exampleNamespace)); err != nil {
			return nil, err
		}
		var out []corev1.Pod
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pods, err := pending()
		require.NoError(c, err)
		require.Len(c, pods, want, "%s: pods Pending against the plan\n%s", name, podSummary(pods))
		for _, p := range pods {
			assert.True(c, podUnschedulable(&p), "%s: the scheduler has not marked pod %s unschedulable: %v", name, p.Name, p.Status.Conditions)
		}
	}, twin.HangBound, 250*time.Millisecond, "%s: the scheduler did not mark the %d Pending pods unschedulable", name, want)
	// Never runs its condition off the test's goroutine: no t in it.
	require.Never(t, func() bool {
		pods, err := pending()
		return err != nil || len(pods) != want
	}, 3*time.Second, 250*time.Millisecond, "%s: a pod the scheduler had marked unschedulable was bound against the plan (or the pods could not be listed)", name)
}

// waitNoFleetApps waits until the ApplicationSet's Applications are gone.
func waitNoFleetApps(t *testing.T) {
	t.Helper()
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		apps := &unstructured.UnstructuredList{}
		apps.SetAPIVersion("argoproj.io/v1alpha1")
		apps.SetKind("ApplicationList")
		require.NoError(c, cluster.Client.List(context.Background(), apps, client.InNamespace(argoNamespace)))
		for _, a := range apps.Items {
			for _, name := range fleetNames {
				assert.NotEqual(c, "models-"+name, a.GetName(), "Application %s still there", a.GetName())
			}
		}
	}, twin.HangBound, 250*time.Millisecond, "the ApplicationSet's Applications were not deleted")
}

// hardRefresh asks Argo CD to refresh the Application without its caches,
// as the UI's Hard refresh does.
func hardRefresh(t *testing.T, name string) { requestRefresh(t, name, "hard") }

// fleetApplicationSet is examples/fleet/argocd/applicationset.yaml,
// pointed at the platform repository.
func fleetApplicationSet(t *testing.T, repoURL string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, fleetDir, "argocd", "applicationset.yaml"))
	require.NoError(t, err)
	set := &unstructured.Unstructured{}
	require.NoError(t, sigsyaml.Unmarshal(data, &set.Object))
	require.Equal(t, "ApplicationSet", set.GetKind())
	generators, _, err := unstructured.NestedSlice(set.Object, "spec", "generators")
	require.NoError(t, err)
	require.Len(t, generators, 1)
	require.NoError(t, unstructured.SetNestedField(generators[0].(map[string]any), repoURL, "git", "repoURL"))
	require.NoError(t, unstructured.SetNestedSlice(set.Object, generators, "spec", "generators"))
	require.NoError(t, unstructured.SetNestedField(set.Object, repoURL, "spec", "template", "spec", "source", "repoURL"))
	return set
}

// TestGitOpsFleetArgoCD delivers the fleet example with the real
// ApplicationSet controller, application-controller, repo-server and the
// plugin in argocd-cmp-server: the ApplicationSet (Git directory generator
// over examples/fleet/clusters/*) makes one Application per cluster, each
// syncs, and every model runs in the cluster the fleet plan chose and
// nowhere else, its pods bound by that cluster's scheduler (none Pending
// where the plan says the cluster fits). Then a commit moves one model to
// the other cluster: it is bound there and pruned from where it was. A
// commit that scales it past its new cluster's GPUs leaves exactly the
// pods Pending there that the plan says will be. Last, deleting the
// ApplicationSet removes the Applications and leaves the models running.
func TestGitOpsFleetArgoCD(t *testing.T) {
	startApplicationSetController(t)
	repo := usePlatformRepo(t)
	members := useFleet(t)
	t.Logf("the fleet's %d twins started in %.1f s (once per run)", len(members), fleetStartup.Seconds())
	plan, assign := preparePlatform(t, repo)
	require.NoError(t, repo.commitAll("fleet: plan --fleet --write"))
	for _, name := range fleetNames {
		argoFleetCluster(t, members[name])
	}
	t.Cleanup(func() { cleanFleet(t) })

	set := fleetApplicationSet(t, repo.URL)
	start := time.Now()
	// Strict: a field Argo CD's CRD does not have fails, instead of being
	// dropped.
	require.NoError(t, cluster.Client.Create(context.Background(), set, client.FieldValidation("Strict")))
	t.Cleanup(func() {
		// The Applications go with it; what they deployed stays,
		// cleanFleet removes it.
		if err := cluster.Client.Delete(context.Background(), set); err == nil {
			waitNoFleetApps(t)
		}
	})
	apps := map[string]string{}
	timelines := map[string]*healthTimeline{}
	for _, name := range fleetNames {
		apps[name] = "models-" + name
		timelines[name] = &healthTimeline{}
	}
	head, err := gitIn(repo.work, "rev-parse", "HEAD")
	require.NoError(t, err)
	head = strings.TrimSpace(head)
	synced := func(s appState) bool { return s.sync == "Synced" && s.phase == "Succeeded" && s.revision == head }
	for _, name := range fleetNames {
		waitApp(t, apps[name], timelines[name], twin.HangBound, synced)
	}
	toSynced := time.Since(start)
	argoDiagnose := func() string {
		var b strings.Builder
		for _, name := range fleetNames {
			s, _ := readApp(t, apps[name])
			fmt.Fprintf(&b, "Application %s: %+v\n", apps[name], s)
		}
		return b.String()
	}
	waitDelivery(t, assign, plan.pending(), twin.HangBound, argoDiagnose)
	toBound := time.Since(start)

	// Move one model in Git.
	model, from, to, after := moveOneModel(t, repo.work, assign)
	moved := maps.Clone(assign)
	moved[model] = to
	require.Equal(t, moved, assignedInGit(t, repo.work))
	require.NoError(t, repo.commitAll(fmt.Sprintf("fleet: move %s from %s to %s", model, from, to)))
	moveStart := time.Now()
	head = syncPushed(t, repo, apps, timelines)
	waitDelivery(t, moved, after.pending(), twin.HangBound, argoDiagnose)
	toMoved := time.Since(moveStart)
	t.Logf("%s moved %s→%s: bound there and pruned here %.1f s after the commit", model, from, to, toMoved.Seconds())
	// The comparison right after a sync that pruned still sees the pruned
	// objects terminating (OutOfSync); Argo CD's next periodic refresh
	// (--app-resync, 10 s here, and up to twice that) finds them gone.
	// Asked for at once, as the UI's Refresh does.
	for _, name := range fleetNames {
		refreshApp(t, apps[name])
		waitApp(t, apps[name], timelines[name], twin.HangBound, synced)
	}

	// The plan says a cluster is short, and its scheduler agrees: the
	// moved model scaled to one replica more than its new cluster has GPUs
	// for leaves exactly the plan's pending pods Pending there, and the
	// other cluster untouched.
	short := overcommit(t, repo.work, model, to, after)
	require.NoError(t, repo.commitAll(fmt.Sprintf("fleet: scale %s beyond %s", model, to)))
	head = syncPushed(t, repo, apps, timelines)
	waitDelivery(t, moved, short.pending(), twin.HangBound, argoDiagnose)
	requireStillPending(t, to, short.pending()[to])

	for _, name := range fleetNames {
		s, _ := readApp(t, apps[name])
		var mine []string
		for m, cl := range moved {
			if cl == name {
				mine = append(mine, m)
			}
		}
		sort.Strings(mine)
		addGitOpsRow("argocd applicationset (real) | %s (%s) | %s, %s; runs %v; %s moved %s→%s in %.1f s, then scaled past %s: %d pods Pending here, as planned | %s | %.1f to synced, %.1f to bound",
			apps[name], filepath.Join(fleetDir, "clusters", name), s.phase, s.sync, mine, model, from, to, toMoved.Seconds(), to, short.pending()[name], timelines[name], toSynced.Seconds(), toBound.Seconds())
	}

	// The ApplicationSet deleted: its Applications go, the models stay
	// (preserveResourcesOnDeletion).
	require.NoError(t, cluster.Client.Delete(context.Background(), set))
	waitNoFleetApps(t)
	if s := readDelivery(context.Background(), moved, short.pending()); len(s.problems) > 0 {
		t.Fatalf("deleting the ApplicationSet changed the clusters: %s", strings.Join(s.problems, "; "))
	}
}

// The Flux side.

// renderFleet runs examples/fleet/flux/render.sh in a work tree: each
// cluster's rendered directory, as the fleet's CI writes it.
func renderFleet(t *testing.T, work string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(work, fleetDir, "flux", "render.sh"))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(renderBin(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "render.sh:\n%s", out)
}

// fleetFluxObjects are examples/fleet/flux/kustomizations.yaml, pointed at
// the platform repository, with intervals short enough for a test.
func fleetFluxObjects(t *testing.T, repoURL string) []*unstructured.Unstructured {
	t.Helper()
	return fluxObjects(t, filepath.Join(repoRoot, fleetDir, "flux", "kustomizations.yaml"), repoURL, "1m")
}

// requestReconcile asks a Flux object to reconcile now, as `flux
// reconcile` and a notification Receiver do.
func requestReconcile(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.GroupVersionKind())
	require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(o), live))
	patch := client.MergeFrom(live.DeepCopy())
	annotations := live.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["reconcile.fluxcd.io/requestedAt"] = time.Now().Format(time.RFC3339Nano)
	live.SetAnnotations(annotations)
	require.NoError(t, cluster.Client.Patch(context.Background(), live, patch))
}

// fluxKubeconfig is the Secret a Kustomization's spec.kubeConfig.secretRef
// names: the fleet member's kubeconfig under `value`, every credential
// inline, its server on 127.0.0.1.
func fluxKubeconfig(t *testing.T, m *fleetMember, name string) {
	t.Helper()
	kc, err := m.twin.KubeconfigBytes()
	require.NoError(t, err)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fluxNamespace},
		Data:       map[string][]byte{"value": kc},
	}
	require.NoError(t, cluster.Client.Create(context.Background(), secret))
	t.Cleanup(func() { _ = cluster.Client.Delete(context.Background(), secret) })
}

// TestGitOpsFleetFlux delivers the fleet example with the real Flux
// source-controller and kustomize-controller, running in the main twin as a
// management cluster: one Kustomization per cluster applies that cluster's
// rendered directory (examples/fleet/flux/render.sh) to it through
// spec.kubeConfig.secretRef. Every model runs in the cluster the plan chose
// and nowhere else, each Kustomization turns Ready (wait: true, the
// reporters' Ready); a commit that moves a model (its annotation and the
// rendered directories) binds it in the new cluster and prunes it from the
// old.
func TestGitOpsFleetFlux(t *testing.T) {
	startFlux(t)
	repo := usePlatformRepo(t)
	members := useFleet(t)
	plan, assign := preparePlatform(t, repo)
	renderFleet(t, repo.work)
	// What is committed is what the fleet's CI makes: plan --fleet --write
	// and render.sh change nothing.
	status, err := gitIn(repo.work, "status", "--porcelain", "--", fleetDir)
	require.NoError(t, err)
	require.Empty(t, status, "the committed fleet example is stale: run `airunway-render plan --fleet examples/fleet/clusters -f examples/fleet/models --write` and examples/fleet/flux/render.sh")
	require.NoError(t, repo.commitAll("fleet: plan --fleet --write, render.sh"))
	t.Cleanup(func() { cleanFleet(t) })

	require.NoError(t, createIgnoringExisting(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fluxNamespace}}))
	objs := fleetFluxObjects(t, repo.URL)
	ks := map[string]string{} // cluster → Kustomization
	for _, o := range objs {
		if o.GetKind() != "Kustomization" {
			continue
		}
		ref, _, _ := unstructured.NestedString(o.Object, "spec", "kubeConfig", "secretRef", "name")
		path, _, _ := unstructured.NestedString(o.Object, "spec", "path")
		name := filepath.Base(path)
		require.Contains(t, members, name, "Kustomization %s applies %s, not a cluster of the fleet", o.GetName(), path)
		require.NotEmpty(t, ref, "Kustomization %s has no spec.kubeConfig.secretRef", o.GetName())
		fluxKubeconfig(t, members[name], ref)
		ks[name] = o.GetName()
	}
	require.Len(t, ks, len(fleetNames), "one Kustomization per cluster")
	start := time.Now()
	t.Cleanup(func() {
		for _, o := range objs {
			_ = cluster.Client.Delete(context.Background(), o)
		}
		// Wait until they are gone: deleting a Kustomization prunes what
		// it applied (prune: true), for which it needs the kubeconfig
		// Secret, which is deleted after.
		for _, o := range objs {
			assert.Eventually(t, func() bool {
				return apierrors.IsNotFound(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o.DeepCopy()))
			}, twin.HangBound, 250*time.Millisecond, "%s %s was not deleted", o.GetKind(), o.GetName())
		}
	})
	for _, o := range objs {
		require.NoError(t, cluster.Client.Create(context.Background(), o, client.FieldValidation("Strict")), "%s %s", o.GetKind(), o.GetName())
	}
	timelines := map[string]*healthTimeline{}
	diagnose := func() string {
		var b strings.Builder
		for _, name := range fleetNames {
			status, msg, _ := kustomizationReady(t, ks[name])
			fmt.Fprintf(&b, "Kustomization %s: Ready=%s %s\n", ks[name], status, msg)
		}
		return b.String()
	}
	// Delivery first: a model in the wrong cluster is named as such,
	// rather than as a Kustomization that never turns Ready.
	waitDelivery(t, assign, plan.pending(), twin.HangBound, diagnose)
	for _, name := range fleetNames {
		timelines[name] = &healthTimeline{}
		waitKustomization(t, ks[name], timelines[name], twin.HangBound, func(s string) bool { return s == "True" })
	}
	toReady := time.Since(start)

	model, from, to, after := moveOneModel(t, repo.work, assign)
	moved := maps.Clone(assign)
	moved[model] = to
	require.Equal(t, moved, assignedInGit(t, repo.work))
	renderFleet(t, repo.work)
	require.NoError(t, repo.commitAll(fmt.Sprintf("fleet: move %s from %s to %s", model, from, to)))
	moveStart := time.Now()
	// What a Flux Receiver does on a push: the GitRepository fetches now,
	// not at its next interval; the Kustomizations follow its new revision.
	for _, o := range objs {
		if o.GetKind() == "GitRepository" {
			requestReconcile(t, o)
		}
	}
	waitDelivery(t, moved, after.pending(), twin.HangBound, diagnose)
	for _, name := range fleetNames {
		waitKustomization(t, ks[name], timelines[name], twin.HangBound, func(s string) bool { return s == "True" })
	}
	toMoved := time.Since(moveStart)
	for _, name := range fleetNames {
		addGitOpsRow("flux (real), kubeConfig.secretRef | %s (%s) | applied to %s; %s moved %s→%s in %.1f s | %s | %.1f",
			ks[name], filepath.Join(fleetDir, "rendered", name), name, model, from, to, toMoved.Seconds(), timelines[name], toReady.Seconds())
	}
}
