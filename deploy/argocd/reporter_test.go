package argocd

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/providers/vllm"
	"github.com/airunway-render/airunway-render/reporter"
)

// TestScriptReadsWhatTheReporterWrites keeps health.lua and the reporter
// in step: statuses computed by reporter.Compute, for every state a model
// can be in, map to the Argo CD health docs/status-reporter.md promises.
func TestScriptReadsWhatTheReporterWrites(t *testing.T) {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	model := &hub.ModelDeployment{ObjectMeta: metav1.ObjectMeta{Name: "qwen", Namespace: "ai"}}
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
	cases := []struct {
		name   string
		obj    *unstructured.Unstructured
		now    time.Time
		mutate func(*reporter.Observation)
		want   string
	}{
		{"not applied", nil, created, nil, "Progressing"},
		{"rolling out", deployment(condition("Progressing", "True", "ReplicaSetUpdated")), created, nil, "Progressing"},
		{"running", deployment(condition("Available", "True", "MinimumReplicasAvailable")), created, nil, "Healthy"},
		{"failed", deployment(condition("Progressing", "False", "ProgressDeadlineExceeded")), created, nil, "Degraded"},
		{"stale", deployment(condition("Progressing", "True", "ReplicaSetUpdated")), created.Add(time.Hour), nil, "Unknown"},
		{"CRD missing", nil, created, func(o *reporter.Observation) { o.CRDMissing = true }, "Degraded"},
		{"unsupported provider", nil, created, func(o *reporter.Observation) { o.Unsupported = "future" }, "Unknown"},
	}
	script := readScript(t)
	p := vllm.Provider{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := reporter.Observation{Generation: 2, Primary: p.Primary(model), Object: tc.obj, Now: tc.now,
				Annotations: map[string]string{hub.AnnotationProvider: "vllm", hub.AnnotationEngine: "vllm"}}
			if tc.obj != nil {
				o.Health = p.Health(tc.obj)
			}
			if tc.mutate != nil {
				tc.mutate(&o)
			}
			status := reporter.Compute(o)
			for generation, want := range map[int64]string{2: tc.want, 3: "Progressing"} {
				got, err := runHealth(t, false, script, liveObject(t, generation, status))
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != want {
					t.Errorf("generation %d: health %q (%s), want %q", generation, got.Status, got.Message, want)
				}
				if generation == 2 && got.Message != status.Message {
					t.Errorf("message %q, want the status message %q", got.Message, status.Message)
				}
			}
		})
	}
}

// liveObject is the ModelDeployment as Argo CD reads it from the API
// server: the status as JSON, decoded with integers as int64.
func liveObject(t *testing.T, generation int64, status v1alpha1.ModelDeploymentStatus) map[string]any {
	t.Helper()
	data, err := json.Marshal(map[string]any{
		"apiVersion": "airunway.ai/v1alpha1", "kind": "ModelDeployment",
		"metadata": map[string]any{"name": "qwen", "namespace": "ai", "generation": generation},
		"status":   status,
	})
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}
