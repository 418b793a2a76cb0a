package providers_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"

	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/vllm"
)

// fuzzSpec renders the fixed object the overrides are merged into: a vLLM
// Deployment with every kind of field a patch can meet (nested maps,
// lists of objects, strings, numbers, booleans).
const fuzzSpec = `model:
  id: meta-llama/Llama-3.1-8B-Instruct
  storage:
    volumes:
    - {name: cache, purpose: modelCache, size: 100Gi, mountPath: /models}
engine: {type: vllm, contextLength: 8192, args: {max-num-seqs: "64"}, extraArgs: [--enforce-eager]}
resources: {gpu: {count: 2}, memory: 64Gi, cpu: "8"}
env: [{name: HF_HUB_OFFLINE, value: "1"}]
secrets: {huggingFaceToken: hf-token}
nodeSelector: {pool: gpu}
tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
podTemplate: {metadata: {labels: {team: ml}, annotations: {note: x}}}
`

// FuzzApplyOverrides merges fuzzed `spec.provider.overrides` JSON into a
// fixed rendered object.
//
// Invariants: no panic and no input runs longer than fuzzcheck.Timeout; on
// error the object is unchanged; the refused top-level keys (apiVersion,
// kind, metadata, status) never change; no JSON null is left anywhere in
// the result; applying the same overrides twice gives what applying them
// once gives (the merge is idempotent).
func FuzzApplyOverrides(f *testing.F) {
	base := fuzzBaseObject(f)
	for _, s := range []string{
		`{"spec":{"replicas":3}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"vllm","image":"x"}]}}}}`,
		`{"spec":{"template":{"metadata":{"labels":{"team":null,"extra":"y"}}}}}`,
		`{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}`,
		`{"spec":{"template":{"spec":{"tolerations":null,"nodeSelector":{"pool":null}}}}}`,
		`{"extra":{"gone":null,"kept":{"deeper":{"x":1,"y":null}}}}`,
		`{"metadata":{"name":"other"}}`,
		`{"status":{}}`,
		`{"spec":null}`,
		`{}`,
		`null`,
		`[]`,
		`"spec"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fuzzcheck.Bounded(t, func() error { return checkOverrides(base, raw) })
	})
}

var fuzzRefusedKeys = []string{"apiVersion", "kind", "metadata", "status"}

func checkOverrides(base providers.Object, raw []byte) error {
	once := fuzzCopy(base)
	err := providers.ApplyOverrides(once, json.RawMessage(raw))
	if err != nil {
		if !reflect.DeepEqual(once, base) {
			return fmt.Errorf("failed with %q but changed the object", err)
		}
		return nil
	}
	for _, k := range fuzzRefusedKeys {
		if !reflect.DeepEqual(once[k], base[k]) {
			return fmt.Errorf("refused key %q changed: %v -> %v", k, base[k], once[k])
		}
	}
	if at := fuzzNullAt(once, ""); at != "" {
		return fmt.Errorf("a null survives at %s", at)
	}
	twice := fuzzCopy(once)
	if err := providers.ApplyOverrides(twice, json.RawMessage(raw)); err != nil {
		return fmt.Errorf("applying again fails: %v", err)
	}
	if !reflect.DeepEqual(once, twice) {
		a, _ := json.Marshal(once)
		b, _ := json.Marshal(twice)
		return fmt.Errorf("applying twice differs from applying once:\n%s\n%s", a, b)
	}
	return nil
}

// fuzzNullAt returns the path of a null in v, "" when there is none.
func fuzzNullAt(v any, at string) string {
	switch t := v.(type) {
	case nil:
		return at + " (null)"
	case map[string]any:
		for k, e := range t {
			if p := fuzzNullAt(e, at+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range t {
			if p := fuzzNullAt(e, fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// fuzzBaseObject is the Deployment the vLLM provider renders for fuzzSpec,
// normalised through JSON like ApplyOverrides' input in the pipeline.
func fuzzBaseObject(tb testing.TB) providers.Object {
	req := providertest.Request(providertest.Valid(tb, "", fuzzSpec), hub.ProviderVLLM)
	objs, l := vllm.Provider{}.Render(req)
	if l.HasErrors() {
		tb.Fatalf("cannot render the fixed object: %v", l)
	}
	for _, o := range objs {
		if o["kind"] == "Deployment" {
			return fuzzCopy(o)
		}
	}
	tb.Fatal("the vLLM provider rendered no Deployment")
	return nil
}

func fuzzCopy(o providers.Object) providers.Object {
	data, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	var c providers.Object
	if err := json.Unmarshal(data, &c); err != nil {
		panic(err)
	}
	return c
}
