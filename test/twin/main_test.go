// Package twin_test runs rendered output on the cluster twin (package
// internal/testing/twin): the real kube-controller-manager and kube-scheduler
// place the pods of the rendered objects on KWOK nodes generated from the
// capability file, and the tests check that they land on the pool the
// renderer chose. `make twin` runs it alone and prints a table.
package twin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/conversiontest"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

var (
	repoRoot = filepath.Join("..", "..")
	cluster  *twin.Twin
	// scratch is a short directory for what outlives one test (the GitOps
	// engines' sockets and work directories; a Unix socket path must stay
	// under 108 bytes).
	scratch string
	// rows are the lines of the summary table TestMain prints.
	rowsMu sync.Mutex
	rows   []string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The API server's warnings (a deprecated provider version) go to
	// controller-runtime's logger; the tests read objects, not logs.
	ctrllog.SetLogger(logr.Discard())
	var err error
	if cluster, err = twin.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "twin:", err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "twin: stopping:", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), twin.HangBound)
	defer cancel()
	if err := cluster.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "twin:", err)
		return 1
	}
	if err := installCRDs(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "twin:", err)
		return 1
	}
	if scratch, err = os.MkdirTemp("", "twin"); err != nil {
		fmt.Fprintln(os.Stderr, "twin:", err)
		return 1
	}
	defer os.RemoveAll(scratch)
	code := m.Run()
	runAtExit()
	printTable()
	printGitOpsTable()
	return code
}

// atExit holds what tests started for the rest of the run (the fleet's
// twins), stopped after the last test, in reverse order.
var (
	atExitMu sync.Mutex
	atExitFn []func()
)

func atExit(f func()) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	atExitFn = append(atExitFn, f)
}

func runAtExit() {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	for i := len(atExitFn) - 1; i >= 0; i-- {
		atExitFn[i]()
	}
}

// installCRDs installs the ModelDeployment and ClusterCapabilities CRDs as
// deploy/base ships them, the ModelDeployment's conversion webhook served
// on 127.0.0.1 by the status reporter's handler (conversiontest): the
// controller-manager's namespace and garbage collectors, and Argo CD, read
// every kind in its preferred version, v1alpha2, through it.
func installCRDs(ctx context.Context) error { return installCRDsOn(ctx, cluster) }

// installCRDsOn installs them on a twin (another cluster of a fleet).
func installCRDsOn(ctx context.Context, tw *twin.Twin) error {
	webhook, err := conversiontest.Start()
	if err != nil {
		return err
	}
	for _, file := range []string{"airunway.ai_modeldeployments.yaml", "airunway.ai_clustercapabilities.yaml"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "base", file))
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := sigsyaml.Unmarshal(data, crd); err != nil {
			return err
		}
		webhook.Point(crd)
		if err := createCRDOn(ctx, tw, crd); err != nil {
			return err
		}
	}
	return nil
}

// installCRDDir creates every CRD of a directory (install-twin.sh copies
// them from the upstream release) and waits until each is served.
func installCRDDir(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no CRDs in %s (hack/install-twin.sh puts them there)", dir)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), twin.HangBound)
	defer cancel()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := sigsyaml.Unmarshal(data, crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := createCRD(ctx, crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

// createCRD creates a CRD and waits until the API server serves it: it is
// Established, and discovery lists it in every served version. A client's
// REST mapper reads discovery, which follows Established by a moment; a
// create in that moment (more likely for a CRD deleted and created again)
// fails with "no matches for kind".
var (
	crdsMu        sync.Mutex
	crdsInstalled = map[string]error{}
)

// installCRD installs the CRD schemas/ holds for a kind (its newest
// release), once per run.
func installCRD(t *testing.T, group, kind string) {
	t.Helper()
	crdsMu.Lock()
	defer crdsMu.Unlock()
	err, done := crdsInstalled[kind+"."+group]
	if !done {
		var crd *apiextensionsv1.CustomResourceDefinition
		crd, err = schemacheck.CRD(group, kind, "")
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), twin.HangBound)
			err = createCRD(ctx, crd)
			cancel()
		}
		crdsInstalled[kind+"."+group] = err
	}
	require.NoError(t, err)
}

func createCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	return createCRDOn(ctx, cluster, crd)
}

// createCRDOn is createCRD on a twin (another cluster of a fleet).
func createCRDOn(ctx context.Context, cluster *twin.Twin, crd *apiextensionsv1.CustomResourceDefinition) error {
	if err := cluster.Client.Create(ctx, crd); apierrors.IsAlreadyExists(err) && crd.Spec.Group == "ray.io" {
		// Another KubeRay release's (useKubeRay): this release's schema
		// replaces it.
		old := &apiextensionsv1.CustomResourceDefinition{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(crd), old); err != nil {
			return err
		}
		crd.ResourceVersion = old.ResourceVersion
		if err := cluster.Client.Update(ctx, crd); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		return err
	}
	for {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue && discovered(disco, got) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w", crd.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// discovered reports whether discovery lists the CRD's kind in every
// version it serves.
func discovered(disco discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		list, err := disco.ServerResourcesForGroupVersion(crd.Spec.Group + "/" + v.Name)
		if err != nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }) {
			return false
		}
	}
	return true
}

func printTable() {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	if len(rows) == 0 {
		return
	}
	sort.Strings(rows)
	fmt.Println("provider | example | capability file | pool | pods bound/total | nodes | time to Ready")
	for _, r := range rows {
		fmt.Println(r)
	}
}

// gitopsRows are the lines of the GitOps engines' table.
var gitopsRows []string

func addGitOpsRow(format string, args ...any) {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	gitopsRows = append(gitopsRows, fmt.Sprintf(format, args...))
}

func printGitOpsTable() {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	if len(gitopsRows) == 0 {
		return
	}
	sort.Strings(gitopsRows)
	fmt.Println()
	fmt.Println("engine | example/cluster | sync | health seen over time | seconds to healthy")
	for _, r := range gitopsRows {
		fmt.Println(r)
	}
}

func addRow(format string, args ...any) {
	rowsMu.Lock()
	defer rowsMu.Unlock()
	rows = append(rows, fmt.Sprintf(format, args...))
}

// renderBin is the airunway-render binary make built.
func renderBin(t *testing.T) string {
	t.Helper()
	p := os.Getenv("AIRUNWAY_RENDER_BIN")
	require.NotEmpty(t, p, "AIRUNWAY_RENDER_BIN must name the airunway-render binary (make twin sets it)")
	abs, err := filepath.Abs(p)
	require.NoError(t, err)
	return abs
}

// render runs the binary on the inputs with the capability file and returns
// the objects it prints.
func render(t *testing.T, caps string, inputs ...string) []*unstructured.Unstructured {
	t.Helper()
	return decodeObjects(t, runRender(t, append([]string{"render", "--capabilities", caps}, inputs...)...))
}

// runRender runs the airunway-render binary in the repository's root and
// returns its stdout; it fails the test on a non-zero exit.
func runRender(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(renderBin(t), args...)
	cmd.Dir = repoRoot
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "airunway-render %s: %s", strings.Join(args, " "), stderr.String())
	return out
}

// decodeObjects reads a YAML stream of objects.
func decodeObjects(t *testing.T, out []byte) []*unstructured.Unstructured {
	t.Helper()
	nodes, err := kio.FromBytes(out)
	require.NoError(t, err)
	var objs []*unstructured.Unstructured
	for _, n := range nodes {
		// Through JSON, so numbers are int64 as the unstructured helpers
		// expect (kyaml's maps hold int).
		data, err := n.MarshalJSON()
		require.NoError(t, err)
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(data))
		objs = append(objs, u)
	}
	return objs
}

// useCluster creates the Nodes the capability file describes for one
// test, and deletes them (and the pods on them) when it ends: one
// simulated cluster at a time, so that pods of one file cannot land on
// another file's nodes.
func useCluster(t *testing.T, capsFile string) []corev1.Node {
	t.Helper()
	clusterMu.Lock()
	t.Cleanup(clusterMu.Unlock)
	ctx := context.Background()
	resolved := resolveCaps(t, capsFile)
	nodes := resolved.Nodes()
	for i := range nodes {
		n := nodes[i].DeepCopy()
		require.NoError(t, cluster.Client.Create(ctx, n))
		if len(n.Status.Allocatable) == 0 {
			// Status is a subresource; should the create drop it, patch it
			// (a patch, not an update: KWOK writes the node's conditions).
			patch := client.MergeFrom(n.DeepCopy())
			n.Status.Capacity, n.Status.Allocatable = nodes[i].Status.Capacity, nodes[i].Status.Allocatable
			require.NoError(t, cluster.Client.Status().Patch(ctx, n, patch))
		}
	}
	t.Cleanup(func() {
		for i := range nodes {
			_ = cluster.Client.Delete(ctx, &nodes[i])
		}
	})
	publishDevices(t, resolved)
	return nodes
}

// publishDevices creates the DeviceClasses and ResourceSlices of the
// capability file's DRA pools (the devices a DRA driver would publish for
// the Nodes), and when the test ends waits until no ResourceClaim holds
// one of their devices (the next test's nodes have the same names) and
// deletes the slices. A DeviceClass stays, as a driver's installation
// leaves it: deleted and made again between tests, the scheduler could
// meet a claim before it saw the class again ("device class … does not
// exist").
func publishDevices(t *testing.T, resolved *capabilities.Resolved) {
	t.Helper()
	ctx := context.Background()
	classes, slices := resolved.DeviceClasses(), resolved.ResourceSlices()
	if len(slices) == 0 {
		return
	}
	for i := range classes {
		// As this capability file says, whatever an earlier test's said: a
		// class serves an extended resource for one pool and not another.
		require.NoError(t, putDeviceClass(ctx, classes[i].DeepCopy()))
	}
	for i := range slices {
		require.NoError(t, cluster.Client.Create(ctx, slices[i].DeepCopy()), "ResourceSlice %s", slices[i].Name)
	}
	t.Cleanup(func() {
		pools := map[string]bool{}
		for _, s := range slices {
			pools[s.Spec.Pool.Name] = true
		}
		// Not fatal: it runs in cleanups.
		assert.EventuallyWithT(t, func(c *assert.CollectT) {
			claims := &resourcev1.ResourceClaimList{}
			require.NoError(c, cluster.Client.List(ctx, claims))
			for _, claim := range claims.Items {
				if a := claim.Status.Allocation; a != nil {
					for _, r := range a.Devices.Results {
						if pools[r.Pool] {
							c.Errorf("ResourceClaim %s/%s still holds %s/%s", claim.Namespace, claim.Name, r.Pool, r.Device)
						}
					}
				}
			}
		}, twin.HangBound, 250*time.Millisecond, "the claims on the test's devices were not released")
		for i := range slices {
			_ = cluster.Client.Delete(ctx, &slices[i])
		}
		// A class left serving an extended resource would serve it to
		// the next test's pods too.
		for i := range classes {
			if classes[i].Spec.ExtendedResourceName != nil {
				plain := classes[i].DeepCopy()
				plain.Spec.ExtendedResourceName = nil
				assert.NoError(t, putDeviceClass(ctx, plain))
			}
		}
	})
}

// resolveCaps reads and resolves a capability file (relative to the
// repository's root unless absolute).
func resolveCaps(t *testing.T, capsFile string) *capabilities.Resolved {
	t.Helper()
	if !filepath.IsAbs(capsFile) {
		capsFile = filepath.Join(repoRoot, capsFile)
	}
	data, err := os.ReadFile(capsFile)
	require.NoError(t, err)
	c, problems := capabilities.Decode(data)
	require.False(t, problems.HasErrors(), "%v", problems)
	r, problems := capabilities.Resolve(c)
	require.False(t, problems.HasErrors(), "%v", problems)
	return r
}

// exampleNamespace is the namespace of the shipped examples' models.
const exampleNamespace = "inference"

// createIgnoringExisting creates an object unless it exists.
// putDeviceClass creates the DeviceClass, or gives an existing one of that
// name its spec.
func putDeviceClass(ctx context.Context, class *resourcev1.DeviceClass) error {
	err := cluster.Client.Create(ctx, class)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	live := &resourcev1.DeviceClass{}
	if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(class), live); err != nil {
		return err
	}
	live.Spec = class.Spec
	return cluster.Client.Update(ctx, live)
}

func createIgnoringExisting(ctx context.Context, o client.Object) error {
	if err := cluster.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// clusterMu gives one test at a time the twin's nodes.
var clusterMu sync.Mutex

// poolOf names a node's pool.
func poolOf(n *corev1.Node) string { return n.Labels[hub.LabelNodePool] }
