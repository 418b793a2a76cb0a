package reporter

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/providers"
)

// requireBounded checks what every computed status must be, whatever the
// provider objects said: each string valid UTF-8 of at most
// providers.MaxMessageBytes, and a phase and reasons the CRD accepts.
func requireBounded(t *testing.T, s v1.ModelDeploymentStatus) {
	t.Helper()
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			require.LessOrEqual(t, len(x), providers.MaxMessageBytes, "%s is %d bytes", path, len(x))
			require.True(t, utf8.ValidString(x), "%s is not UTF-8", path)
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(path+"["+string(rune('0'+i))+"]", e)
			}
		}
	}
	var fields map[string]any
	require.NoError(t, convert(s, &fields))
	walk("status", fields)
	require.Contains(t, []string{providers.PhasePending, providers.PhaseDeploying, providers.PhaseRunning, providers.PhaseFailed}, s.Phase)
	if s.Engine != nil && s.Engine.Type != "" {
		require.Contains(t, hub.Engines, s.Engine.Type)
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	// Eight strings and three condition messages at most, plus the rest.
	require.Less(t, len(data), 16*1024, "status of %d bytes", len(data))
}

// TestUnreadableProviderStatus: a primary object whose status cannot be
// read makes the model Pending with Ready=Unknown, naming the fields; it
// never turns stale, and carries no replicas or endpoint from it.
func TestUnreadableProviderStatus(t *testing.T) {
	t.Parallel()
	obj := deployment(t, created, `status: {readyReplicas: "1", conditions: "Available"}`)
	o := observe(obj, created.Add(StaleAfter*2), nil)
	require.Equal(t, []string{"status.conditions is a string, want a list", "status.readyReplicas is a string, want an integer"}, o.Health.Unreadable)
	s := Compute(o)
	require.Equal(t, "Pending", s.Phase)
	require.Equal(t, "the status reporter cannot read the status of Deployment qwen: status.conditions is a string, want a list; status.readyReplicas is a string, want an integer", s.Message)
	require.Equal(t, map[string]string{"Ready": "Unknown/ProviderStatusUnreadable", "Reconciling": "True/ProviderStatusUnreadable"}, conditions(s))
	for _, c := range s.Conditions {
		require.Equal(t, s.Message, c.Message)
	}
	require.Nil(t, s.Replicas)
	require.Nil(t, s.Endpoint)
	_, ok := StaleAt(o)
	require.False(t, ok, "an unreadable status is unknown already; it does not turn stale")
	require.Equal(t, s, Compute(observe(obj, created.Add(StaleAfter*3), &s)), "the same unreadable object gives the same status")
	requireBounded(t, s)
}

// TestHostileStringsAreCut: every string a status copies from elsewhere
// (provider messages, Service names, the Gateway, API errors, the
// renderer's annotations) is cut to providers.MaxMessageBytes, and an
// engine the CRD's enum would refuse is left out.
func TestHostileStringsAreCut(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("ü", 1<<19) // 1 MiB of two-byte characters
	// Each case makes the observation hostile, and says whether the
	// message quotes the hostile text.
	hostile := map[string]func(o *Observation) bool{
		"provider message": func(o *Observation) bool {
			o.Health = providers.Health{Phase: providers.PhaseFailed, Message: huge, Endpoint: &providers.Endpoint{Service: huge, Port: 8000}}
			return true
		},
		"gateway": func(o *Observation) bool {
			o.Gateway = &v1.GatewayStatus{Endpoint: huge, ModelName: huge, GatewayNamespace: huge}
			return false
		},
		"annotations": func(o *Observation) bool {
			o.Annotations = map[string]string{hub.AnnotationProvider: huge, hub.AnnotationProviderReason: huge, hub.AnnotationEngine: huge, hub.AnnotationEngineReason: huge}
			return false
		},
		"watch error": func(o *Observation) bool { o.Object, o.WatchError = nil, huge; return true },
		"unsupported provider": func(o *Observation) bool {
			o.Object, o.Unsupported = nil, huge
			return true
		},
		"primary name, stale": func(o *Observation) bool {
			o.Now = created.Add(StaleAfter * 2)
			return true
		},
		"unknown state": func(o *Observation) bool {
			o.Health = providers.Health{Phase: providers.PhasePending, Message: "unknown state: " + huge}
			return true
		},
		"many unreadable fields": func(o *Observation) bool {
			o.Health.Unreadable = slices.Repeat([]string{huge}, 100)
			return true
		},
	}
	for _, name := range slices.Sorted(maps.Keys(hostile)) {
		t.Run(name, func(t *testing.T) {
			o := observe(deployment(t, created, `status: {conditions: [{type: Progressing, status: "True"}]}`), created, nil)
			o.Primary.Name = huge
			quoted := hostile[name](&o)
			s := Compute(o)
			requireBounded(t, s)
			require.Equal(t, quoted, strings.HasSuffix(s.Message, providers.TruncatedMarker), "message %.80q…", s.Message)
			// Cut the same way every time: a resync writes nothing.
			require.Equal(t, s, Compute(withPrevious(o, &s)))
		})
	}
	t.Run("unknown engine", func(t *testing.T) {
		o := observe(nil, created, nil)
		o.Annotations = map[string]string{hub.AnnotationProvider: "vllm", hub.AnnotationEngine: "exotic", hub.AnnotationEngineReason: "hand-edited"}
		s := Compute(o)
		require.Equal(t, &v1.EngineStatus{SelectedReason: "hand-edited"}, s.Engine)
		requireBounded(t, s)
	})
}

func withPrevious(o Observation, prev *v1.ModelDeploymentStatus) Observation {
	o.Previous = prev
	return o
}

// hostileValues are what a field may hold on a cluster whose CRD does not
// check it (or an older or newer one): every JSON type, out-of-range and
// stringly-typed numbers, and a huge string.
var hostileValues = []any{
	nil, "", "x", "3", strings.Repeat("m", 1<<20), true, int64(-1), int64(1) << 40, 2.5, float64(1e300),
	[]any{}, []any{nil, "x", int64(3), map[string]any{}}, map[string]any{}, map[string]any{"x": []any{"y"}},
	[]any{map[string]any{"type": int64(1), "status": []any{}}},
}

// hostilePaths are the fields the built-in translations read, and their
// parents.
var hostilePaths = [][]string{
	{"spec"}, {"spec", "replicas"}, {"spec", "rayClusterConfig"}, {"spec", "rayClusterConfig", "workerGroupSpecs"},
	{"resource"}, {"resource", "count"},
	{"status"}, {"status", "state"}, {"status", "message"}, {"status", "conditions"},
	{"status", "readyReplicas"}, {"status", "availableReplicas"}, {"status", "desiredReplicas"},
	{"status", "services"}, {"status", "services", "Frontend"}, {"status", "services", "Frontend", "replicas"},
	{"status", "endpoint"}, {"status", "endpoint", "service"}, {"status", "endpoint", "port"},
	{"status", "activeServiceStatus"}, {"status", "activeServiceStatus", "applicationStatuses"},
	{"status", "activeServiceStatus", "applicationStatuses", "llm"}, {"status", "activeServiceStatus", "applicationStatuses", "llm", "status"},
	{"status", "activeServiceStatus", "applicationStatuses", "llm", "message"},
}

// TestEveryProviderSurvivesHostileStatus puts every hostile value at every
// field every built-in translation reads, for every provider: none panics,
// and every computed status is bounded.
func TestEveryProviderSurvivesHostileStatus(t *testing.T) {
	t.Parallel()
	all := reporters()
	runs := 0
	for _, name := range slices.Sorted(maps.Keys(all)) {
		rep := all[name]
		primary := rep.Primary(md)
		for _, path := range hostilePaths {
			for _, value := range hostileValues {
				obj := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": primary.GVK.GroupVersion().String(), "kind": primary.GVK.Kind,
					"metadata": map[string]any{"name": primary.Name, "namespace": "ai"},
				}}
				obj.SetCreationTimestamp(metav1.NewTime(created))
				setPath(obj.Object, path, value)
				o := Observation{Generation: 1, Annotations: map[string]string{hub.AnnotationProvider: name}, Primary: primary, Object: obj, Now: created}
				o.Health = rep.Health(obj)
				requireBounded(t, Compute(o))
				runs++
			}
		}
	}
	t.Logf("%d hostile objects translated", runs)
}

// setPath sets obj[path...] = v, replacing whatever is in the way.
func setPath(obj map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
}

// FuzzHealth feeds arbitrary JSON objects to every built-in translation
// (`go test -fuzz FuzzHealth ./reporter/`); the seeds run with the tests.
func FuzzHealth(f *testing.F) {
	for _, seed := range []string{
		`{"status":{"conditions":[{"type":"Available","status":"True"}]}}`,
		`{"status":{"state":"successful","services":{"A":{"replicas":1e9,"readyReplicas":"1"}}}}`,
		`{"status":{"activeServiceStatus":{"applicationStatuses":{"llm":{"status":"DEPLOY_FAILED","message":"\u00ff\u0000"}}}}}`,
		`{"status":null,"spec":[],"resource":{"count":-5}}`,
		`{"status":{"conditions":"x","endpoint":{"port":65536}}}`,
	} {
		f.Add([]byte(seed))
	}
	all := reporters()
	f.Fuzz(func(t *testing.T, data []byte) {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(append([]byte(`{"apiVersion":"v1","kind":"Thing","metadata":{"name":"qwen"},"x":`), append(data, '}')...)); err != nil {
			return
		}
		content, _ := obj.Object["x"].(map[string]any)
		for name, rep := range all {
			o := &unstructured.Unstructured{Object: maps.Clone(content)}
			if o.Object == nil {
				o.Object = map[string]any{}
			}
			o.SetName("qwen")
			primary := rep.Primary(md)
			obs := Observation{Generation: 1, Annotations: map[string]string{hub.AnnotationProvider: name}, Primary: primary, Object: o, Now: created}
			obs.Health = rep.Health(o)
			requireBounded(t, Compute(obs))
		}
	})
}
