package reporter_test

// Tests of the reporter against hostile data and a misbehaving API
// server: provider statuses no status write can carry, status writes that
// fail, conflict or hang, and a model deleted between being read and
// being written. Faults are injected into the reporter's real requests to
// the real API server by wrapping its transport.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/reporter"
)

// fault is what the injector answers a status write with instead of
// passing it to the API server.
type fault struct {
	name   string
	code   int
	reason metav1.StatusReason
	// retryAfter, when set, is sent as the Retry-After header.
	retryAfter string
	// hang holds the request until its context ends, as an API server that
	// accepted it and never answers.
	hang bool
}

// faultInjector passes the reporter's requests to the API server, except
// the status writes of one ModelDeployment: it records when each was
// made, answers the next ones with a fault, and can run a hook before one.
type faultInjector struct {
	mu       sync.Mutex
	path     string
	fault    fault
	left     int
	before   func()
	attempts []time.Time
}

func statusPath(md *unstructured.Unstructured) string {
	return fmt.Sprintf("/apis/%s/namespaces/%s/modeldeployments/%s/status", reporter.ModelDeploymentGVK.GroupVersion(), md.GetNamespace(), md.GetName())
}

func (f *faultInjector) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodPatch || req.URL.Path != f.path {
				return rt.RoundTrip(req)
			}
			f.mu.Lock()
			f.attempts = append(f.attempts, time.Now())
			hook, inject, ft := f.before, f.left > 0, f.fault
			f.before = nil
			if inject {
				f.left--
			}
			f.mu.Unlock()
			if hook != nil {
				hook()
			}
			if !inject {
				return rt.RoundTrip(req)
			}
			if req.Body != nil {
				req.Body.Close()
			}
			if ft.hang {
				<-req.Context().Done()
				return nil, req.Context().Err()
			}
			body, _ := json.Marshal(&metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusFailure, Message: "injected: " + ft.name, Reason: ft.reason, Code: int32(ft.code),
			})
			resp := &http.Response{
				StatusCode: ft.code, Status: fmt.Sprintf("%d %s", ft.code, http.StatusText(ft.code)),
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(body)),
				ContentLength: int64(len(body)), Request: req,
			}
			if ft.retryAfter != "" {
				resp.Header.Set("Retry-After", ft.retryAfter)
			}
			return resp, nil
		})
	})
	return cfg
}

// arm answers the next n status writes with ft.
func (f *faultInjector) arm(ft fault, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault, f.left = ft, n
}

// hook runs fn once, before the next status write is passed on.
func (f *faultInjector) hook(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before = fn
}

func (f *faultInjector) writes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.attempts...)
}

// activity is what the tests count of the reporter's work: status writes
// that landed, failed reconciles, and the status requests of the model
// the injector watches.
type activity struct{ writes, failures, requests int64 }

func (f *faultInjector) activity(rep *reporter.Reporter) activity {
	return activity{writes: rep.Writes(), failures: rep.Failures(), requests: int64(len(f.writes()))}
}

// TestHugeProviderMessages: a RayService whose operator writes a 1 MiB
// application message and a condition message at the CRD's 32768-character
// limit. Copied as they are, every status write would be refused (a
// condition message allows 32768 characters), in a retry loop, and the
// model would show nothing. The reporter writes the status once, with the
// message cut to providers.MaxMessageBytes.
func TestHugeProviderMessages(t *testing.T) {
	c := cluster(t)
	ns, objs, md := c.model(t, "huge", "kuberay-aggregated-1-7")
	rayService := pick(objs, "RayService")[0]
	c.apply(t, objs...)
	// The 1 MiB object goes with the test: later tests delete and
	// reinstall the RayService CRD.
	t.Cleanup(func() { _ = c.admin.Delete(context.Background(), rayService.DeepCopy()) })
	huge := strings.Repeat("CUDA out of memory. ", 1<<20/20)
	c.setStatus(t, rayService, "kuberay-operator", fmt.Sprintf(
		`{conditions: [{type: Ready, status: "False", reason: Initializing, message: %q, lastTransitionTime: %q}], activeServiceStatus: {applicationStatuses: {llm: {status: DEPLOY_FAILED, message: %q}}}}`,
		strings.Repeat("w", 32768), since, huge))
	var inj faultInjector
	inj.path = statusPath(md)
	rep, _ := run(t, inj.wrap(c.cfg), testOptions(ns))

	s := c.waitFor(t, key(md), want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed, messageHas: "CUDA out of memory"})
	settles(t, func() activity { return inj.activity(rep) }, activity{writes: 1, requests: 1})
	require.Len(t, s.Message, providers.MaxMessageBytes)
	require.True(t, strings.HasSuffix(s.Message, providers.TruncatedMarker), "%.60q…", s.Message)
	for _, cond := range s.Conditions {
		require.Equal(t, s.Message, cond.Message, cond.Type)
	}
	_, live := c.modelStatus(t, key(md))
	data, err := json.Marshal(live.Object["status"])
	require.NoError(t, err)
	t.Logf("status: %d bytes from a %d-byte provider message; writes %d, status requests %d, failures %d",
		len(data), len(huge), rep.Writes(), len(inj.writes()), rep.Failures())
	require.Less(t, len(data), 8*1024)
}

// TestStatusWriteFaults: status writes answered with a conflict, a server
// error, throttling or nothing at all. The reporter does not crash or
// spin: it makes one request per retry (client-go honours Retry-After
// itself, inside the reconcile), and when the API server answers again it
// writes the status exactly once. The delays between retries are logged;
// TestRetryLimiterDoubles holds them to RetryBaseDelay, doubling.
func TestStatusWriteFaults(t *testing.T) {
	t.Parallel() // its own namespace and reporter: see cluster
	c := cluster(t)
	ns, objs, md := c.model(t, "faults", "vllm-minimal")
	deployment := pick(objs, "Deployment")[0]
	var inj faultInjector
	inj.path = statusPath(md)
	o := testOptions(ns)
	// Long enough for the 429 step's retry inside one reconcile: client-go
	// waits out Retry-After (1 s) and asks again. At 2 s a busy make test
	// ran the reconcile out while the retry was under way: the status
	// landed, but the reconcile counted as failed. The hang step costs two
	// of these.
	o.ReconcileTimeout = 10 * time.Second
	rep, _ := run(t, inj.wrap(c.cfg), o)
	c.apply(t, objs...)
	c.waitFor(t, key(md), want{phase: "Deploying"})
	// Every status request so far has landed: none is in flight when the
	// first fault is armed.
	require.Eventually(t, func() bool { a := inj.activity(rep); return a.requests == a.writes && a.failures == 0 },
		hangBound, 20*time.Millisecond, "a status write did not land")

	const progressing = `{replicas: 1, conditions: [{type: Progressing, status: "True", reason: ReplicaSetUpdated}]}`
	steps := []struct {
		fault fault
		n     int
		// failures is how many reconciles fail.
		failures int
		status   string
		want     want
	}{
		// A conflict is answered in the reconcile it meets: the live object
		// is read and the status written again on its version. The first
		// two conflicts fail one reconcile; the next answers the third.
		{fault{name: "409 Conflict", code: http.StatusConflict, reason: metav1.StatusReasonConflict}, 3, 1, deploymentAvailable, want{phase: "Running", ready: "True"}},
		{fault{name: "500 Internal Server Error", code: http.StatusInternalServerError, reason: metav1.StatusReasonInternalError}, 3, 3, progressing, want{phase: "Deploying"}},
		// client-go waits out Retry-After and retries inside the reconcile
		// (for as long as ReconcileTimeout lets it): no reconcile fails.
		{fault{name: "429 Too Many Requests, Retry-After: 1", code: http.StatusTooManyRequests, reason: metav1.StatusReasonTooManyRequests, retryAfter: "1"}, 1, 0, deploymentAvailable, want{phase: "Running", ready: "True"}},
		// The held request ends with the reconcile, ReconcileTimeout after
		// it started (a little before the request was made).
		{fault{name: "no answer (reconcile timeout)", hang: true}, 2, 2, progressing, want{phase: "Deploying"}},
	}
	for _, st := range steps {
		before := inj.activity(rep)
		inj.arm(st.fault, st.n)
		c.setStatus(t, deployment, "kube-controller-manager", st.status)
		c.waitFor(t, key(md), st.want)
		// One request per retry, then the one that lands: written once.
		settles(t, func() activity { return inj.activity(rep) },
			activity{writes: before.writes + 1, failures: before.failures + int64(st.failures), requests: before.requests + int64(st.n) + 1})
		attempts := inj.writes()[before.requests:]
		var gaps []string
		for i := 1; i < len(attempts); i++ {
			gaps = append(gaps, attempts[i].Sub(attempts[i-1]).Round(time.Millisecond).String())
		}
		t.Logf("%s ×%d: %d status requests (gaps %s), %d failed reconciles, one write", st.fault.name, st.n, len(attempts), strings.Join(gaps, ", "), st.failures)
	}
}

// TestDeletedBeforeWrite: the model is deleted after the reporter read it
// and before its status write reaches the API server. The write finds
// nothing (a status write never creates an object), the reconcile ends
// quietly, the metric and the log say so, and nothing is retried.
func TestDeletedBeforeWrite(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()
	ns, objs, md := c.model(t, "gone", "vllm-minimal")
	var inj faultInjector
	inj.path = statusPath(md)
	// The hook runs on the reporter's goroutine: it reports, not fails.
	inj.hook(func() {
		if err := c.admin.Delete(ctx, md.DeepCopy()); err != nil {
			t.Errorf("deleting the model: %v", err)
		}
		assert.Eventually(t, func() bool { return apierrors.IsNotFound(c.admin.Get(ctx, key(md), md.DeepCopy())) },
			hangBound, 20*time.Millisecond, "the model was not deleted")
	})
	var logMu sync.Mutex
	var logs []string
	o := testOptions(ns)
	o.Logger = funcr.New(func(prefix, args string) {
		logMu.Lock()
		defer logMu.Unlock()
		logs = append(logs, prefix+" "+args)
	}, funcr.Options{})
	goneBefore := goneMetric(t)
	rep, _ := run(t, inj.wrap(c.cfg), o)
	c.apply(t, objs...)

	require.Eventually(t, func() bool { return rep.Gone() == 1 }, hangBound, 20*time.Millisecond, "the write never found the model gone")
	// A second model in the namespace is reported: the reporter goes on,
	// and by the time its status is there the deleted one's work is done.
	barrier := md.DeepCopy()
	barrier.SetName("barrier")
	c.apply(t, barrier)
	c.waitFor(t, key(barrier), want{phase: "Pending"})
	// One request, not retried; no failure: a deleted model is not one.
	type deletedModel struct{ requests, failures, gone int64 }
	settles(t, func() deletedModel { return deletedModel{int64(len(inj.writes())), rep.Failures(), rep.Gone()} }, deletedModel{requests: 1, gone: 1})

	err := c.admin.Get(ctx, key(md), md.DeepCopy())
	require.True(t, apierrors.IsNotFound(err), "the status write re-created the model: %v", err)
	require.Equal(t, goneBefore+1, goneMetric(t))
	logMu.Lock()
	require.Contains(t, strings.Join(logs, "\n"), "ModelDeployment deleted before its status was written")
	logMu.Unlock()

	// The API server's side of it, without the reporter: a server-side
	// apply of a deleted model's status is NotFound and creates nothing.
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": md.GetAPIVersion(), "kind": md.GetKind(),
		"metadata": map[string]any{"name": md.GetName(), "namespace": ns},
		"status":   map[string]any{"phase": "Running"},
	}}
	err = c.admin.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(reporter.FieldManager), client.ForceOwnership)
	require.True(t, apierrors.IsNotFound(err), "%v", err)
	require.True(t, apierrors.IsNotFound(c.admin.Get(ctx, key(md), md.DeepCopy())))
}

// goneMetric reads airunway_status_reporter_deleted_before_write_total
// from the registry /metrics serves.
func goneMetric(t *testing.T) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "airunway_status_reporter_deleted_before_write_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("the metric airunway_status_reporter_deleted_before_write_total is not registered")
	return 0
}
