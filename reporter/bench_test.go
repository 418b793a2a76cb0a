package reporter_test

// BenchmarkReporter1000 measures the status reporter at scale on the real
// envtest control plane the tests share: 1,000 rendered ModelDeployments
// (mostly vLLM Deployments, a tenth spread over llm-d, KAITO, KubeRay and
// Dynamo) and their provider objects, in a namespace of its own.

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/render"
	"github.com/airunway-render/airunway-render/reporter"
)

const (
	benchModels = 1000
	// benchWorkers bounds the goroutines that create objects and write
	// provider statuses.
	benchWorkers = 8
	// benchSteadySync is the resync period of the steady-state reporter,
	// benchSteadyWindow how long its resyncs are watched.
	benchSteadySync   = 2 * time.Second
	benchSteadyWindow = 6 * time.Second
	// benchQuiet is how long the reconcile count must stand still for the
	// reporter to count as settled.
	benchQuiet = time.Second
)

// benchOthers are the providers of every tenth model; the rest are vllm.
var benchOthers = []string{"llmd", "kaito", "kuberay", "dynamo"}

func benchProvider(i int) string {
	if i%10 == 9 {
		return benchOthers[(i/10)%len(benchOthers)]
	}
	return "vllm"
}

// benchSingles is how many models of each provider change one at a time
// per iteration.
var benchSingles = map[string]int{"vllm": 30, "llmd": 5, "kaito": 5, "kuberay": 5, "dynamo": 5}

// benchFlip is what each primary kind's operator writes when the model
// is up (the ModelDeployment becomes Running) and down (Failed), as in
// TestProviderLifecycles.
type benchFlip struct {
	operator string
	up, down map[string]any
}

func benchFlips(b testing.TB) map[string]benchFlip {
	raw := map[string][3]string{
		"Deployment": {"kube-controller-manager", deploymentAvailable,
			`{replicas: 1, conditions: [{type: Available, status: "False", reason: MinimumReplicasUnavailable}, {type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: "ReplicaSet has timed out progressing."}]}`},
		"Workspace": {"kaito-workspace",
			`{state: Ready, conditions: [{type: WorkspaceSucceeded, status: "True", reason: Succeeded, message: "", lastTransitionTime: "` + since + `"}]}`,
			`{state: Failed, conditions: [{type: WorkspaceSucceeded, status: "False", reason: Failed, message: "inference pod crashed", lastTransitionTime: "` + since + `"}]}`},
		"DynamoGraphDeployment": {"dynamo-operator", `{state: successful}`, `{state: failed}`},
		"RayService": {"kuberay-operator", rayServiceRunning,
			`{conditions: [{type: Ready, status: "True", reason: NonZeroServeEndpoints, message: "", lastTransitionTime: "` + since + `"}], activeServiceStatus: {applicationStatuses: {llm: {status: DEPLOY_FAILED, message: "CUDA out of memory"}}}}`},
	}
	out := map[string]benchFlip{}
	for kind, r := range raw {
		f := benchFlip{operator: r[0]}
		if err := yaml.Unmarshal([]byte(r[1]), &f.up); err != nil {
			b.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(r[2]), &f.down); err != nil {
			b.Fatal(err)
		}
		out[kind] = f
	}
	return out
}

// benchModel is one ModelDeployment and its primary provider object.
type benchModel struct {
	name, provider string
	primary        *unstructured.Unstructured // apiVersion, kind, namespace, name
	flip           benchFlip
	up             bool // whether the primary's status is the up one
}

func (m *benchModel) phase() string {
	if m.up {
		return "Running"
	}
	return "Failed"
}

// renderBench renders n ModelDeployments in namespace ns with the real
// renderer and the embedded default capabilities, and returns every object
// to apply (without the KRM bookkeeping annotations, as rendered() does,
// and without the Services) and the models with their primary objects.
func renderBench(b testing.TB, ns string, n int) ([]*unstructured.Unstructured, []*benchModel) {
	items := make([]*kyaml.RNode, n)
	for i := range items {
		items[i] = kyaml.MustParse(fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: model-%04d, namespace: %s}
spec:
  model: {id: Qwen/Qwen3-0.6B}
  provider: {name: %s}
  engine: {type: vllm}
  resources: {gpu: {count: 1}}
`, i, ns, benchProvider(i)))
	}
	res := render.Render(items, render.Options{})
	if res.Problems.HasErrors() {
		b.Fatalf("rendering: %v", res.Problems)
	}
	flips := benchFlips(b)
	var objs []*unstructured.Unstructured
	byName := map[string]*benchModel{}
	for _, item := range res.Items {
		data, err := item.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
		annotations := obj.GetAnnotations()
		for k := range annotations {
			if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
				delete(annotations, k)
			}
		}
		obj.SetAnnotations(annotations)
		if obj.GetKind() == "Service" {
			// The reporter does not watch Services, and envtest's
			// service IP range (a /24) holds far fewer than 1,000.
			continue
		}
		objs = append(objs, obj)
		if obj.GetKind() == "ModelDeployment" {
			model := byName[obj.GetName()]
			if model == nil {
				model = &benchModel{name: obj.GetName()}
				byName[obj.GetName()] = model
			}
			model.provider = annotations[hub.AnnotationProvider]
			continue
		}
		flip, primary := flips[obj.GetKind()]
		from := annotations[hub.AnnotationGeneratedFrom]
		if !primary || from != obj.GetName() {
			continue
		}
		model := byName[from]
		if model == nil {
			model = &benchModel{name: from}
			byName[from] = model
		}
		ref := &unstructured.Unstructured{}
		ref.SetAPIVersion(obj.GetAPIVersion())
		ref.SetKind(obj.GetKind())
		ref.SetNamespace(obj.GetNamespace())
		ref.SetName(obj.GetName())
		model.primary, model.flip = ref, flip
	}
	var models []*benchModel
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		m := byName[name]
		if m.primary == nil || m.provider == "" {
			b.Fatalf("model %s: no primary object or provider among the rendered objects", name)
		}
		models = append(models, m)
	}
	if len(models) != n {
		b.Fatalf("rendered %d models, want %d", len(models), n)
	}
	return objs, models
}

// parallel runs f(0..n-1) on benchWorkers goroutines; the first error wins.
func parallel(n int, f func(i int) error) error { return parallelN(benchWorkers, n, f) }

// parallelN runs f over 0..n-1 on workers goroutines, stopping at the
// first error.
func parallelN(workers, n int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		once  sync.Once
		first error
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// applyObject applies an object as a GitOps tool does (see apply).
func applyObject(ctx context.Context, cl client.Client, obj *unstructured.Unstructured) error {
	obj = obj.DeepCopy()
	obj.SetManagedFields(nil)
	err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("argocd-controller"), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// writeStatus writes a model's primary status as its operator would (see
// setStatus): up or down.
func writeStatus(ctx context.Context, cl client.Client, m *benchModel, up bool) error {
	status := m.flip.down
	if up {
		status = m.flip.up
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": m.primary.GetAPIVersion(), "kind": m.primary.GetKind(),
		"metadata": map[string]any{"name": m.primary.GetName(), "namespace": m.primary.GetNamespace()},
		"status":   runtimeDeepCopy(status),
	}}
	err := cl.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(m.flip.operator), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("setting the status of %s %s: %w", m.primary.GetKind(), m.primary.GetName(), err)
	}
	return nil
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// tracker records, from a watch on the ModelDeployments, when each model
// first shows the phase awaited for it.
type tracker struct {
	mu      sync.Mutex
	want    map[string]string
	done    map[string]chan struct{}
	matched map[string]time.Time
	// phases is each model's sequence of phases, one entry per change.
	phases map[string][]string
}

func newTracker() *tracker {
	return &tracker{want: map[string]string{}, done: map[string]chan struct{}{}, matched: map[string]time.Time{}, phases: map[string][]string{}}
}

// expect awaits a phase for a model; the channel closes when it shows.
func (t *tracker) expect(name, phase string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	t.want[name], t.done[name] = phase, ch
	delete(t.matched, name)
	return ch
}

func (t *tracker) observe(name, phase string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.phases[name]; len(h) == 0 || h[len(h)-1] != phase {
		t.phases[name] = append(h, phase)
	}
	if want, ok := t.want[name]; ok && want == phase {
		t.matched[name] = at
		close(t.done[name])
		delete(t.want, name)
		delete(t.done, name)
	}
}

func (t *tracker) matchedAt(name string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.matched[name]
}

// watchModels feeds the tracker from a watch of the namespace's
// ModelDeployments (no cache: only the phase of each event is read, when
// the event arrives). It stops with ctx.
func watchModels(ctx context.Context, b testing.TB, cfg *rest.Config, ns string, t *tracker) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: reporter.ModelDeploymentGVK.Group, Version: reporter.ModelDeploymentGVK.Version, Resource: "modeldeployments"}
	res := dyn.Resource(gvr).Namespace(ns)
	list, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return res.Watch(ctx, o) },
	})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		<-ctx.Done()
		w.Stop()
	}()
	go func() {
		for ev := range w.ResultChan() {
			at := time.Now()
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			t.observe(u.GetName(), phase, at)
		}
	}()
}

// settle waits until the reporter's reconcile count stands still for
// benchQuiet.
func settle(b testing.TB, rep *reporter.Reporter) {
	deadline := time.Now().Add(2 * time.Minute)
	last, since := rep.Reconciles(), time.Now()
	for time.Since(since) < benchQuiet {
		if time.Now().After(deadline) {
			b.Fatal("the reporter never settled")
		}
		time.Sleep(50 * time.Millisecond)
		if n := rep.Reconciles(); n != last {
			last, since = n, time.Now()
		}
	}
}

// await waits for every channel, failing after timeout.
func await(b testing.TB, what string, timeout time.Duration, chans ...<-chan struct{}) {
	deadline := time.After(timeout)
	for i, ch := range chans {
		select {
		case <-ch:
		case <-deadline:
			b.Fatalf("%s: %d of %d ModelDeployments did not reflect the change within %s", what, len(chans)-i, len(chans), timeout)
		}
	}
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// percentile is the nearest-rank percentile of sorted durations, in ms.
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := max(int(math.Ceil(p*float64(len(sorted))))-1, 0)
	return float64(sorted[i]) / float64(time.Millisecond)
}

func total(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

func delta(after, before map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// benchSetup is a namespace of n rendered models whose provider objects
// report them up, on the shared envtest control plane, and a tracker of
// their phases.
type benchSetup struct {
	cluster *controlPlane
	ctx     context.Context
	admin   client.Client
	ns      string
	models  []*benchModel
	tracker *tracker
}

// setUpModels renders n ModelDeployments into a new namespace (named from
// prefix), applies them and their provider objects with benchWorkers
// writers, sets every provider status up, and watches the models' phases.
// Its context ends and the namespace goes with the benchmark.
func setUpModels(b *testing.B, prefix string, n int) benchSetup {
	clusterOnce.Do(func() { shared, clusterErr = startControlPlane() })
	if clusterErr != nil {
		b.Fatal(clusterErr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	// envtest's admin config already allows 1000 QPS (burst 2000); the
	// reporter gets the same config, so client-side throttling never
	// shapes these numbers.
	admin, err := client.New(shared.cfg, client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	nsObj := &unstructured.Unstructured{}
	nsObj.SetAPIVersion("v1")
	nsObj.SetKind("Namespace")
	nsObj.SetGenerateName(prefix)
	if err := admin.Create(ctx, nsObj); err != nil {
		b.Fatal(err)
	}
	ns := nsObj.GetName()
	b.Cleanup(func() {
		if err := admin.Delete(context.Background(), nsObj); err != nil {
			b.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	setupStart := time.Now()
	objs, models := renderBench(b, ns, n)
	if err := parallel(len(objs), func(i int) error { return applyObject(ctx, admin, objs[i]) }); err != nil {
		b.Fatal(err)
	}
	if err := parallel(len(models), func(i int) error {
		models[i].up = true
		return writeStatus(ctx, admin, models[i], true)
	}); err != nil {
		b.Fatal(err)
	}
	b.Logf("setup: rendered and applied %d objects, set %d provider statuses in %s", len(objs), len(models), time.Since(setupStart).Round(time.Millisecond))
	t := newTracker()
	watchModels(ctx, b, shared.cfg, ns, t)
	return benchSetup{cluster: shared, ctx: ctx, admin: admin, ns: ns, models: models, tracker: t}
}

// BenchmarkReporter1000 sets up, once, 1,000 rendered ModelDeployments
// whose provider objects report them up, and starts a reporter, which
// settles them all Running (s/initial-sync). The reporter's heap is then
// measured against a baseline taken before it started (MiB/heap).
//
// Each iteration flips the provider status of 50 models one at a time,
// waiting for each ModelDeployment to show it (ms/status-*), then of all
// 1,000 at once (ms/burst-*; s/burst-drain until the last one shows it),
// counting the reporter's API requests, reconciles and status writes
// during the burst. A change's latency runs from the provider status
// write's response to the arrival of the ModelDeployment watch event
// carrying the new phase.
//
// Last, a second reporter with a 2s resync takes over the settled
// namespace (writes/restart) and is watched for 6s: it must write nothing
// and send nothing but GETs and Lease renewals (writes/steady-state,
// requests/steady-state).
func BenchmarkReporter1000(b *testing.B) {
	began := time.Now()
	setup := setUpModels(b, "bench-reporter-", benchModels)
	c, ctx, admin, ns, models, t := setup.cluster, setup.ctx, setup.admin, setup.ns, setup.models, setup.tracker
	initial := make([]<-chan struct{}, len(models))
	for i, m := range models {
		initial[i] = t.expect(m.name, m.phase())
	}

	baseline := heapInuse()
	var counter requestCounter
	o := reporter.Options{
		Namespaces: []string{ns}, MetricsAddr: "0", ProbeAddr: "0",
		LeaderElection: true, LeaderElectionID: "reporter", LeaderElectionNamespace: ns,
	}
	started := time.Now()
	rep, stop := run(b, counter.wrap(c.cfg), o)
	await(b, "initial sync", 2*time.Minute, initial...)
	var last time.Time
	for _, m := range models {
		if at := t.matchedAt(m.name); at.After(last) {
			last = at
		}
	}
	initialSync := last.Sub(started)
	settle(b, rep)
	heap := int64(heapInuse()) - int64(baseline)
	b.Logf("initial sync: %d ModelDeployments Running %s after the reporter started; %d writes, %d reconciles; heap +%.1f MiB",
		len(models), initialSync.Round(time.Millisecond), rep.Writes(), rep.Reconciles(), float64(heap)/(1<<20))

	var sample []*benchModel
	quota := maps.Clone(benchSingles)
	for _, m := range models {
		if quota[m.provider] > 0 {
			quota[m.provider]--
			sample = append(sample, m)
		}
	}
	var (
		singles, burst                    []time.Duration
		drain                             time.Duration
		requests, reconciles, writes, chg int64
		byKey                             = map[string]int{}
	)
	for b.Loop() {
		for _, m := range sample {
			m.up = !m.up
			ch := t.expect(m.name, m.phase())
			if err := writeStatus(ctx, admin, m, m.up); err != nil {
				b.Fatal(err)
			}
			changed := time.Now()
			await(b, "single change", time.Minute, ch)
			singles = append(singles, t.matchedAt(m.name).Sub(changed))
		}
		settle(b, rep)

		before, r0, w0 := counter.snapshot(), rep.Reconciles(), rep.Writes()
		chans := make([]<-chan struct{}, len(models))
		changed := make([]time.Time, len(models))
		for i, m := range models {
			m.up = !m.up
			chans[i] = t.expect(m.name, m.phase())
		}
		burstStart := time.Now()
		if err := parallel(len(models), func(i int) error {
			err := writeStatus(ctx, admin, models[i], models[i].up)
			changed[i] = time.Now()
			return err
		}); err != nil {
			b.Fatal(err)
		}
		b.Logf("burst: %d provider statuses written in %s", len(models), time.Since(burstStart).Round(time.Millisecond))
		await(b, "burst", 2*time.Minute, chans...)
		var lastAt time.Time
		for i, m := range models {
			at := t.matchedAt(m.name)
			burst = append(burst, at.Sub(changed[i]))
			if at.After(lastAt) {
				lastAt = at
			}
		}
		drain = max(drain, lastAt.Sub(burstStart))
		settle(b, rep)
		d := delta(counter.snapshot(), before)
		for k, v := range d {
			byKey[k] += v
		}
		requests += int64(total(d))
		reconciles += rep.Reconciles() - r0
		writes += rep.Writes() - w0
		chg += int64(len(models))
	}
	b.StopTimer()
	failures := rep.Failures() // before stopping, as below
	stop()
	if failures != 0 {
		b.Errorf("%d reconciles failed", failures)
	}
	b.Logf("burst requests by kind: %v", byKey)

	// Steady state: a reporter resyncing every 2s over the settled models.
	var steady requestCounter
	o.SyncPeriod = benchSteadySync
	rep2, stop2 := run(b, steady.wrap(c.cfg), o)
	deadline := time.Now().Add(2 * time.Minute)
	for rep2.Reconciles() < benchModels {
		if time.Now().After(deadline) {
			b.Fatalf("the restarted reporter reconciled %d models in 2 minutes", rep2.Reconciles())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // let the initial reconciles finish
	restartWrites := rep2.Writes()
	before, r0, w0 := steady.snapshot(), rep2.Reconciles(), rep2.Writes()
	time.Sleep(benchSteadyWindow)
	d := delta(steady.snapshot(), before)
	steadyWrites, steadyReconciles := rep2.Writes()-w0, rep2.Reconciles()-r0
	steadyOther := 0
	for k, v := range d {
		if !strings.HasPrefix(k, "GET") && !strings.HasSuffix(k, "lease") {
			steadyOther += v
		}
	}
	// Read before stopping: reconciles in flight when the reporter stops
	// end with a canceled context, which counts as a failure.
	failures = rep2.Failures()
	stop2()
	b.Logf("steady state, %s with a %s resync: %d reconciles, %d writes, requests %v; %d writes after the restart",
		benchSteadyWindow, benchSteadySync, steadyReconciles, steadyWrites, d, restartWrites)
	if steadyReconciles < benchModels {
		b.Errorf("only %d reconciles in %s: the resyncs did not happen", steadyReconciles, benchSteadyWindow)
	}
	if steadyWrites != 0 {
		b.Fatalf("%d status writes at steady state", steadyWrites)
	}
	if restartWrites != 0 {
		b.Fatalf("%d status writes by a new reporter over settled models", restartWrites)
	}
	if steadyOther != 0 {
		b.Fatalf("%d requests other than GETs and Lease renewals at steady state: %v", steadyOther, d)
	}
	if failures != 0 {
		b.Errorf("%d reconciles failed after the restart", failures)
	}

	slices.Sort(singles)
	slices.Sort(burst)
	b.ReportMetric(initialSync.Seconds(), "s/initial-sync")
	b.ReportMetric(float64(heap)/(1<<20), "MiB/heap")
	b.ReportMetric(percentile(singles, 0.50), "ms/status-p50")
	b.ReportMetric(percentile(singles, 0.95), "ms/status-p95")
	b.ReportMetric(percentile(singles, 1), "ms/status-max")
	b.ReportMetric(percentile(burst, 0.50), "ms/burst-p50")
	b.ReportMetric(percentile(burst, 0.95), "ms/burst-p95")
	b.ReportMetric(percentile(burst, 1), "ms/burst-max")
	b.ReportMetric(drain.Seconds(), "s/burst-drain")
	b.ReportMetric(float64(requests)/float64(reconciles), "requests/reconcile")
	b.ReportMetric(float64(reconciles)/float64(chg), "reconciles/change")
	b.ReportMetric(float64(writes)/float64(chg), "writes/change")
	b.ReportMetric(float64(restartWrites), "writes/restart")
	b.ReportMetric(float64(steadyWrites), "writes/steady-state")
	b.ReportMetric(float64(steadyOther), "requests/steady-state")
	b.Logf("wall time of the benchmark: %s", time.Since(began).Round(time.Millisecond))
}
