package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeModelDeploymentProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string // decoded through YAMLToJSON; empty when json is used
		json string // fed to DecodeModelDeployment as is
		want []want
	}{
		{
			name: "valid document",
			yaml: mdDoc("", `{model: {id: m}, engine: {type: vllm}}`),
		},
		{
			name: "status under spec is unknown",
			yaml: mdDoc("", `{model: {id: m}, status: {}}`),
			want: []want{e("spec.status", "unknown field")},
		},
		{
			name: "status is accepted and ignored",
			yaml: mdDoc("", `{model: {id: m}}`) + "status: {phase: Running, anything: [1, 2]}\n",
		},
		{
			name: "unknown field under spec.model",
			yaml: mdDoc("", `{model: {id: m, bogus: 1}}`),
			want: []want{e("spec.model.bogus", "unknown field", "`bogus`", "ModelDeployment schema")},
		},
		{
			name: "unknown field under spec.resources.gpu",
			yaml: mdDoc("", `{model: {id: m}, resources: {gpu: {count: 1, typo: x}}}`),
			want: []want{e("spec.resources.gpu.typo", "unknown field", "`typo`")},
		},
		{
			name: "unknown field inside a list element",
			yaml: mdDoc("", `{model: {id: m, storage: {volumes: [{name: a, claimName: a, mountpath: /a}]}}}`),
			want: []want{e("spec.model.storage.volumes[0].mountpath", "unknown field", "`mountpath`")},
		},
		{
			name: "unknown field in a Kubernetes type",
			yaml: mdDoc("", `{model: {id: m}, tolerations: [{key: k, effekt: NoSchedule}]}`),
			want: []want{e("spec.tolerations[0].effekt", "unknown field")},
		},
		{
			name: "unknown field in metadata",
			yaml: "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: a, labelz: {}}\nspec: {model: {id: m}}\n",
			want: []want{e("metadata.labelz", "unknown field")},
		},
		{
			name: "misplaced field at the top level",
			yaml: mdDoc("", `{model: {id: m}}`) + "engine: {type: vllm}\n",
			want: []want{e("engine", "unknown field", "nesting level")},
		},
		{
			name: "several unknown fields are all reported",
			yaml: mdDoc("", `{model: {id: m, bogus: 1}, engine: {type: vllm, flavour: x}, resources: {gpu: {typo: 1}}, extra: true}`),
			want: []want{
				e("spec.model.bogus", "unknown field"),
				e("spec.engine.flavour", "unknown field"),
				e("spec.resources.gpu.typo", "unknown field"),
				e("spec.extra", "unknown field"),
			},
		},
		{
			name: "duplicate field",
			json: `{"apiVersion":"airunway.ai/v1alpha1","kind":"ModelDeployment","metadata":{"name":"a"},"spec":{"model":{"id":"a","id":"b"}}}`,
			want: []want{e("spec.model.id", "set more than once")},
		},
		{
			name: "duplicate and unknown fields together",
			json: `{"apiVersion":"airunway.ai/v1alpha1","kind":"ModelDeployment","metadata":{"name":"a"},"spec":{"model":{"id":"a"},"engine":{"type":"vllm","type":"sglang","bogus":1}}}`,
			want: []want{
				e("spec.engine.type", "set more than once"),
				e("spec.engine.bogus", "unknown field"),
			},
		},
		{
			name: "replicas given as a string",
			yaml: mdDoc("", `{model: {id: m}, scaling: {replicas: "two"}}`),
			want: []want{e("spec.scaling.replicas", "must be an integer", "got string")},
		},
		{
			// Known limitation of sigs.k8s.io/json (shared with the API
			// server): a type error ends decoding and the unknown-field
			// findings are dropped; they surface on the next run.
			name: "type error masks unknown fields",
			yaml: mdDoc("", `{model: {id: m, bogus: 1}, scaling: {replicas: "two"}}`),
			want: []want{e("spec.scaling.replicas", "must be an integer")},
		},
		{
			name: "gpu count given as a string",
			yaml: mdDoc("", `{model: {id: m}, resources: {gpu: {count: "1"}}}`),
			want: []want{e("spec.resources.gpu.count", "must be an integer")},
		},
		{
			name: "boolean given as a string",
			yaml: mdDoc("", `{model: {id: m}, engine: {enablePrefixCaching: "yes"}}`),
			want: []want{e("spec.engine.enablePrefixCaching", "must be a boolean", "got string")},
		},
		{
			name: "args given as a list",
			yaml: mdDoc("", `{model: {id: m}, engine: {args: [a, b]}}`),
			want: []want{e("spec.engine.args", "must be an object", "got array")},
		},
		{
			name: "extraArgs given as a string",
			yaml: mdDoc("", `{model: {id: m}, engine: {extraArgs: "--x"}}`),
			want: []want{e("spec.engine.extraArgs", "must be a list", "got string")},
		},
		{
			name: "engine given as a string",
			yaml: mdDoc("", `{model: {id: m}, engine: vllm}`),
			want: []want{e("spec.engine", "must be an object", "got string")},
		},
		{
			name: "model id given as a number",
			yaml: mdDoc("", `{model: {id: 7}}`),
			want: []want{e("spec.model.id", "must be a string", "got number")},
		},
		{
			// encoding/json type errors carry no list index; the path names
			// the element all the same.
			name: "type error inside a list element",
			yaml: mdDoc("", `{model: {id: m, storage: {volumes: [{name: a, claimName: a, mountPath: /a}, {name: b, claimName: b, mountPath: /b, readOnly: "yes"}]}}}`),
			want: []want{e("spec.model.storage.volumes[1].readOnly", "must be a boolean")},
		},
		{
			name: "env value given as a number",
			yaml: mdDoc("", `{model: {id: m}, env: [{name: A, value: x}, {name: B, value: 3}]}`),
			want: []want{e("spec.env[1].value", "must be a string", "got number")},
		},
		{
			name: "a list element given as a number",
			yaml: mdDoc("", `{model: {id: m}, engine: {extraArgs: [--a, 2]}}`),
			want: []want{e("spec.engine.extraArgs[1]", "must be a string", "got number")},
		},
		{
			// the decoder's path stops at a map; its key is named too
			name: "a map value given as a number",
			yaml: mdDoc("", `{model: {id: m}, engine: {args: {max-model-len: 4096}}}`),
			want: []want{e("spec.engine.args.max-model-len", "must be a string", "got number")},
		},
		{
			// intstr.IntOrString decodes non-strings as int32, so the
			// message asks for an integer although a string is fine too.
			name: "size given as a boolean",
			yaml: mdDoc("", `{model: {id: m, storage: {volumes: [{name: a, size: true, mountPath: /a}]}}}`),
			want: []want{e("spec.model.storage.volumes[0].size", "got bool")},
		},
		{
			name: "not JSON at all",
			json: `{"spec": `,
			want: []want{e("", "cannot decode")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.yaml != "" {
				_, got := decodeYAMLProblems(t, tc.yaml)
				requireProblems(t, got, tc.want...)
				return
			}
			_, got := DecodeModelDeployment([]byte(tc.json))
			requireProblems(t, got, tc.want...)
		})
	}
}

// enablePrefixCaching is a *bool so that an explicit false survives; the CRD
// default (true) applies only where the engine object exists.
func TestDecodeEnablePrefixCaching(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		want *bool // nil: engine or the field stays absent
	}{
		{"explicit false survives", `{model: {id: m}, engine: {type: vllm, enablePrefixCaching: false}}`, ptrTo(false)},
		{"explicit true", `{model: {id: m}, engine: {type: vllm, enablePrefixCaching: true}}`, ptrTo(true)},
		{"absent with engine present defaults to true", `{model: {id: m}, engine: {type: vllm}}`, ptrTo(true)},
		{"absent with empty engine object defaults to true", `{model: {id: m}, engine: {}}`, ptrTo(true)},
		{"absent engine stays absent", `{model: {id: m}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := decodeYAML(t, mdDoc("", tc.spec))
			DefaultModelDeployment(md)
			if tc.want == nil {
				require.Nil(t, md.Spec.Engine)
				return
			}
			require.NotNil(t, md.Spec.Engine)
			require.NotNil(t, md.Spec.Engine.EnablePrefixCaching)
			require.Equal(t, *tc.want, *md.Spec.Engine.EnablePrefixCaching)
			requireProblems(t, validate(md))
		})
	}
}

func TestDecodeOverridesNullIsAbsent(t *testing.T) {
	md := decodeYAML(t, mdDoc("", `{model: {id: m}, provider: {name: kaito, overrides: null}}`))
	require.NotNil(t, md.Spec.Provider)
	require.Nil(t, md.Spec.Provider.Overrides)

	md = decodeYAML(t, mdDoc("", `{model: {id: m}, provider: {name: kaito, overrides: {a: {b: [1]}}}}`))
	require.JSONEq(t, `{"a":{"b":[1]}}`, string(md.Spec.Provider.Overrides))
}

func TestDecodeClusterCapabilitiesUnknownField(t *testing.T) {
	_, got := DecodeClusterCapabilities([]byte(`{"apiVersion":"airunway.ai/v1alpha1","kind":"ClusterCapabilities","metadata":{"name":"c"},"spec":{"providers":[{"name":"kaito","verison":"0.10.0"}]}}`))
	requireProblems(t, got, e("spec.providers[0].verison", "unknown field", "ClusterCapabilities schema"))
}

func ptrTo[T any](v T) *T { return &v }
