package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// server is a Routable provider whose backend the test decides.
type server struct{ backend providers.Backend }

func (server) Name() string                                              { return "vllm" }
func (server) Check(*providers.Request) diag.List                        { return nil }
func (server) Render(*providers.Request) ([]providers.Object, diag.List) { return nil, nil }
func (s server) Backend(*providers.Request) providers.Backend            { return s.backend }

// opaque renders model servers but cannot say which pods serve.
type opaque struct{ server }

func (opaque) Backend() {}

var vllmBackend = server{providers.Backend{PodSelector: map[string]string{hub.LabelModelDeployment: "test-model"}, Port: 8000}}

const vllmSpec = "model: {id: Qwen/Qwen3-0.6B}\nresources: {gpu: {count: 1}}"

// request builds a Request for provider with the gateway capability gw
// (nil = none declared).
func request(t *testing.T, meta, spec, provider string, gw *hub.GatewayCapability) *providers.Request {
	t.Helper()
	return providertest.WithGateway(providertest.Request(providertest.Valid(t, meta, spec), provider), gw)
}

func gatewayCaps(poolVersion, release, channel string) *hub.GatewayCapability {
	return &hub.GatewayCapability{InferencePoolVersion: poolVersion, GatewayAPIVersion: release, Channel: channel,
		ParentRef: &hub.GatewayRef{Name: "inference-gateway", Namespace: "gateway-system"}}
}

var v1Caps = gatewayCaps("inference.networking.k8s.io/v1", "v1.5.1", "standard")

func kinds(objs []providers.Object) []string {
	var out []string
	for _, o := range objs {
		m := o["metadata"].(map[string]any)
		out = append(out, fmt.Sprintf("%s %s/%s", o["kind"], m["namespace"], m["name"]))
	}
	return out
}

func find(t *testing.T, objs []providers.Object, kind string) providers.Object {
	t.Helper()
	for _, o := range objs {
		if o["kind"] == kind {
			return o
		}
	}
	t.Fatalf("no %s among %v", kind, kinds(objs))
	return nil
}

// at walks a rendered object; an int steps into a list.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			require.True(t, ok, "%v is not an object at %q", v, k)
			v = m[k]
		case int:
			list, ok := v.([]any)
			require.True(t, ok, "%v is not a list at %d", v, k)
			require.Less(t, k, len(list))
			v = list[k]
		}
	}
	return v
}

func messages(l diag.List, sev diag.Severity) []string {
	var out []string
	for _, p := range l {
		if p.Severity == sev {
			out = append(out, p.Field+": "+p.Message)
		}
	}
	return out
}

func TestRenderObjectsPerPoolVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    []string
		check   func(t *testing.T, pool providers.Object)
	}{
		{
			version: "inference.networking.k8s.io/v1",
			check: func(t *testing.T, pool providers.Object) {
				require.Equal(t, "inference.networking.k8s.io/v1", pool["apiVersion"])
				require.Equal(t, map[string]any{"matchLabels": map[string]any{hub.LabelModelDeployment: "test-model"}}, at(t, pool, "spec", "selector"))
				require.Equal(t, []any{map[string]any{"number": int64(8000)}}, at(t, pool, "spec", "targetPorts"))
				require.Equal(t, map[string]any{"name": "test-model-epp", "port": map[string]any{"number": int64(9002)}}, at(t, pool, "spec", "endpointPickerRef"))
			},
		},
		{
			version: "inference.networking.x-k8s.io/v1alpha2",
			check: func(t *testing.T, pool providers.Object) {
				require.Equal(t, "inference.networking.x-k8s.io/v1alpha2", pool["apiVersion"])
				require.Equal(t, map[string]any{hub.LabelModelDeployment: "test-model"}, at(t, pool, "spec", "selector"))
				require.Equal(t, int64(8000), at(t, pool, "spec", "targetPortNumber"))
				require.Equal(t, map[string]any{"name": "test-model-epp", "portNumber": int64(9002)}, at(t, pool, "spec", "extensionRef"))
			},
		},
	} {
		t.Run(tc.version, func(t *testing.T) {
			req := request(t, "", vllmSpec, "vllm", gatewayCaps(tc.version, "v1.5.1", "standard"))
			objs, l := Render(req, vllmBackend)
			require.Empty(t, l)
			require.ElementsMatch(t, []string{
				"InferencePool default/test-model", "HTTPRoute default/test-model",
				"ServiceAccount default/test-model-epp", "Role default/test-model-epp", "RoleBinding default/test-model-epp",
				"ConfigMap default/test-model-epp", "Deployment default/test-model-epp", "Service default/test-model-epp",
			}, kinds(objs))
			tc.check(t, find(t, objs, "InferencePool"))
			group, _, _ := strings.Cut(tc.version, "/")
			require.Equal(t, map[string]any{"group": group, "kind": "InferencePool", "name": "test-model"}, at(t, find(t, objs, "HTTPRoute"), "spec", "rules", 0, "backendRefs", 0))
			role := find(t, objs, "Role")
			require.Contains(t, fmt.Sprint(at(t, role, "rules", 1)), "["+group+"] resources:[inferencepools", "the picker must be allowed to read its pool's API group")
			c := at(t, find(t, objs, "Deployment"), "spec", "template", "spec", "containers", 0)
			if group == PoolGroupV1Alpha2 {
				require.Equal(t, DefaultV1Alpha2EndpointPickerImage, at(t, c, "image"))
				require.Contains(t, fmt.Sprint(at(t, c, "args")), "--pool-group inference.networking.x-k8s.io")
			} else {
				require.Equal(t, DefaultEndpointPickerImage, at(t, c, "image"))
				require.NotContains(t, fmt.Sprint(at(t, c, "args")), "--pool-group")
			}
		})
	}
}

func TestHTTPRoute(t *testing.T) {
	req := request(t, "", vllmSpec, "vllm", v1Caps)
	objs, _ := Render(req, vllmBackend)
	route := find(t, objs, "HTTPRoute")
	require.Equal(t, "gateway.networking.k8s.io/v1", route["apiVersion"])
	require.Equal(t, []any{map[string]any{"name": "inference-gateway", "namespace": "gateway-system"}}, at(t, route, "spec", "parentRefs"))
	require.Equal(t, map[string]any{
		"path":    map[string]any{"type": "PathPrefix", "value": "/"},
		"headers": []any{map[string]any{"type": "Exact", "name": "X-Gateway-Model-Name", "value": "Qwen/Qwen3-0.6B"}},
	}, at(t, route, "spec", "rules", 0, "matches", 0))
	require.Equal(t, map[string]any{"request": "300s"}, at(t, route, "spec", "rules", 0, "timeouts"))
	require.Equal(t, "test-model", at(t, route, "metadata", "annotations", hub.AnnotationGeneratedFrom))
}

func TestRouteFieldsPerRelease(t *testing.T) {
	for _, tc := range []struct {
		release, channel string
		timeouts         bool
	}{
		{"v1.0.0", "standard", false},
		{"v1.1.0", "standard", false},
		{"v1.1.0", "", false},
		{"v1.0.0", "experimental", true},
		{"v1.2.0", "standard", true},
		{"v1.7.0", "standard", true},
	} {
		t.Run(tc.release+"-"+tc.channel, func(t *testing.T) {
			req := request(t, "", vllmSpec, "vllm", gatewayCaps("inference.networking.k8s.io/v1", tc.release, tc.channel))
			objs, l := Render(req, vllmBackend)
			rule := at(t, find(t, objs, "HTTPRoute"), "spec", "rules", 0).(map[string]any)
			_, has := rule["timeouts"]
			require.Equal(t, tc.timeouts, has)
			if tc.timeouts {
				require.Empty(t, l)
				return
			}
			require.Len(t, messages(l, diag.Warning), 1)
			require.Contains(t, messages(l, diag.Warning)[0], "without `spec.rules[*].timeouts`: Gateway API "+tc.release+" (standard channel")
			require.Contains(t, messages(l, diag.Warning)[0], "before v1.2.0")
		})
	}
}

func TestModelName(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		backend    providers.Backend
		caps       *hub.GatewayCapabilities
		want       string
		err        string
	}{
		{name: "model id", spec: vllmSpec, want: "Qwen/Qwen3-0.6B"},
		{name: "served name wins over the id", spec: "model: {id: Qwen/Qwen3-0.6B, servedName: qwen}\nresources: {gpu: {count: 1}}", want: "qwen"},
		{name: "gateway.modelName wins over everything", spec: "model: {id: Qwen/Qwen3-0.6B, servedName: qwen}\ngateway: {modelName: chat}\nresources: {gpu: {count: 1}}",
			backend: providers.Backend{ServedName: "rule"}, want: "chat"},
		{name: "served name the capability says the engine ignores", spec: "model: {id: Qwen/Qwen3-0.6B, servedName: qwen}\nresources: {gpu: {count: 1}}",
			caps: &hub.GatewayCapabilities{IgnoresServedName: true}, want: "Qwen/Qwen3-0.6B"},
		{name: "served name the rendered server never receives", spec: "model: {id: Qwen/Qwen3-0.6B, servedName: qwen}\nresources: {gpu: {count: 1}}",
			backend: providers.Backend{ServedName: "qwen3-0.6b", IgnoresServedName: true}, want: "qwen3-0.6b"},
		{name: "provider rule wins over the id", spec: vllmSpec, backend: providers.Backend{ServedName: "qwen3-0.6b"}, want: "qwen3-0.6b"},
		{name: "custom model with a served name", spec: "model: {source: custom, servedName: mine}\nresources: {gpu: {count: 1}}", want: "mine"},
		{name: "custom model without a name", spec: "model: {source: custom}\nresources: {gpu: {count: 1}}",
			err: "spec.gateway.modelName: must be set: the HTTPRoute matches requests by model name, and a \"custom\" model without `spec.model.id` or `spec.model.servedName`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := providertest.Valid(t, "", tc.spec)
			caps := tc.caps
			if caps == nil {
				caps = &hub.GatewayCapabilities{}
			}
			var l diag.List
			got := modelName(md, caps, tc.backend, &l)
			if tc.err != "" {
				require.Len(t, messages(l, diag.Error), 1)
				require.Contains(t, messages(l, diag.Error)[0], tc.err)
				return
			}
			require.Empty(t, l)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestNothingRendered(t *testing.T) {
	for _, tc := range []struct {
		name, meta, spec, provider string
		caps                       *hub.GatewayCapability
		p                          providers.Provider
		want                       []string
	}{
		{name: "no gateway declared", spec: vllmSpec, provider: "vllm", p: vllmBackend},
		{name: "no gateway declared but enabled", spec: vllmSpec + "\ngateway: {enabled: true}", provider: "vllm", p: vllmBackend,
			want: []string{"warning spec.gateway.enabled: is true, but the capability file declares no Gateway API Inference Extension"}},
		{name: "disabled", spec: vllmSpec + "\ngateway: {enabled: false}", provider: "vllm", caps: v1Caps, p: vllmBackend},
		{name: "Dynamo mocker", meta: "{name: test-model, namespace: default, annotations: {airunway.ai/dynamo-test-backend: mocker}}",
			spec: "model: {id: Qwen/Qwen3-0.6B}\nprovider: {name: dynamo}\nresources: {gpu: {count: 1}}", provider: "dynamo", caps: v1Caps, p: vllmBackend,
			want: []string{"info spec.gateway: no gateway objects: the Dynamo mocker serves no real model"}},
		{name: "provider without a backend", spec: vllmSpec, provider: "vllm", caps: v1Caps, p: opaque{},
			want: []string{"error spec.gateway: the vllm provider neither manages its own InferencePool nor tells which pods an InferencePool should select"}},
		{name: "no gateway declared but enabled, provider-managed pool", spec: "model: {id: Qwen/Qwen3-0.6B}\nprovider: {name: dynamo}\nresources: {gpu: {count: 1}}\ngateway: {enabled: true}", provider: "dynamo", p: vllmBackend},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, l := Render(request(t, tc.meta, tc.spec, tc.provider, tc.caps), tc.p)
			require.Empty(t, objs)
			var got []string
			for _, p := range l {
				got = append(got, fmt.Sprintf("%s %s: %s", p.Severity, p.Field, p.Message))
			}
			require.Len(t, got, len(tc.want))
			for i := range tc.want {
				require.True(t, strings.HasPrefix(got[i], tc.want[i]), "%q does not start with %q", got[i], tc.want[i])
			}
		})
	}
}

func TestHTTPRouteRefNeedsNoModelName(t *testing.T) {
	objs, l := Render(request(t, "", "model: {source: custom}\nimage: registry.example.com/server:1\nresources: {gpu: {count: 1}}\ngateway: {httpRouteRef: my-route}", "vllm", v1Caps), vllmBackend)
	require.Empty(t, l)
	require.Contains(t, kinds(objs), "InferencePool default/test-model")
	require.NotContains(t, kinds(objs), "HTTPRoute default/test-model")
}

func TestHTTPRouteRefSkipsTheRoute(t *testing.T) {
	objs, l := Render(request(t, "", vllmSpec+"\ngateway: {httpRouteRef: my-route}", "vllm", v1Caps), vllmBackend)
	require.Empty(t, l)
	require.NotContains(t, kinds(objs), "HTTPRoute default/test-model")
	require.Contains(t, kinds(objs), "InferencePool default/test-model")
}

func TestProviderManagedPool(t *testing.T) {
	dynamo := "model: {id: Qwen/Qwen3-0.6B}\nresources: {gpu: {count: 1}}\nprovider: {name: dynamo}"
	t.Run("same namespace", func(t *testing.T) {
		objs, l := Render(request(t, "", dynamo, "dynamo", v1Caps), vllmBackend)
		require.Empty(t, l)
		require.Equal(t, []string{"HTTPRoute default/test-model"}, kinds(objs))
		require.Equal(t, map[string]any{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "test-model-pool"},
			at(t, objs[0], "spec", "rules", 0, "backendRefs", 0))
	})
	t.Run("another namespace gets a ReferenceGrant", func(t *testing.T) {
		req := request(t, "", dynamo, "dynamo", v1Caps)
		setPoolPattern(req, "{namespace}-{name}-pool", "dynamo-system")
		objs, l := Render(req, vllmBackend)
		require.Empty(t, l)
		require.ElementsMatch(t, []string{"HTTPRoute default/test-model", "ReferenceGrant dynamo-system/default-test-model-pool-referencegrant"}, kinds(objs))
		require.Equal(t, "dynamo-system", at(t, find(t, objs, "HTTPRoute"), "spec", "rules", 0, "backendRefs", 0, "namespace"))
		grant := find(t, objs, "ReferenceGrant")
		require.Equal(t, []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "default"}}, at(t, grant, "spec", "from"))
		require.Equal(t, []any{map[string]any{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "default-test-model-pool"}}, at(t, grant, "spec", "to"))
	})
	t.Run("Dynamo creates v1 pools only", func(t *testing.T) {
		objs, l := Render(request(t, "", dynamo, "dynamo", gatewayCaps("inference.networking.x-k8s.io/v1alpha2", "v1.5.1", "standard")), vllmBackend)
		require.Empty(t, objs)
		require.Len(t, messages(l, diag.Error), 1)
		require.Contains(t, messages(l, diag.Error)[0], "spec.gateway.enabled: the dynamo provider's operator creates its InferencePool \"test-model-pool\" as inference.networking.k8s.io/v1, but the capability file declares inference.networking.x-k8s.io/v1alpha2 pools")
	})
	t.Run("another namespace needs the model's namespace", func(t *testing.T) {
		req := request(t, "{name: test-model}", dynamo, "dynamo", v1Caps)
		setPoolPattern(req, "{name}-pool", "dynamo-system")
		objs, l := Render(req, vllmBackend)
		require.Empty(t, objs)
		require.Len(t, messages(l, diag.Error), 1)
		require.Contains(t, messages(l, diag.Error)[0], "metadata.namespace: must be set: the InferencePool \"test-model-pool\" of the dynamo provider lives in namespace \"dynamo-system\"")
	})
}

// setPoolPattern overrides the provider's gateway capability for the
// request's engine, as a capability file's `engines` can.
func setPoolPattern(req *providers.Request, name, namespace string) {
	engines := append([]hub.EngineCapability(nil), req.Provider.Engines...)
	for i := range engines {
		if engines[i].Name == req.Engine {
			engines[i].Gateway = &hub.GatewayCapabilities{ManagesInferencePool: true, InferencePoolNamePattern: name, InferencePoolNamespace: namespace}
		}
	}
	req.Provider.Engines = engines
}

func TestEndpointPicker(t *testing.T) {
	objs, _ := Render(request(t, "", vllmSpec, "vllm", v1Caps), vllmBackend)
	dep := find(t, objs, "Deployment")
	pod := at(t, dep, "spec", "template", "metadata", "labels").(map[string]any)
	require.NotContains(t, pod, hub.LabelModelDeployment, "the pool would route requests to its own picker")
	require.Equal(t, at(t, dep, "spec", "selector", "matchLabels"), pod)
	require.Equal(t, pod, at(t, find(t, objs, "Service"), "spec", "selector"))
	c := at(t, dep, "spec", "template", "spec", "containers", 0)
	require.Equal(t, DefaultEndpointPickerImage, at(t, c, "image"))
	require.Equal(t, []any{"--pool-name", "test-model", "--pool-namespace", "$(NAMESPACE)", "--zap-encoder", "json", "--config-file", "/config/default-plugins.yaml", "--tracing=false"}, at(t, c, "args"))
	require.Equal(t, "Recreate", at(t, dep, "spec", "strategy", "type"))
	require.Equal(t, MinimalEndpointPickerConfig, at(t, find(t, objs, "ConfigMap"), "data", "default-plugins.yaml"))
	require.Equal(t, "kubernetes.io/h2c", at(t, find(t, objs, "Service"), "spec", "ports", 0, "appProtocol"))
}

func TestEndpointPickerSettings(t *testing.T) {
	cluster := &hub.EndpointPicker{Image: "cluster/epp:1", ConfigData: "cluster-config"}
	for _, tc := range []struct {
		name                string
		cluster, provider   *hub.EndpointPicker
		wantImage, wantConf string
	}{
		{"defaults", nil, nil, DefaultEndpointPickerImage, MinimalEndpointPickerConfig},
		{"cluster-wide", cluster, nil, "cluster/epp:1", "cluster-config"},
		{"provider wins", cluster, &hub.EndpointPicker{Image: "llm-d/scheduler:1", ConfigData: "llm-d-config"}, "llm-d/scheduler:1", "llm-d-config"},
		{"provider image only", nil, &hub.EndpointPicker{Image: "llm-d/scheduler:1"}, "llm-d/scheduler:1", MinimalEndpointPickerConfig},
		{"provider config only", cluster, &hub.EndpointPicker{ConfigData: "llm-d-config"}, "cluster/epp:1", "llm-d-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := &plan{caps: &hub.GatewayCapability{EndpointPicker: tc.cluster}, engine: &hub.GatewayCapabilities{EndpointPicker: tc.provider}}
			image, conf := pl.pickerSettings()
			require.Equal(t, tc.wantImage, image)
			require.Equal(t, tc.wantConf, conf)
		})
	}
}

// TestLongNameShortensThePicker: `<md>-epp` past 63 characters is cut with
// a hash; every object and reference uses the one short name, and two
// models that differ only past the cut get different pickers.
func TestLongNameShortensThePicker(t *testing.T) {
	pickerNames := func(name string) map[string]bool {
		objs, l := Render(request(t, "{name: "+name+", namespace: default}", vllmSpec, "vllm", v1Caps), vllmBackend)
		require.Empty(t, messages(l, diag.Error))
		names := map[string]bool{}
		for _, o := range objs {
			if n := at(t, o, "metadata", "name").(string); strings.HasSuffix(n, "-epp") {
				names[n] = true
			}
		}
		pool := find(t, objs, "InferencePool")
		names[at(t, pool, "spec", "endpointPickerRef", "name").(string)] = true
		binding := find(t, objs, "RoleBinding")
		names[at(t, binding, "roleRef", "name").(string)] = true
		names[at(t, binding, "subjects", 0, "name").(string)] = true
		return names
	}
	a := pickerNames(strings.Repeat("a", 59) + "1")
	b := pickerNames(strings.Repeat("a", 59) + "2")
	require.Len(t, a, 1, "one name everywhere: %v", a)
	require.Len(t, b, 1)
	require.NotEqual(t, a, b)
	for n := range a {
		require.Len(t, n, 63)
		require.Regexp(t, `^a{50}-[0-9a-f]{8}-epp$`, n)
		require.Empty(t, utilvalidation.IsDNS1035Label(n))
	}
	require.Equal(t, map[string]bool{strings.Repeat("a", 59) + "-epp": true}, pickerNames(strings.Repeat("a", 59)), "a name that fits is kept")
}

func TestNameStartingWithADigitCannotNameThePicker(t *testing.T) {
	objs, l := Render(request(t, "{name: 1model, namespace: default}", vllmSpec, "vllm", v1Caps), vllmBackend)
	require.Empty(t, objs)
	require.Equal(t, []string{`metadata.name: "1model" cannot name the endpoint picker's Service "1model-epp": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`}, messages(l, diag.Error))
}

// TestNoNamespace: a model whose namespace kustomize sets later renders no
// namespace anywhere, so every object follows the namespace it is applied in.
func TestNoNamespace(t *testing.T) {
	objs, l := Render(request(t, "{name: test-model}", vllmSpec, "vllm", v1Caps), vllmBackend)
	require.Empty(t, l)
	require.Len(t, objs, 8)
	for _, o := range objs {
		require.NotContains(t, o["metadata"], "namespace", "%s", o["kind"])
	}
	require.NotContains(t, at(t, find(t, objs, "RoleBinding"), "subjects", 0), "namespace")
	require.NotContains(t, at(t, find(t, objs, "HTTPRoute"), "spec", "rules", 0, "backendRefs", 0), "namespace")
}

// TestGatewayFieldsWithoutAGateway: on a cluster whose capability file
// declares no gateway, a model's own Gateway (v1alpha2
// `spec.gateway.parentRef`) is an error naming it, since a render without
// its route would look like a success; the fields that only tune routing
// are warned about; `enabled: false` and the mocker ask for nothing.
func TestGatewayFieldsWithoutAGateway(t *testing.T) {
	parent := &hub.GatewayRef{Name: "inference-gw"}
	off := false
	for _, tc := range []struct {
		name, meta, spec string
		gw               hub.GatewaySpec
		want             []string
	}{
		{name: "parentRef", gw: hub.GatewaySpec{ParentRef: parent},
			want: []string{"error spec.gateway.parentRef: names the Gateway \"inference-gw\" (in the model's namespace), but the capability file declares no Gateway API Inference Extension (`spec.gateway`), so no HTTPRoute to it can be rendered; declare the cluster's gateway in the capability file (`airunway-render capabilities discover` writes it), or set `spec.gateway.enabled: false` for a cluster that serves the model without one"}},
		{name: "parentRef in another namespace", gw: hub.GatewaySpec{ParentRef: &hub.GatewayRef{Name: "gw", Namespace: "gateway-system"}},
			want: []string{"error spec.gateway.parentRef: names the Gateway \"gw\" in namespace \"gateway-system\", but"}},
		{name: "parentRef, disabled", gw: hub.GatewaySpec{ParentRef: parent, Enabled: &off}},
		{name: "parentRef, mocker", meta: "{name: test-model, namespace: default, annotations: {airunway.ai/dynamo-test-backend: mocker}}",
			spec: "model: {id: Qwen/Qwen3-0.6B}\nprovider: {name: dynamo}\nresources: {gpu: {count: 1}}", gw: hub.GatewaySpec{ParentRef: parent}},
		{name: "parentRef, provider-managed pool", spec: "model: {id: Qwen/Qwen3-0.6B}\nprovider: {name: dynamo}\nresources: {gpu: {count: 1}}", gw: hub.GatewaySpec{ParentRef: parent},
			want: []string{"error spec.gateway.parentRef: names the Gateway \"inference-gw\""}},
		{name: "httpRouteRef", gw: hub.GatewaySpec{HTTPRouteRef: "my-route"},
			want: []string{"warning spec.gateway.httpRouteRef: is ignored: the capability file declares no Gateway API Inference Extension (`spec.gateway`), so no InferencePool is rendered for HTTPRoute \"my-route\" to send requests to"}},
		{name: "modelName", gw: hub.GatewaySpec{ModelName: "qwen"},
			want: []string{"warning spec.gateway.modelName: is ignored: the capability file declares no Gateway API Inference Extension (`spec.gateway`), so no HTTPRoute matches it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, provider := vllmSpec, "vllm"
			if tc.spec != "" {
				spec, provider = tc.spec, "dynamo"
			}
			req := request(t, tc.meta, spec, provider, nil)
			req.MD.Spec.Gateway = &tc.gw
			objs, l := Render(req, vllmBackend)
			require.Empty(t, objs)
			require.Len(t, l, len(tc.want), "%v", l)
			for i, p := range l {
				got := fmt.Sprintf("%s %s: %s", p.Severity, p.Field, p.Message)
				require.True(t, strings.HasPrefix(got, tc.want[i]), "%q does not start with %q", got, tc.want[i])
			}
		})
	}
}

// setAPIFormats declares the API formats of the request's engine, as a
// capability file's `engines` can.
func setAPIFormats(req *providers.Request, formats ...string) {
	engines := append([]hub.EngineCapability(nil), req.Provider.Engines...)
	for i := range engines {
		if engines[i].Name == req.Engine {
			engines[i].APIFormats = formats
		}
	}
	req.Provider.Engines = engines
}

// TestRouteByAPIFormat: the route matches every path for Chat Completions
// (as upstream routes every format) and each other declared format's own
// prefix, which Gateway API ranks above "/"; a format the engine does not
// declare gets no match of its own, and without Chat Completions the
// route matches only its formats' paths.
func TestRouteByAPIFormat(t *testing.T) {
	for _, tc := range []struct {
		formats []string
		paths   []string
	}{
		{nil, []string{"/"}},
		{[]string{hub.APIFormatOpenAIChat}, []string{"/"}},
		{[]string{hub.APIFormatAnthropicMessages, hub.APIFormatOpenAIChat, hub.APIFormatOpenAIResponses}, []string{"/", "/v1/responses", "/v1/messages"}},
		{[]string{hub.APIFormatAnthropicMessages}, []string{"/v1/messages"}},
	} {
		req := request(t, "", vllmSpec, "vllm", v1Caps)
		req.MD.Spec.Adapters = []hub.Adapter{{Name: "sql", Source: "hf://org/sql-lora"}}
		setAPIFormats(req, tc.formats...)
		objs, l := Render(req, vllmBackend)
		require.Empty(t, messages(l, diag.Error))
		matches := at(t, find(t, objs, "HTTPRoute"), "spec", "rules", 0, "matches").([]any)
		var got []string
		for _, m := range matches {
			got = append(got, at(t, m, "headers", 0, "value").(string)+" "+at(t, m, "path", "value").(string))
		}
		var want []string
		for _, name := range []string{"Qwen/Qwen3-0.6B", "sql"} {
			for _, p := range tc.paths {
				want = append(want, name+" "+p)
			}
		}
		require.Equal(t, want, got, "%v", tc.formats)
	}
}

// TestRouteByAPIFormatFallsBack: where a path per format would give the
// route more matches than the Gateway API release allows, it matches
// every path, as upstream, with a warning, instead of refusing the model.
func TestRouteByAPIFormatFallsBack(t *testing.T) {
	req := request(t, "", vllmSpec, "vllm", gatewayCaps("inference.networking.k8s.io/v1", "v1.1.0", "standard"))
	req.MD.Spec.Adapters = []hub.Adapter{{Name: "a", Source: "hf://org/a"}, {Name: "b", Source: "hf://org/b"}}
	objs, l := Render(req, vllmBackend)
	require.Empty(t, messages(l, diag.Error))
	require.Len(t, messages(l, diag.Warning), 2, "this one, and the timeouts v1.1.0 does not serve")
	require.Contains(t, messages(l, diag.Warning)[0], "spec.adapters: the HTTPRoute matches the 3 model names on every path, not on each API format's own (openai-chat, openai-responses, anthropic-messages): the HTTPRoute would have 9 matches in one rule (3 model names × 3 paths), more than the 8 Gateway API v1.1.0 allows")
	matches := at(t, find(t, objs, "HTTPRoute"), "spec", "rules", 0, "matches").([]any)
	require.Len(t, matches, 3)
	for _, m := range matches {
		require.Equal(t, "/", at(t, m, "path", "value"))
	}
}
