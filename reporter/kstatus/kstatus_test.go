package kstatus

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	fluxkstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/runtime/conditions/check"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/providers/vllm"
	"github.com/airunway-render/airunway-render/reporter"
)

// generation is the ModelDeployment's metadata.generation the reporter
// observed; a live object one generation ahead has a status behind it.
const generation = 2

var created = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// modelState is one state a model can be in, with what docs/status-reporter.md's
// condition table says the reporter writes for it (Ready's status and
// reason; Reconciling=True while in progress or unknown; Stalled=True while
// failed or the CRD is missing) and what kstatus makes of that.
type modelState struct {
	name    string
	primary *unstructured.Unstructured // the vLLM Deployment; nil: not applied
	now     time.Time
	mutate  func(*reporter.Observation)

	ready       string // docs/status-reporter.md: Ready status/reason
	reconciling bool   // docs/status-reporter.md: Reconciling=True
	stalled     bool   // docs/status-reporter.md: Stalled=True
	kstatus     string // docs/status-reporter.md: "kstatus: in progress, never current", "kstatus: failed"; Current when Ready=True
}

func modelStates() []modelState {
	deployment := func(status map[string]any) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "qwen", "namespace": "ai"},
			"spec":     map[string]any{"replicas": int64(1)},
			"status":   status,
		}}
		obj.SetCreationTimestamp(metav1.NewTime(created))
		return obj
	}
	condition := func(typ, status, reason string) map[string]any {
		return map[string]any{"conditions": []any{map[string]any{"type": typ, "status": status, "reason": reason}}}
	}
	const (
		current    = string(fluxkstatus.CurrentStatus)
		inProgress = string(fluxkstatus.InProgressStatus)
		failed     = string(fluxkstatus.FailedStatus)
	)
	progressing := condition("Progressing", "True", "ReplicaSetUpdated")
	return []modelState{
		{name: "not applied", now: created,
			ready: "False/ResourceNotFound", reconciling: true, kstatus: inProgress},
		{name: "rolling out", primary: deployment(progressing), now: created,
			ready: "False/DeploymentInProgress", reconciling: true, kstatus: inProgress},
		{name: "running", primary: deployment(condition("Available", "True", "MinimumReplicasAvailable")), now: created,
			ready: "True/DeploymentReady", kstatus: current},
		{name: "failed", primary: deployment(condition("Progressing", "False", "ProgressDeadlineExceeded")), now: created,
			ready: "False/DeploymentFailed", stalled: true, kstatus: failed},
		// Not ready and unwritten for longer than --stale-after: the
		// operator is probably down.
		{name: "stale, operator silent", primary: deployment(progressing), now: created.Add(time.Hour),
			ready: "Unknown/ProviderStale", reconciling: true, kstatus: inProgress},
		{name: "CRD missing", now: created, mutate: func(o *reporter.Observation) { o.CRDMissing = true },
			ready: "False/ProviderCRDMissing", stalled: true, kstatus: failed},
		{name: "unsupported provider", now: created, mutate: func(o *reporter.Observation) { o.Unsupported = "sglang-operator" },
			ready: "Unknown/ProviderUnsupported", reconciling: true, kstatus: inProgress},
		{name: "watch failed", now: created, mutate: func(o *reporter.Observation) {
			o.WatchError = "deployments.apps is forbidden: User \"system:serviceaccount:airunway-system:airunway-status-reporter\" cannot list resource \"deployments\""
		}, ready: "Unknown/ProviderWatchFailed", reconciling: true, kstatus: inProgress},
		// A provider status of the wrong shape, read leniently and named.
		{name: "provider status unreadable", primary: deployment(map[string]any{"conditions": "Available", "readyReplicas": "1"}), now: created,
			ready: "Unknown/ProviderStatusUnreadable", reconciling: true, kstatus: inProgress},
	}
}

// compute is the status reporter.Compute writes for a state, as the vLLM
// provider's reporter would observe it.
func (s modelState) compute(t *testing.T) v1.ModelDeploymentStatus {
	t.Helper()
	p := vllm.Provider{}
	model := &hub.ModelDeployment{ObjectMeta: metav1.ObjectMeta{Name: "qwen", Namespace: "ai"}}
	o := reporter.Observation{Generation: generation, Primary: p.Primary(model), Object: s.primary, Now: s.now,
		Annotations: map[string]string{hub.AnnotationProvider: "vllm", hub.AnnotationEngine: "vllm"}}
	if s.primary != nil {
		o.Health = p.Health(s.primary)
	}
	if s.mutate != nil {
		s.mutate(&o)
	}
	return reporter.Compute(o)
}

// liveObject is the ModelDeployment as a client reads it from the API
// server: JSON decoded with integers as int64, metadata.generation gen and,
// unless status is nil, the status the reporter wrote.
func liveObject(t *testing.T, gen int64, status *v1.ModelDeploymentStatus) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{
		"apiVersion": "airunway.ai/v1alpha1", "kind": "ModelDeployment",
		"metadata": map[string]any{"name": "qwen", "namespace": "ai", "generation": gen},
		"spec":     map[string]any{"model": map[string]any{"id": "Qwen/Qwen3-8B"}},
	}
	if status != nil {
		obj["status"] = status
	}
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// kstatusLibraries are the two kstatus implementations: Flux's fork, which
// kustomize-controller's health checks (healthChecks, wait: true) run on
// kinds it has no reader of its own for, and the original, which kpt and
// cli-utils' applier use.
var kstatusLibraries = []struct {
	name    string
	compute func(*unstructured.Unstructured) (status, message string, err error)
}{
	{"github.com/fluxcd/cli-utils", func(u *unstructured.Unstructured) (string, string, error) {
		r, err := fluxkstatus.Compute(u)
		if err != nil {
			return "", "", err
		}
		return string(r.Status), r.Message, nil
	}},
	{"sigs.k8s.io/cli-utils", func(u *unstructured.Unstructured) (string, string, error) {
		r, err := kstatus.Compute(u)
		if err != nil {
			return "", "", err
		}
		return string(r.Status), r.Message, nil
	}},
}

func kstatusOf(t *testing.T, u *unstructured.Unstructured) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, lib := range kstatusLibraries {
		status, message, err := lib.compute(u)
		if err != nil {
			t.Fatalf("%s: %v", lib.name, err)
		}
		got[lib.name] = status
		t.Logf("%s: %s (%s)", lib.name, status, message)
	}
	return got
}

// conditionsOf sums up the conditions as docs/status-reporter.md's table words them.
func conditionsOf(s v1.ModelDeploymentStatus) (ready string, reconciling, stalled bool) {
	for _, c := range s.Conditions {
		switch c.Type {
		case reporter.ConditionReady:
			ready = string(c.Status) + "/" + c.Reason
		case string(kstatus.ConditionReconciling):
			reconciling = c.Status == metav1.ConditionTrue
		case string(kstatus.ConditionStalled):
			stalled = c.Status == metav1.ConditionTrue
		}
	}
	return ready, reconciling, stalled
}

// TestKstatusReadsWhatTheReporterWrites: for every state a model can be in,
// the status reporter.Compute writes is what kstatus reads as docs/status-reporter.md
// promises (Current only when running, Failed when failed or the CRD is
// missing, InProgress otherwise), and so is the same status once
// metadata.generation has moved past it (a spec change the reporter has
// not seen yet).
func TestKstatusReadsWhatTheReporterWrites(t *testing.T) {
	for _, st := range modelStates() {
		t.Run(st.name, func(t *testing.T) {
			status := st.compute(t)
			ready, reconciling, stalled := conditionsOf(status)
			if ready != st.ready || reconciling != st.reconciling || stalled != st.stalled {
				t.Errorf("conditions Ready=%s Reconciling=%t Stalled=%t, docs/status-reporter.md says Ready=%s Reconciling=%t Stalled=%t",
					ready, reconciling, stalled, st.ready, st.reconciling, st.stalled)
			}
			if status.ObservedGeneration != generation {
				t.Errorf("observedGeneration %d, want the model's generation %d", status.ObservedGeneration, generation)
			}
			for _, at := range []struct {
				gen  int64
				want string
			}{{generation, st.kstatus}, {generation + 1, string(fluxkstatus.InProgressStatus)}} {
				gen, want := at.gen, at.want
				for lib, got := range kstatusOf(t, liveObject(t, gen, &status)) {
					if got != want {
						t.Errorf("generation %d: %s computes %s, docs/status-reporter.md promises %s", gen, lib, got, want)
					}
				}
			}
		})
	}
}

// TestKstatusWithoutStatus: a ModelDeployment the reporter has not written
// yet (just applied, the reporter not installed, or no
// render.airunway.ai/provider annotation) has no conditions and no
// observedGeneration, and kstatus takes such an object for Current, so a
// Flux health check passes on it. docs/status-reporter.md warns of it; this keeps the
// warning true, and fails if kstatus ever reads such an object otherwise.
func TestKstatusWithoutStatus(t *testing.T) {
	for lib, got := range kstatusOf(t, liveObject(t, generation, nil)) {
		if got != string(fluxkstatus.CurrentStatus) {
			t.Errorf("%s computes %s for a model without status; docs/status-reporter.md says kstatus takes it for Current", lib, got)
		}
	}
}

// fluxModel is the ModelDeployment as Flux's conditions package reads it
// (conditions.Getter): the object the API server returns, the same one
// kstatus reads, with its status conditions decoded.
type fluxModel struct {
	*unstructured.Unstructured
	conditions []metav1.Condition
}

func newFluxModel(t *testing.T, u *unstructured.Unstructured) fluxModel {
	t.Helper()
	var status struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	if content, ok := u.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, &status); err != nil {
			t.Fatal(err)
		}
	}
	return fluxModel{Unstructured: u, conditions: status.Conditions}
}

// GetConditions implements Flux's meta.ObjectWithConditions.
func (m fluxModel) GetConditions() []metav1.Condition { return m.conditions }

// fluxCheck runs a checker on the object itself (no API server to fetch
// it from) and returns its failures and warnings as text, "" for none.
func fluxCheck(t *testing.T, c *check.Checker, u *unstructured.Unstructured) (fail, warn string) {
	t.Helper()
	c.DisableFetch = true
	f, w := c.Check(context.Background(), newFluxModel(t, u))
	return errText(f), errText(w)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// readyFalseWhileReconciling is check_FAIL0003 of Flux's full-reconciliation
// checker.
const readyFalseWhileReconciling = "Ready condition must be False when Reconciling condition is True"

// TestFluxConditionChecks holds every status reporter.Compute writes to
// Flux's kstatus conformance checks (fluxcd/pkg/runtime/conditions/check),
// with the reporter's own condition vocabulary as the negative-polarity
// context (Stalled, then Reconciling).
//
// Flux has two rule sets. The full one (NewChecker) is for a status a
// controller leaves when it has reached a verdict; the in-progress one
// (NewInProgressChecker) is for a status that says the outcome is still
// open, which Flux words as Ready=Unknown with Reconciling=True. docs/status-reporter.md
// gives the reporter both kinds:
//
//   - Ready True or False (running, failed, CRD missing, not applied,
//     rolling out): the full checker, which must find nothing, warnings
//     included;
//   - Ready=Unknown with Reconciling=True (stale, unsupported provider,
//     watch failed, unreadable provider status): the in-progress checker,
//     which must find nothing. The full checker's one objection to these,
//     that Ready must be False while Reconciling is True, is asserted too:
//     it is where docs/status-reporter.md's Ready=Unknown (Argo CD's Unknown health)
//     departs from Flux's controllers, which never end a reconcile with
//     Ready=Unknown. Nothing else may be added to it unnoticed.
//
// A status behind metadata.generation is not one the reporter writes (it
// writes the generation it read) but one the object has until the reporter
// catches up: the in-progress checker must find nothing there either.
func TestFluxConditionChecks(t *testing.T) {
	negative := &check.Conditions{NegativePolarity: []string{string(kstatus.ConditionStalled), string(kstatus.ConditionReconciling)}}
	for _, st := range modelStates() {
		t.Run(st.name, func(t *testing.T) {
			status := st.compute(t)
			live := liveObject(t, generation, &status)
			unknown := strings.HasPrefix(st.ready, "Unknown/")

			fail, warn := fluxCheck(t, check.NewChecker(nil, negative), live)
			wantFail := ""
			if unknown {
				wantFail = readyFalseWhileReconciling
			}
			if fail != wantFail || warn != "" {
				t.Errorf("full checker: fail %q, warn %q; want fail %q, no warning", fail, warn, wantFail)
			}

			if unknown {
				if fail, warn := fluxCheck(t, check.NewInProgressChecker(nil), live); fail != "" || warn != "" {
					t.Errorf("in-progress checker: fail %q, warn %q; want nothing", fail, warn)
				}
			}

			behind := liveObject(t, generation+1, &status)
			if fail, warn := fluxCheck(t, check.NewInProgressChecker(nil), behind); fail != "" || warn != "" {
				t.Errorf("generation %d, status at %d: in-progress checker: fail %q, warn %q; want nothing", generation+1, generation, fail, warn)
			}
		})
	}
}
