package reporter_test

// The harness of the tests against a real kube-apiserver and etcd
// (envtest): one control plane for the package, started by the first test
// that needs it, with the shipped ModelDeployment CRD and the providers'
// CRDs rebuilt from the schemas the repository derives. Each test runs its
// own reporter scoped to its own namespace, so tests do not see each other.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
	"github.com/airunway-render/airunway-render/reporter"
)

// controlPlane is the package's envtest environment.
type controlPlane struct {
	env   *envtest.Environment
	certs string // the API server's certificate directory, removed at exit
	cfg   *rest.Config
	admin client.Client
}

// hangBound is how long a test waits for what must happen on the API
// server (a status, a CRD served, a reconcile): long enough that only a
// hang reaches it. Three make test runs at once beside two busy loops
// (load average 60 on 2 cores) took a CRD past 60 s to be served and a
// status past 45 s.
const hangBound = 5 * time.Minute

var (
	clusterOnce sync.Once
	shared      *controlPlane
	clusterErr  error
)

func TestMain(m *testing.M) {
	reporter.ServeWebhookChildIfAsked()
	// The reporters under test log through Options.Logger (discarded);
	// this silences client-go's fallback to controller-runtime's logger.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if shared != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
		os.RemoveAll(shared.certs)
	}
	os.Exit(code)
}

// providerCRDs are the kinds the tests install: every provider's primary
// kind plus what the rendered gateway objects need.
var providerCRDs = []struct{ group, kind string }{
	{"kaito.sh", "Workspace"},
	{"kaito.sh", "InferenceSet"},
	{"nvidia.com", "DynamoGraphDeployment"},
	{"nvidia.com", "DynamoGraphDeploymentRequest"},
	{"ray.io", "RayService"},
	{"inference.networking.k8s.io", "InferencePool"},
	{"gateway.networking.k8s.io", "HTTPRoute"},
	{"gateway.networking.k8s.io", "Gateway"},
}

// providerCRD rebuilds a provider's CRD from the embedded schemas. The
// renderer writes DynamoGraphDeployments as v1alpha1, which without the
// operator's conversion webhook must also be the stored version, or the
// API server would prune them to v1beta1's schema.
func providerCRD(group, kind string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd, err := schemacheck.CRD(group, kind, "")
	if err != nil {
		return nil, err
	}
	if kind == "DynamoGraphDeployment" {
		err = schemacheck.SetStorageVersion(crd, "v1alpha1")
	}
	return crd, err
}

// cluster returns the shared control plane, starting it on first use.
//
// A test that uses only a namespace of its own (c.model, c.namespace),
// its own reporters and counters on its own transport, and no
// cluster-scoped object, CRD change or process-wide metric calls
// t.Parallel: the package's longest waits (fault retries, stale timers,
// resyncs) then overlap instead of adding up. Go runs the parallel tests
// after every other test of the package has ended, so a test that
// restarts the API server, replaces a CRD or reads a process-wide counter
// never runs beside them.
func cluster(t *testing.T) *controlPlane {
	t.Helper()
	clusterOnce.Do(func() { shared, clusterErr = startControlPlane() })
	require.NoError(t, clusterErr)
	return shared
}

func startControlPlane() (*controlPlane, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run `make test`, or `export KUBEBUILDER_ASSETS=$(make -s envtest)` (builds kube-apiserver and etcd once)")
	}
	crds := []*apiextensionsv1.CustomResourceDefinition{}
	md, err := shippedCRD()
	if err != nil {
		return nil, err
	}
	crds = append(crds, md)
	for _, p := range providerCRDs {
		crd, err := providerCRD(p.group, p.kind)
		if err != nil {
			return nil, err
		}
		crds = append(crds, crd)
	}
	certs, err := os.MkdirTemp("", "airunway-envtest-")
	if err != nil {
		return nil, err
	}
	// kube-apiserver and etcd may take long to start, and CRDs to be
	// served, on a loaded machine (envtest's defaults, 20 s and 10 s, a
	// busy CI runner exceeds): the bounds only catch what never happens.
	// A stop is different: what does not stop within 5 s is killed.
	// kube-apiserver's graceful shutdown waits out its 60 s request
	// timeout for the reporter's open watches (TestAPIServerRestart), and
	// a test's control plane has nothing a kill would lose. The timeout is
	// fixed here because envtest copies it when the process starts.
	env := &envtest.Environment{CRDs: crds, ErrorIfCRDPathMissing: true, CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 3 * time.Minute},
		ControlPlaneStartTimeout: 3 * time.Minute, ControlPlaneStopTimeout: 5 * time.Second}
	// A fixed certificate directory keeps the serving certificate and the
	// client CA across an API server restart (TestAPIServerRestart).
	env.ControlPlane.GetAPIServer().CertDir = certs
	// Service addresses on loopback, as the twin's: the default range,
	// 10.0.0.0/24, is private, and nothing a test starts may be pointed at one.
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", twin.ServiceCIDR)
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	admin, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	return &controlPlane{env: env, certs: certs, cfg: cfg, admin: admin}, nil
}

// shippedCRD is the ModelDeployment CRD of deploy/base, as users install it.
func shippedCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(filepath.Join("..", "deploy", "base", "airunway.ai_modeldeployments.yaml"))
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	return crd, yaml.UnmarshalStrict(data, crd)
}

// namespace creates a namespace for one test.
func (c *controlPlane) namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetGenerateName(prefix + "-")
	require.NoError(t, c.admin.Create(context.Background(), ns))
	return ns.GetName()
}

// rendered reads a golden case's output: the objects the renderer
// produced, moved into namespace ns, without the KRM bookkeeping
// annotations kustomize and kpt strip before applying.
func rendered(t *testing.T, goldenCase, ns string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "golden", "testdata", goldenCase, "expected.yaml"))
	require.NoError(t, err)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, yaml.Unmarshal(data, &list))
	var out []*unstructured.Unstructured
	for _, item := range list.Items {
		obj := &unstructured.Unstructured{Object: item}
		annotations := obj.GetAnnotations()
		if annotations["config.kubernetes.io/local-config"] == "true" {
			continue
		}
		for k := range annotations {
			if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
				delete(annotations, k)
			}
		}
		obj.SetAnnotations(annotations)
		if obj.GetNamespace() != "" {
			obj.SetNamespace(ns)
		}
		out = append(out, obj)
	}
	require.NotEmpty(t, out, "golden case %s rendered nothing", goldenCase)
	return out
}

// model makes a namespace for one test and returns a golden case's
// rendered objects moved into it, and the ModelDeployment among them.
func (c *controlPlane) model(t *testing.T, prefix, goldenCase string) (string, []*unstructured.Unstructured, *unstructured.Unstructured) {
	t.Helper()
	ns := c.namespace(t, prefix)
	objs := rendered(t, goldenCase, ns)
	return ns, objs, pick(objs, "ModelDeployment")[0]
}

// pick returns the rendered objects of one kind.
func pick(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// apply applies objects as a GitOps tool does (server-side apply).
func (c *controlPlane) apply(t *testing.T, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		o = o.DeepCopy()
		o.SetManagedFields(nil)
		err := c.admin.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("argocd-controller"), client.ForceOwnership)
		require.NoError(t, err, "applying %s %s", o.GetKind(), o.GetName())
	}
}

// setStatus writes an object's status as its operator would, through the
// status subresource with the operator's own field manager.
func (c *controlPlane) setStatus(t *testing.T, obj *unstructured.Unstructured, operator, status string) {
	t.Helper()
	var fields map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(status), &fields))
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(),
		"metadata": map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace()},
		"status":   fields,
	}}
	err := c.admin.Status().Apply(context.Background(), client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(operator), client.ForceOwnership)
	require.NoError(t, err, "setting the status of %s %s", obj.GetKind(), obj.GetName())
}

// modelStatus reads a ModelDeployment's status as the reporter wrote it.
func (c *controlPlane) modelStatus(t *testing.T, key types.NamespacedName) (v1.ModelDeploymentStatus, *unstructured.Unstructured) {
	t.Helper()
	s, md, err := c.readModelStatus(key)
	require.NoError(t, err)
	return s, md
}

// readModelStatus is modelStatus for a condition polled off the test's
// goroutine, where a failure must be returned, not raised.
func (c *controlPlane) readModelStatus(key types.NamespacedName) (v1.ModelDeploymentStatus, *unstructured.Unstructured, error) {
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(reporter.ModelDeploymentGVK)
	var s v1.ModelDeploymentStatus
	if err := c.admin.Get(context.Background(), key, md); err != nil {
		return s, nil, err
	}
	if raw, ok := md.Object["status"]; ok {
		data, err := yaml.Marshal(raw)
		if err != nil {
			return s, nil, err
		}
		if err := yaml.Unmarshal(data, &s); err != nil {
			return s, nil, err
		}
	}
	return s, md, nil
}

// want describes the status a test waits for; empty fields are not checked.
type want struct {
	phase, ready, reason string
	replicas             *v1.ReplicaStatus
	endpoint             *v1.EndpointStatus
	gateway              *v1.GatewayStatus
	// messageHas is a substring of status.message.
	messageHas string
	// hardware is the HardwareCompatible condition, "status/reason".
	hardware string
}

func (w want) String() string {
	return fmt.Sprintf("phase=%s Ready=%s/%s replicas=%v endpoint=%v gateway=%v message~%q HardwareCompatible=%s", w.phase, w.ready, w.reason, w.replicas, w.endpoint, w.gateway, w.messageHas, w.hardware)
}

func (w want) matches(s v1.ModelDeploymentStatus, generation int64) bool {
	ready := readyCondition(s)
	switch {
	case w.phase != "" && s.Phase != w.phase,
		w.ready != "" && (ready == nil || string(ready.Status) != w.ready),
		w.reason != "" && (ready == nil || ready.Reason != w.reason),
		w.replicas != nil && (s.Replicas == nil || *s.Replicas != *w.replicas),
		w.endpoint != nil && (s.Endpoint == nil || *s.Endpoint != *w.endpoint),
		w.gateway != nil && (s.Gateway == nil || !reflect.DeepEqual(*s.Gateway, *w.gateway)),
		w.messageHas != "" && !strings.Contains(s.Message, w.messageHas),
		w.hardware != "" && !hasCondition(s, reporter.ConditionHardwareCompatible, w.hardware),
		s.ObservedGeneration != generation:
		return false
	}
	return true
}

// hasCondition reports whether the status has a condition of the type
// whose "status/reason" is want.
func hasCondition(s v1.ModelDeploymentStatus, typ, want string) bool {
	for _, c := range s.Conditions {
		if c.Type == typ {
			return string(c.Status)+"/"+c.Reason == want
		}
	}
	return false
}

func readyCondition(s v1.ModelDeploymentStatus) *metav1.Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == reporter.ConditionReady {
			return &s.Conditions[i]
		}
	}
	return nil
}

// waitFor polls a ModelDeployment until its status matches, and returns
// it. The hangBound only catches a reporter that never gets there.
func (c *controlPlane) waitFor(t *testing.T, key types.NamespacedName, w want) v1.ModelDeploymentStatus {
	t.Helper()
	var matched v1.ModelDeploymentStatus
	require.EventuallyWithT(t, func(collect *assert.CollectT) {
		s, md, err := c.readModelStatus(key)
		if !assert.NoError(collect, err) {
			return
		}
		if !w.matches(s, md.GetGeneration()) {
			got, _ := yaml.Marshal(s)
			collect.Errorf("ModelDeployment %s has not reached %s; its status is:\n%s", key, w, got)
			return
		}
		matched = s
	}, hangBound, 100*time.Millisecond)
	return matched
}

// settles waits until now(), what a test counts of the reporter's work, is
// want, then checks that nothing more happens for a second: a write or
// retry the reporter should not make would come sooner (within the
// back-off of a few failures, RetryBaseDelay<<3). The hangBound only catches a
// reporter that never gets there.
func settles[T comparable](t *testing.T, now func() T, want T) {
	t.Helper()
	require.EventuallyWithT(t, func(collect *assert.CollectT) {
		if got := now(); got != want {
			collect.Errorf("the reporter has done %+v, not %+v", got, want)
		}
	}, hangBound, 20*time.Millisecond)
	require.Never(t, func() bool { return now() != want }, time.Second, 20*time.Millisecond, "the reporter did more than %+v", want)
}

// testOptions are reporter options for a test in namespace ns: fast
// discovery, and a leader election of its own. The Lease is held for a
// minute and renewed within 45 s (the default is 15 s and 10 s): a reporter
// whose renewals wait on an API server slowed by a loaded machine, or by
// a CRD being deleted, keeps its leadership mid-test (with 10 s, one lost
// it in a busy make test while the package's parallel tests ran). No test
// waits for a Lease to expire: a stopping leader releases it at once, so
// handovers stay fast, and renewals come every RetryPeriod.
func testOptions(ns string) reporter.Options {
	return reporter.Options{
		Namespaces:              []string{ns},
		MetricsAddr:             "0",
		ProbeAddr:               "0",
		LeaderElection:          true,
		LeaderElectionID:        "reporter",
		LeaderElectionNamespace: ns,
		LeaseDuration:           time.Minute,
		RenewDeadline:           45 * time.Second,
		RetryPeriod:             500 * time.Millisecond,
		DiscoveryInterval:       500 * time.Millisecond,
		StaleAfter:              time.Hour,
	}
}

// run starts a reporter until the test ends and returns it with a stop
// function that waits for it to exit.
func run(t testing.TB, cfg *rest.Config, o reporter.Options) (*reporter.Reporter, func()) {
	t.Helper()
	rep, err := reporter.New(cfg, o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rep.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Error("the reporter did not stop within 30s")
			}
		})
	}
	t.Cleanup(stop)
	return rep, stop
}

// splitYAML decodes a multi-document YAML stream into objects.
func splitYAML(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

func key(obj *unstructured.Unstructured) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
