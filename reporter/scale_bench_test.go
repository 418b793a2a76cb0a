package reporter_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/reporter"
)

// scaleModels is the models BenchmarkReporterScale sets up:
// AIRUNWAY_REPORTER_SCALE, else 10,000 (the scale docs/status-reporter.md
// publishes).
func scaleModels(b *testing.B) int {
	if v := os.Getenv("AIRUNWAY_REPORTER_SCALE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("AIRUNWAY_REPORTER_SCALE=%q: want a positive number of models", v)
		}
		return n
	}
	return 10000
}

// BenchmarkReporterScale sets up, once, scaleModels rendered
// ModelDeployments (as BenchmarkReporter1000: nine in ten vLLM, the rest
// llm-d, KAITO, KubeRay and Dynamo) whose provider objects report them up,
// and measures:
//
//   - the API server's ceiling: one status write per model from a
//     minimal client (statusCeiling, s/ceiling), which leaves every model
//     Pending;
//   - the real binary, as deploy/base runs it (its flags' defaults, the
//     GOMEMLIMIT the manifest sets): the seconds from its start until
//     every model shows Running (s/initial-sync; initial-sync/ceiling
//     holds it to the ceiling), and its peak resident memory, the
//     kernel's VmHWM (MiB/peak-rss);
//   - the ceiling of the same work: the statuses the binary wrote, read
//     back and applied again by a minimal client over Pending
//     (sameStatusCeiling, s/ceiling-same-status, and
//     initial-sync/ceiling-same-status);
//   - the reporter in process over the settled models, a restart over
//     current statuses: the seconds until it has reconciled every model
//     (s/restart-confirmed), its writes (writes/restart), and the heap its
//     caches hold per model after a GC, against a baseline taken before
//     it started (KiB/model); AIRUNWAY_REPORTER_HEAPPROFILE names a file
//     for its heap profile then.
//
// AIRUNWAY_REPORTER_FLAGS adds flags to the binary's, for an experiment.
func BenchmarkReporterScale(b *testing.B) {
	n := scaleModels(b)
	setup := setUpModels(b, "bench-scale-", n)
	c, ns, models, t := setup.cluster, setup.ns, setup.models, setup.tracker
	ceiling, applied := statusCeiling(b, setup)
	initial := make([]<-chan struct{}, len(models))
	for i, m := range models {
		initial[i] = t.expect(m.name, m.phase())
	}
	limit := shippedMemoryLimit(b)
	args := []string{"--kubeconfig", writeKubeconfig(b, c.cfg), "--namespace", ns, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}
	// More flags for an experiment (--workers 8), space-separated.
	args = append(args, strings.Fields(os.Getenv("AIRUNWAY_REPORTER_FLAGS"))...)
	cmd := exec.Command(reporterBinary(b), args...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+limit)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	started := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	b.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	await(b, "initial sync of the binary", 5*time.Minute, initial...)
	var last time.Time
	for _, m := range models {
		if at := t.matchedAt(m.name); at.After(last) {
			last = at
		}
	}
	initialSync := last.Sub(started)
	time.Sleep(3 * time.Second) // the writes' own events
	peak := peakRSS(b, cmd.Process.Pid)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	stopped = true
	b.Logf("binary (GOMEMLIMIT=%s): %d models Running %s after start; peak RSS %.0f MiB", limit, n, initialSync.Round(100*time.Millisecond), float64(peak)/(1<<20))
	same := sameStatusCeiling(b, setup)

	// A restart over current statuses: every model confirmed (reconciled)
	// from the caches, nothing written.
	baseline := heapInuse()
	o := reporter.Options{Namespaces: []string{ns}, MetricsAddr: "0", ProbeAddr: "0"}
	restarted := time.Now()
	rep, stop := run(b, c.cfg, o)
	deadline := time.Now().Add(5 * time.Minute)
	for rep.Reconciles() < int64(n) {
		if time.Now().After(deadline) {
			b.Fatalf("the in-process reporter reconciled %d of %d models in 5 minutes", rep.Reconciles(), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	confirmed := time.Since(restarted)
	b.Logf("restart over %d current statuses: every model reconciled %s after start, %d writes", n, confirmed.Round(100*time.Millisecond), rep.Writes())
	settle(b, rep)
	heap := int64(heapInuse()) - int64(baseline)
	if path := os.Getenv("AIRUNWAY_REPORTER_HEAPPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	writes := rep.Writes()
	stop()
	b.Logf("in process: heap +%.1f MiB for %d models (%.1f KiB each); %d writes over the settled models", float64(heap)/(1<<20), n, float64(heap)/float64(n)/1024, writes)
	for b.Loop() {
		// The numbers are the setup's; nothing to repeat.
	}
	b.ReportMetric(ceiling.Seconds(), "s/ceiling")
	b.ReportMetric(initialSync.Seconds()/ceiling.Seconds(), "initial-sync/ceiling")
	b.ReportMetric(applied.Seconds(), "s/ceiling-apply")
	b.ReportMetric(initialSync.Seconds()/applied.Seconds(), "initial-sync/ceiling-apply")
	b.ReportMetric(same.Seconds(), "s/ceiling-same-status")
	b.ReportMetric(initialSync.Seconds()/same.Seconds(), "initial-sync/ceiling-same-status")
	b.ReportMetric(confirmed.Seconds(), "s/restart-confirmed")
	b.ReportMetric(float64(writes), "writes/restart")
	b.ReportMetric(initialSync.Seconds(), "s/initial-sync")
	b.ReportMetric(float64(peak)/(1<<20), "MiB/peak-rss")
	b.ReportMetric(float64(heap)/float64(n)/1024, "KiB/model")
}

// statusCeiling is what the API server takes to accept one status write
// per model from a minimal client: a merge patch of the status
// subresource, phase Pending, no read first, as many at once as the
// reporter's workers (4) and as the benchmark's writers (8); the faster is
// the ceiling the reporter's first start is held to. applied is the same
// with the reporter's kind of write, a server-side apply of the status
// (8 writers), which costs the API server more. The models are left
// Pending, so that the reporter's first start writes each once.
func statusCeiling(b *testing.B, setup benchSetup) (ceiling, applied time.Duration) {
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Pending","message":"a minimal client's write"}}`))
	for _, writers := range []int{4, 8} {
		took := timedWrites(b, setup, "merge patch", writers, func(i int) error { return setup.admin.Status().Patch(setup.ctx, benchModelObject(setup, i), patch) })
		if ceiling == 0 || took < ceiling {
			ceiling = took
		}
	}
	return ceiling, applyPending(b, setup)
}

// applyPending applies the status phase Pending to every model from a
// minimal client, under the reporter's field manager (8 writers): the
// fields the reporter set before are dropped, as if it had never written.
func applyPending(b *testing.B, setup benchSetup) time.Duration {
	return timedWrites(b, setup, "server-side apply", 8, func(i int) error {
		md := benchModelObject(setup, i)
		md.Object["status"] = map[string]any{"phase": "Pending", "message": "a minimal client's apply"}
		return applyAsReporter(setup, md)
	})
}

// sameStatusCeiling is the ceiling of the work the reporter's first start
// asks of the API server: the statuses it wrote (read back), applied
// again by a minimal client with its field manager, 8 writers, over the
// Pending status it found (applyPending first, not timed). A status of
// conditions, provider, engine, replicas and endpoint costs the server
// more to validate and apply than applyPending's two fields. The models
// are left with the reporter's statuses, current.
func sameStatusCeiling(b *testing.B, setup benchSetup) time.Duration {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("airunway.ai/v1alpha1")
	list.SetKind("ModelDeploymentList")
	if err := setup.admin.List(setup.ctx, list, client.InNamespace(setup.ns)); err != nil {
		b.Fatal(err)
	}
	statuses := map[string]any{}
	for _, md := range list.Items {
		statuses[md.GetName()] = md.Object["status"]
	}
	applyPending(b, setup)
	return timedWrites(b, setup, "server-side apply of the reporter's own statuses", 8, func(i int) error {
		md := benchModelObject(setup, i)
		status, ok := statuses[setup.models[i].name].(map[string]any)
		if !ok {
			return fmt.Errorf("model %s has no status", setup.models[i].name)
		}
		md.Object["status"] = status
		return applyAsReporter(setup, md)
	})
}

func applyAsReporter(setup benchSetup, md *unstructured.Unstructured) error {
	return setup.admin.Status().Apply(setup.ctx, client.ApplyConfigurationFromUnstructured(md), client.FieldOwner(reporter.FieldManager), client.ForceOwnership)
}

// benchModelObject names the i-th model, with nothing else set.
func benchModelObject(setup benchSetup, i int) *unstructured.Unstructured {
	md := &unstructured.Unstructured{}
	md.SetAPIVersion("airunway.ai/v1alpha1")
	md.SetKind("ModelDeployment")
	md.SetNamespace(setup.ns)
	md.SetName(setup.models[i].name)
	return md
}

// timedWrites times write over every model with writers at once.
func timedWrites(b *testing.B, setup benchSetup, what string, writers int, write func(i int) error) time.Duration {
	started := time.Now()
	if err := parallelN(writers, len(setup.models), write); err != nil {
		b.Fatal(err)
	}
	took := time.Since(started)
	b.Logf("a minimal client, %d writers, %s: %d status writes in %s", writers, what, len(setup.models), took.Round(100*time.Millisecond))
	return took
}

// peakRSS is a process's peak resident set (VmHWM), in bytes.
func peakRSS(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc status")
	return 0
}

// shippedMemoryLimit is the GOMEMLIMIT deploy/base gives the reporter's
// container, "off" when it sets none.
func shippedMemoryLimit(b *testing.B) string {
	data, err := os.ReadFile("../deploy/base/deployment.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		b.Fatal(err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "GOMEMLIMIT" {
				return e.Value
			}
		}
	}
	return "off"
}
