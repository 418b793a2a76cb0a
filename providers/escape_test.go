package providers_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/render"
)

// kubeletExpand applies the kubelet's variable expansion to s, as it
// rewrites a container's `command`, `args` and `env[].value` before the
// container starts. The rules are Kubernetes' own, documented on the
// Container and EnvVar fields ("Variable references $(VAR_NAME) are
// expanded using the container's environment. If a variable cannot be
// resolved, the reference in the input string will be unchanged. Double $$
// are reduced to a single $, which allows for escaping the $(VAR_NAME)
// syntax") and implemented in kubernetes/third_party/forked/golang/expansion
// (Expand, tryReadVariableName):
//   - `$$` is one `$`, and the scan goes on after it;
//   - `$(` starts a reference that ends at the first `)`; the name between
//     is looked up, and an unknown name keeps `$(name)` as written;
//   - `$(` with no `)` after it is kept, and the scan goes on after the `(`;
//   - any other `$`, a `$` last in the string included, is kept.
//
// lookup reports a variable's value and whether the environment defines it.
func kubeletExpand(s string, lookup func(name string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// everyName is an environment that defines every name, as NAME's value
// in brackets: the worst case for an escaped string.
func everyName(name string) (string, bool) { return "[" + name + "]", true }

// TestKubeletExpandHelper holds the helper to the cases of Kubernetes'
// expansion tests, so the tests below rest on the real rules.
func TestKubeletExpandHelper(t *testing.T) {
	env := map[string]string{"VAR_A": "A", "VAR_B": "B", "VAR_EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	for in, want := range map[string]string{
		"$(VAR_A)":          "A",
		"___$(VAR_B)___":    "___B___",
		"$(VAR_A)-$(VAR_B)": "A-B",
		"$(VAR_EMPTY)":      "",
		"$(UNKNOWN)":        "$(UNKNOWN)",
		"$()":               "$()",
		"$$(VAR_A)":         "$(VAR_A)",
		"$$$(VAR_A)":        "$A",
		"$$$$(VAR_A)":       "$$(VAR_A)",
		"$(VAR_A":           "$(VAR_A",
		"$(VAR_A$(VAR_B)":   "$(VAR_A$(VAR_B)",
		"$VAR_A":            "$VAR_A",
		"f$$VAR_A":          "f$VAR_A",
		"$":                 "$",
		"$$":                "$",
		"$$$":               "$$",
		"a$":                "a$",
		"$é":                "$é",
	} {
		require.Equal(t, want, kubeletExpand(in, lookup), "%q", in)
	}
}

// TestEscapeExpansionRoundTrip: whatever the string and whatever the
// environment defines, the kubelet turns the escaped string back into it.
func TestEscapeExpansionRoundTrip(t *testing.T) {
	inputs := []string{"", "$", "$$", "$(", "$()", "$(HF_TOKEN)", "$$(HF_TOKEN)", "a$", "$(A", "x$(A)y$$z$", "$é$(é)"}
	rng := rand.New(rand.NewSource(34))
	alphabet := []string{"$", "(", ")", "A", "_", "é", " "}
	for range 2000 {
		var b strings.Builder
		for range rng.Intn(12) {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, s := range inputs {
		require.Equal(t, s, kubeletExpand(providers.EscapeExpansion(s), everyName), "%q", s)
	}
	require.Equal(t, []string{"a$$b", "c"}, providers.EscapeExpansionAll([]string{"a$b", "c"}))
	require.Nil(t, providers.EscapeExpansionAll(nil))
}

// The user's strings of the table below: each carries a reference to the
// token variable and a `$$`, which the kubelet would turn into the token
// and a single `$` if they reached it unescaped.
const (
	userID      = "org/model-$(HF_TOKEN)-$$-id"
	userServed  = "served-$(HF_TOKEN)-$$"
	userArg     = "tok-$(HF_TOKEN)-$$"
	userExtra   = "--chat-template=$(HF_TOKEN)-$$-extra"
	userEnv     = "$(HF_TOKEN)-$$-env"
	userMount   = "/models/$(HF_TOKEN)-$$-cache"
	userRouter  = "kv-$(HF_TOKEN)-$$"
	userGGUFURL = "https://example.com/$(HF_TOKEN)-$$.gguf"

	// tokenValue is the Secret's value in the simulated containers.
	tokenValue = "SECRET-HF-TOKEN-VALUE"
)

// testCaps declares every provider, at releases that serve every variant
// below (Dynamo 1.4: LoRA on disaggregated workers), with or without the
// Gateway API Inference Extension.
func testCaps(t *testing.T, gateway bool) *capabilities.Resolved {
	t.Helper()
	doc := `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: escape-test}
spec:
  providers:
  - {name: dynamo, version: "1.4.0"}
  - {name: kaito, version: "0.10.0"}
  - {name: kuberay, version: "1.3.0"}
  - {name: llmd, version: "0.6.0"}
  - {name: vllm, images: {vllm: "vllm/vllm-openai:v0.11.0"}}
  nodePools:
  - {name: gpu, selector: {nvidia.com/gpu.present: "true"}, gpu: {resourceName: nvidia.com/gpu}}
  - {name: cpu, selector: {kubernetes.io/os: linux}}
`
	if gateway {
		doc += `  gateway:
    inferencePoolVersion: inference.networking.k8s.io/v1
    gatewayAPIVersion: v1.5.1
    channel: standard
    parentRef: {name: inference-gateway, namespace: gateway-system}
`
	}
	c, l := capabilities.Decode([]byte(doc))
	require.False(t, l.HasErrors(), "%v", l)
	r, l := capabilities.Resolve(c)
	require.False(t, l.HasErrors(), "%v", l)
	return r
}

// model is a v1alpha2 ModelDeployment whose every user string that a
// container receives holds `$(HF_TOKEN)` and `$$`; extra is appended to
// its spec (lines indented two spaces).
func model(annotations, extra string) string {
	return `apiVersion: airunway.ai/v1alpha2
kind: ModelDeployment
metadata: {name: m, namespace: models` + annotations + `}
spec:
  model:
    id: "` + userID + `"
    servedName: "` + userServed + `"
    storage:
      volumes:
      - {name: cache, purpose: modelCache, size: 10Gi, mountPath: "` + userMount + `"}
  secrets: {huggingFaceToken: hf-token}
  env:
  - {name: GREETING, value: "` + userEnv + `"}
` + extra
}

const (
	gpu1     = "  resources: {gpu: {count: 1}}\n"
	userArgs = "    args: {tokenizer: \"" + userArg + "\"}\n    extraArgs: [\"" + userExtra + "\"]\n"
	adapters = "  adapters:\n  - {name: sql, source: \"hf://my-org/sql-lora\"}\n"
	disagg   = "  serving: {mode: disaggregated}\n  scaling:\n    prefill: {replicas: 1, gpu: {count: 1}}\n    decode: {replicas: 1, gpu: {count: 1}}\n"
)

func engine(typ string) string { return "  engine:\n    type: " + typ + "\n" + userArgs }

func provider(name string) string { return "  provider: {name: " + name + "}\n" }

// literalCase renders one model; want are the user's strings some
// container must receive exactly as written, wantFrontend those of
// Dynamo's standalone Frontend, which a gateway replaces by the Epp, and
// wantServe those a RayService's Serve config must hold as written (Ray
// reads it; the kubelet never expands it).
type literalCase struct {
	name, yaml   string
	want         []string
	wantFrontend []string
	wantServe    []string
}

func literalCases() []literalCase {
	all := []string{userID, userServed, userArg, userExtra, userEnv}
	// vLLM's --lora-modules name the base model by its served name.
	loraBase := `"base_model_name":"` + userServed + `"`
	// Dynamo's workers and download Job also get the model cache's mount
	// path, as HF_HOME.
	dynamo := append(slices.Clone(all), userMount)
	// KubeRay's containers get the env; the model, its name and the
	// engine arguments go into the Serve config, extraArgs' as the value
	// of its flag.
	serve := []string{userID, userServed, userArg, strings.TrimPrefix(userExtra, "--chat-template=")}
	llamaCpp := "  engine: {type: llamacpp, image: \"llama:1\"}\n"
	llamaCppURL := "  engine: {type: llamacpp, image: \"llama:1\", args: {ggufUrl: \"" + userGGUFURL + "\"}}\n"
	return []literalCase{
		{name: "vllm", yaml: model("", provider("vllm")+engine("vllm")+gpu1), want: all},
		{name: "vllm lora", yaml: model("", provider("vllm")+engine("vllm")+gpu1+adapters), want: append(slices.Clone(all), loraBase)},
		{name: "llmd", yaml: model("", provider("llmd")+engine("vllm")+gpu1), want: all},
		{name: "llmd disaggregated lora", yaml: model("", provider("llmd")+engine("vllm")+disagg+adapters), want: append(slices.Clone(all), loraBase)},
		{name: "dynamo with router mode", yaml: model("", "  provider: {name: dynamo, overrides: {routerMode: \""+userRouter+"\"}}\n"+engine("vllm")+gpu1),
			want: dynamo, wantFrontend: []string{userRouter}},
		{name: "dynamo disaggregated lora", yaml: model("", provider("dynamo")+engine("vllm")+disagg+adapters), want: dynamo},
		{name: "dynamo sglang", yaml: model("", provider("dynamo")+engine("sglang")+gpu1), want: dynamo},
		{name: "dynamo mocker", yaml: model(", annotations: {airunway.ai/dynamo-test-backend: mocker}", provider("dynamo")+"  engine: {type: vllm}\n"+gpu1),
			want: []string{userID, userServed, userEnv, userMount}},
		{name: "kuberay", yaml: model("", provider("kuberay")+engine("vllm")+gpu1), want: []string{userEnv}, wantServe: serve},
		{name: "kuberay disaggregated", yaml: model("", provider("kuberay")+engine("vllm")+disagg), want: []string{userEnv}, wantServe: serve},
		{name: "kaito llama.cpp", yaml: model("", provider("kaito")+llamaCpp+gpu1), want: []string{"huggingface://" + userID, userEnv}},
		{name: "kaito llama.cpp gguf url", yaml: model("", provider("kaito")+llamaCppURL+gpu1), want: []string{userGGUFURL, userEnv}},
	}
}

// TestUserStringsReachContainersLiterally renders, through the whole
// pipeline, a model whose strings all hold `$(HF_TOKEN)` and `$$`, for
// every provider and variant, with and without a gateway. In every
// container of the output, after the kubelet's expansion with the token
// Secret in the environment from the start (as Dynamo's and the download
// Job's `envFrom` put it): no string but HF_TOKEN's own holds the token,
// each of the user's strings arrives as written, and the only variable
// the kubelet looks up is the endpoint picker's deliberate `$(NAMESPACE)`.
func TestUserStringsReachContainersLiterally(t *testing.T) {
	for _, gateway := range []bool{false, true} {
		caps := testCaps(t, gateway)
		for _, tc := range literalCases() {
			t.Run(fmt.Sprintf("%s/gateway=%v", tc.name, gateway), func(t *testing.T) {
				items, err := kio.FromBytes([]byte(tc.yaml))
				require.NoError(t, err)
				res := render.Render(items, render.Options{Capabilities: caps})
				require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
				require.Equal(t, []string{"spec.env[0].value"}, literalEnvWarnings(res.Problems), "the literal spec.env value is warned about once")

				var seen []string
				serveConfigs := ""
				looked := map[string]bool{}
				for _, item := range res.Items[1:] {
					obj, err := item.Map()
					require.NoError(t, err)
					for _, c := range containers(obj) {
						seen = append(seen, c.expand(t, looked)...)
					}
					if config, ok, _ := unstructured.NestedString(obj, "spec", "serveConfigV2"); ok {
						var parsed any
						require.NoError(t, yaml.Unmarshal([]byte(config), &parsed))
						data, err := json.Marshal(parsed)
						require.NoError(t, err)
						serveConfigs += string(data)
					}
				}
				for _, want := range tc.wantServe {
					require.Contains(t, serveConfigs, want, "the Serve config holds the user's string as written")
				}
				for _, s := range seen {
					require.NotContains(t, s, tokenValue, "a user string let the kubelet substitute the token")
				}
				want := tc.want
				if !gateway {
					want = append(slices.Clone(want), tc.wantFrontend...)
				}
				for _, want := range want {
					require.True(t, slices.ContainsFunc(seen, func(s string) bool { return strings.Contains(s, want) }),
						"no container receives %q as written; they receive %q", want, seen)
				}
				delete(looked, "NAMESPACE")
				require.Empty(t, looked, "the kubelet would look these variables up in rendered strings")
			})
		}
	}
}

// TestEndpointPickerNamespaceStillExpands: escaping stops at the user's
// strings; the picker's own `$(NAMESPACE)` still reaches the kubelet.
func TestEndpointPickerNamespaceStillExpands(t *testing.T) {
	items, err := kio.FromBytes([]byte(literalCases()[0].yaml))
	require.NoError(t, err)
	res := render.Render(items, render.Options{Capabilities: testCaps(t, true)})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	looked := map[string]bool{}
	for _, item := range res.Items[1:] {
		obj, err := item.Map()
		require.NoError(t, err)
		for _, c := range containers(obj) {
			c.expand(t, looked)
		}
	}
	require.Equal(t, map[string]bool{"NAMESPACE": true}, looked)
}

func literalEnvWarnings(l diag.List) []string {
	var fields []string
	for _, p := range l {
		if p.Severity == diag.Warning && strings.Contains(p.Message, "`spec.env` values are literal") {
			fields = append(fields, p.Field)
		}
	}
	return fields
}

// container is a map of a rendered object that the kubelet, or an
// operator on its way to the kubelet, reads as a container: it has
// `command`, `args` or `env` (Dynamo's mainContainer and frontendSidecar
// included).
type container map[string]any

// containers finds every container in obj, at any depth.
func containers(v any) []container {
	var out []container
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["args"].([]any); ok {
			out = append(out, container(t))
		} else if _, ok := t["command"].([]any); ok {
			out = append(out, container(t))
		} else if _, ok := t["env"].([]any); ok {
			out = append(out, container(t))
		}
		for _, e := range t {
			out = append(out, containers(e)...)
		}
	case []any:
		for _, e := range t {
			out = append(out, containers(e)...)
		}
	}
	return out
}

// expand returns what the process in the container receives: its env
// values in order, each expanded against the variables before it and the
// token (which Dynamo's and the download Job's envFrom define first), then
// its command and args, expanded against the whole environment. Variables
// looked up are recorded in looked; HF_TOKEN's own value is left out.
func (c container) expand(t *testing.T, looked map[string]bool) []string {
	t.Helper()
	env := map[string]string{providers.HFTokenEnv: tokenValue}
	lookup := func(name string) (string, bool) {
		looked[name] = true
		v, ok := env[name]
		return v, ok
	}
	var out []string
	entries, _ := c["env"].([]any)
	for _, e := range entries {
		m, ok := e.(map[string]any)
		require.True(t, ok, "env entry %v", e)
		name, _ := m["name"].(string)
		if from, ok := m["valueFrom"].(map[string]any); ok {
			if _, secret := from["secretKeyRef"]; secret {
				env[name] = tokenValue
			} else {
				env[name] = "value-of-" + name
			}
			continue
		}
		value, _ := m["value"].(string)
		env[name] = kubeletExpand(value, lookup)
		out = append(out, env[name])
	}
	for _, key := range []string{"command", "args"} {
		tokens, _ := c[key].([]any)
		for _, tok := range tokens {
			s, ok := tok.(string)
			require.True(t, ok, "%s token %v", key, tok)
			out = append(out, kubeletExpand(s, lookup))
		}
	}
	return out
}

// TestUserEnvVar: a value is escaped, a `valueFrom` entry loses its value
// (the API server refuses both) and keeps its source.
func TestUserEnvVar(t *testing.T) {
	from := &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}
	require.Equal(t, corev1.EnvVar{Name: "A", Value: "$$(HF_TOKEN)$$$$"}, providers.UserEnvVar(corev1.EnvVar{Name: "A", Value: "$(HF_TOKEN)$$"}))
	require.Equal(t, corev1.EnvVar{Name: "B", ValueFrom: from}, providers.UserEnvVar(corev1.EnvVar{Name: "B", Value: "$(X)", ValueFrom: from}))
}

// TestWarnLiteralEnv warns about the values that hold `$(` (a reference,
// closed or not: its author meant one) or `$$`, never about a lone `$`
// or a `valueFrom` entry.
func TestWarnLiteralEnv(t *testing.T) {
	md := &hub.ModelDeployment{Spec: hub.ModelDeploymentSpec{Env: []corev1.EnvVar{
		{Name: "PLAIN", Value: "$HOME and $1"},
		{Name: "REF", Value: "x$(HF_TOKEN)"},
		{Name: "ESCAPE", Value: "a$$b"},
		{Name: "FROM", Value: "$(HF_TOKEN)", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "OPEN", Value: "$(unclosed"},
	}}}
	var l diag.List
	providers.WarnLiteralEnv(md, &l)
	require.Equal(t, []string{"spec.env[1].value", "spec.env[2].value", "spec.env[4].value"}, literalEnvWarnings(l))
}
