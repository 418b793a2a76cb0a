package dynamo

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// base is the upstream tests' MD: vllm, one GPU, explicitly on dynamo.
const base = "model: {id: meta-llama/Llama-2-7b-chat-hf}\nprovider: {name: dynamo}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}\n"

// gatewayCaps is a capability file that declares the Gateway API Inference
// Extension, which selects the Epp topology.
const gatewayCaps = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: gaie}
spec:
  providers:
  - {name: dynamo, version: "1.1.1"}
  gateway:
    inferencePoolVersion: inference.networking.k8s.io/v1
    gatewayAPIVersion: v1.5.1
    parentRef: {name: inference-gateway, namespace: gateway-system}
`

// opt adjusts a request after decoding, defaulting and validation.
type opt func(*providers.Request)

func withCaps(t *testing.T, doc string) opt {
	c, l := capabilities.Decode([]byte(doc))
	require.False(t, l.HasErrors(), "%v", l)
	r, l := capabilities.Resolve(c)
	require.False(t, l.HasErrors(), "%v", l)
	return func(req *providers.Request) {
		req.Caps = &r.ResolvedCapabilities
		req.Provider = r.Provider(hub.ProviderDynamo)
		req.GatewayEnabled = req.MD.GatewayEnabled(r.Gateway)
	}
}

func withGateway(t *testing.T) opt { return withCaps(t, gatewayCaps) }

func withEngine(e string) opt { return func(req *providers.Request) { req.Engine = e } }

// withOverrides sets overrides after validation, to reach the typed keys
// upstream reads (frontend.replicas, ...) that admission bans.
func withOverrides(js string) opt {
	return func(req *providers.Request) { req.MD.Spec.Provider.Overrides = json.RawMessage(js) }
}

func withVersion(version string, images map[string]string) opt {
	return func(req *providers.Request) {
		req.Provider = &hub.ResolvedProvider{Name: hub.ProviderDynamo, Version: version, Images: images}
	}
}

// request builds a Request from metadata and spec in YAML, decoded,
// defaulted and validated like the pipeline does.
func request(t *testing.T, meta, spec string, opts ...opt) *providers.Request {
	t.Helper()
	req := providertest.Request(providertest.Valid(t, meta, spec), hub.ProviderDynamo)
	for _, o := range opts {
		o(req)
	}
	return req
}

// rendered is one Render result: the DynamoGraphDeployment as a map and
// decoded into the package's own types, the other objects, the problems.
type rendered struct {
	obj    providers.Object
	dgd    *graphDeployment
	others []providers.Object
	l      diag.List
}

func (r *rendered) svc(t *testing.T, name string) *service {
	t.Helper()
	s := r.dgd.Spec.Services[name]
	require.NotNil(t, s, "service %s in %v", name, serviceNames(r.dgd))
	return s
}

func (r *rendered) other(t *testing.T, kind, name string) providers.Object {
	t.Helper()
	for _, o := range r.others {
		if o["kind"] == kind && dig(o, "metadata", "name") == name {
			return o
		}
	}
	require.Failf(t, "missing object", "%s %s", kind, name)
	return nil
}

func serviceNames(d *graphDeployment) []string {
	var names []string
	for k := range d.Spec.Services {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func render(t *testing.T, req *providers.Request) *rendered {
	t.Helper()
	objs, l := Provider{}.Render(req)
	require.False(t, l.HasErrors(), "%v", l)
	require.NotEmpty(t, objs)
	js, err := json.Marshal(objs[0])
	require.NoError(t, err)
	var d graphDeployment
	require.NoError(t, json.Unmarshal(js, &d))
	return &rendered{obj: objs[0], dgd: &d, others: objs[1:], l: l}
}

func renderSpec(t *testing.T, spec string, opts ...opt) *rendered {
	t.Helper()
	return render(t, request(t, "", spec, opts...))
}

// dig walks maps by key and lists by index; nil when a step is missing.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func warnings(l diag.List) map[string]string {
	out := map[string]string{}
	for _, p := range l {
		if p.Severity == diag.Warning {
			out[p.Field] = p.Message
		}
	}
	return out
}

func envNames(env []corev1.EnvVar) []string {
	var names []string
	for _, e := range env {
		names = append(names, e.Name)
	}
	return names
}
