package capabilities

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/diag"
)

// want is one expected problem: exact field path and phrases of its message.
type want struct {
	field string
	msg   []string
}

func e(field string, msg ...string) want { return want{field, msg} }

// requireErrors asserts that got holds exactly the wanted errors (in any
// order) and no other problem of any severity.
func requireErrors(t *testing.T, got diag.List, wants ...want) {
	t.Helper()
	used := make([]bool, len(got))
	var missing []string
	for _, x := range wants {
		found := false
		for i, p := range got {
			if used[i] || p.Severity != diag.Error || p.Field != x.field {
				continue
			}
			ok := true
			for _, m := range x.msg {
				ok = ok && strings.Contains(p.Message, m)
			}
			if ok {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s: %q", x.field, x.msg))
		}
	}
	var extra, all []string
	for i, p := range got {
		all = append(all, p.String())
		if !used[i] {
			extra = append(extra, p.String())
		}
	}
	require.Truef(t, len(missing) == 0 && len(extra) == 0,
		"problems differ\nmissing:\n  %s\nunexpected:\n  %s\nall problems:\n  %s",
		strings.Join(missing, "\n  "), strings.Join(extra, "\n  "), strings.Join(all, "\n  "))
}

// capsDoc builds a ClusterCapabilities document around a flow-style spec.
func capsDoc(spec string) string {
	return "apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: test-cluster}\nspec: " + spec + "\n"
}

// resolveYAML decodes and resolves a document, as ResolveNode does: the
// problems of both steps (an apiVersion that is not served is found while
// decoding).
func resolveYAML(t *testing.T, doc string) (*Resolved, diag.List) {
	t.Helper()
	c, problems := Decode([]byte(doc))
	require.NotNilf(t, c, "cannot decode: %v", problems)
	r, rl := Resolve(c)
	return r, append(problems, rl...)
}

func TestDefaultCapabilities(t *testing.T) {
	c, problems := Decode(DefaultYAML())
	require.Empty(t, problems)
	r, problems := Resolve(c)
	require.Empty(t, problems, "the embedded default must resolve without any problem")

	d := Default()
	require.Same(t, d, Default(), "the default is resolved once")
	require.Equal(t, "the embedded default capabilities", d.Source)
	require.Nil(t, d.Gateway, "the default declares no gateway")
	require.Len(t, d.NodePools, 2)
	require.Equal(t, "nvidia-gpu", d.NodePools[0].Name)
	require.Equal(t, map[string]string{"nvidia.com/gpu.present": "true"}, d.NodePools[0].Selector)
	require.Equal(t, "cpu", d.NodePools[1].Name)
	require.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, d.NodePools[1].Selector)

	pinned := map[string]string{hub.ProviderDynamo: "1.1.1", hub.ProviderKAITO: "0.10.0", hub.ProviderKubeRay: "1.3.0", hub.ProviderLLMD: "0.6.0", hub.ProviderVLLM: ""}
	for _, res := range []*Resolved{r, d} {
		var names []string
		for _, p := range res.Providers {
			names = append(names, p.Name)
			require.Equal(t, pinned[p.Name], p.Version, p.Name)
			require.True(t, p.Ready, p.Name)
			b := BuiltinFor(p.Name)
			require.Equal(t, b.DefaultVersion, p.Version, "the default file declares the pinned release of %s", p.Name)
			require.Equal(t, b.Engines, p.Engines)
			require.Len(t, res.Rules(p.Name), len(b.Rules))
		}
		require.Equal(t, []string{hub.ProviderDynamo, hub.ProviderKAITO, hub.ProviderKubeRay, hub.ProviderLLMD, hub.ProviderVLLM}, names)
	}
}

func TestBuiltins(t *testing.T) {
	require.Equal(t, []string{hub.ProviderDynamo, hub.ProviderKAITO, hub.ProviderKubeRay, hub.ProviderLLMD, hub.ProviderVLLM}, ProviderNames())
	require.Nil(t, BuiltinFor("sglang"))
	for _, b := range Builtins {
		t.Run(b.Name, func(t *testing.T) {
			if b.Versions == nil {
				require.Empty(t, b.DefaultVersion)
			} else {
				v, err := hub.ParseRelease(b.DefaultVersion)
				require.NoError(t, err)
				require.True(t, b.Versions.Contains(v), "pinned %s outside %s", b.DefaultVersion, b.Versions)
			}
			require.NotEmpty(t, b.Engines)
			require.NotEmpty(t, b.Renders)
			// Built-in rules are compiled lazily (builtinProgram) and
			// skip the checks of a capability file's rules: they are
			// checked here instead.
			for _, r := range b.Rules {
				_, err := compileRule(r.Condition)
				require.NoError(t, err, r.Condition)
				require.GreaterOrEqual(t, r.Priority, int32(0), r.Condition)
			}
		})
	}
}

func TestResolveProblems(t *testing.T) {
	const kaito = `{name: kaito, version: "0.10.0"}`
	gw := func(g string) string { return `{providers: [` + kaito + `], gateway: ` + g + `}` }
	pools := func(p string) string { return `{providers: [` + kaito + `], nodePools: [` + p + `]}` }
	for _, tc := range []struct {
		name string
		doc  string
		want []want
	}{
		{
			name: "minimal valid file",
			doc:  capsDoc(`{providers: [` + kaito + `]}`),
		},
		{
			name: "no providers at all",
			doc:  capsDoc(`{}`),
		},
		{
			name: "a fleet",
			doc:  capsDoc(`{fleet: {clusters: [test-cluster, west], unassignedModels: Render}}`),
		},
		{
			name: "a fleet without this cluster, a name twice, a bad name and policy",
			doc:  capsDoc(`{fleet: {clusters: [test-clustre, west, west, West_1], unassignedModels: Always}}`),
			want: []want{
				e("spec.fleet.clusters", `must include this cluster's own name "test-cluster"`, `did you mean "test-clustre"?`),
				e("spec.fleet.clusters[2]", `"west" is listed twice`),
				e("spec.fleet.clusters[3]", `"West_1" must be a cluster name`),
				e("spec.fleet.unassignedModels", `must be "Refuse" or "Render", got "Always"`),
			},
		},
		{
			name: "a download rate",
			doc:  capsDoc(`{modelDownload: {mibPerSecond: 500}}`),
		},
		{
			name: "a download rate of nothing",
			doc:  capsDoc(`{modelDownload: {mibPerSecond: 0}}`),
			want: []want{e("spec.modelDownload.mibPerSecond", "must be from 1 to 100000 (MiB/s), got 0")},
		},
		{
			name: "an empty fleet",
			doc:  capsDoc(`{fleet: {clusters: []}}`),
			want: []want{e("spec.fleet.clusters", "must name every cluster of the fleet")},
		},
		{
			name: "wrong apiVersion",
			doc:  strings.Replace(capsDoc(`{providers: [`+kaito+`]}`), "airunway.ai/v1alpha1", "airunway.ai/v1beta1", 1),
			want: []want{e("apiVersion", `"airunway.ai/v1beta1" is not supported`, `"airunway.ai/v1alpha1"`)},
		},
		{
			name: "wrong kind",
			doc:  strings.Replace(capsDoc(`{providers: [`+kaito+`]}`), "kind: ClusterCapabilities", "kind: ModelDeployment", 1),
			want: []want{e("kind", `must be "ClusterCapabilities", got "ModelDeployment"`)},
		},
		{
			name: "unknown provider",
			doc:  capsDoc(`{providers: [{name: triton, version: "1.0.0"}]}`),
			want: []want{e("spec.providers[0].name", `"triton" is not a known provider`, `"dynamo", "kaito", "kuberay", "llmd", "vllm"`)},
		},
		{
			name: "duplicate provider",
			doc:  capsDoc(`{providers: [` + kaito + `, {name: vllm}, {name: kaito, version: "0.11.0"}]}`),
			want: []want{e("spec.providers[2].name", `"kaito" is listed twice`, "spec.providers[0]")},
		},
		{
			name: "version below the supported range",
			doc:  capsDoc(`{providers: [{name: dynamo, version: "0.9.0"}]}`),
			want: []want{e("spec.providers[0].version", `dynamo "0.9.0" is not supported`, ">= 1.1.0, < 1.6.0")},
		},
		{
			name: "version at the exclusive upper bound",
			doc:  capsDoc(`{providers: [{name: kuberay, version: "1.8.0"}]}`),
			want: []want{e("spec.providers[0].version", `kuberay "1.8.0" is not supported`, ">= 1.3.0, < 1.8.0")},
		},
		{
			name: "versions at both ends of the range",
			doc:  capsDoc(`{providers: [{name: dynamo, version: "1.1.0"}, {name: llmd, version: "v0.10.99"}]}`),
		},
		{
			name: "missing version when versions are required",
			doc:  capsDoc(`{requireVersions: true, providers: [{name: kaito}]}`),
			want: []want{e("spec.providers[0].version", "is required: `spec.requireVersions` is true", `"kaito"`, ">= 0.6.0, < 0.13.0")},
		},
		{
			name: "version set for vllm",
			doc:  capsDoc(`{providers: [{name: vllm, version: "0.11.0"}]}`),
			want: []want{e("spec.providers[0].version", "must not be set", "`images`")},
		},
		{
			name: "invalid semver",
			doc:  capsDoc(`{providers: [{name: dynamo, version: "1.x"}]}`),
			want: []want{e("spec.providers[0].version", `"1.x" is not a release version`, "supported dynamo releases: >= 1.1.0, < 1.6.0")},
		},
		{
			name: "pre-release version",
			doc:  capsDoc(`{providers: [{name: dynamo, version: "1.2.0-rc.1"}]}`),
			want: []want{e("spec.providers[0].version", "is not a release version")},
		},
		{
			name: "bad engine name",
			doc:  capsDoc(`{providers: [{name: kaito, version: "0.10.0", engines: [{name: tgi, servingModes: [aggregated], gpuSupport: true}]}]}`),
			want: []want{e("spec.providers[0].engines[0].name", `"tgi" is not supported`, `"vllm", "sglang", "trtllm", "llamacpp"`)},
		},
		{
			name: "bad serving mode",
			doc:  capsDoc(`{providers: [{name: kaito, version: "0.10.0", engines: [{name: vllm, gpuSupport: true}, {name: llamacpp, servingModes: [aggregated, hybrid], cpuSupport: true}]}]}`),
			want: []want{e("spec.providers[0].engines[1].servingModes[1]", `"hybrid" is not supported`)},
		},
		{
			name: "CEL syntax error",
			doc:  capsDoc(`{providers: [{name: kaito, version: "0.10.0", selectionRules: [{condition: "spec.engine.type ==", priority: 10}]}]}`),
			want: []want{e("spec.providers[0].selectionRules[0].condition", "is not a valid CEL expression", "Syntax error")},
		},
		{
			name: "CEL undeclared variable",
			doc:  capsDoc(`{providers: [{name: kaito, version: "0.10.0", selectionRules: [{condition: "spec.engine.type == 'vllm'", priority: 1}, {condition: "model.id == 'x'", priority: 10}]}]}`),
			want: []want{e("spec.providers[0].selectionRules[1].condition", "is not a valid CEL expression", "undeclared reference to 'model'")},
		},
		{
			name: "negative priority",
			doc:  capsDoc(`{providers: [{name: kaito, version: "0.10.0", selectionRules: [{condition: "true", priority: -1}]}]}`),
			want: []want{e("spec.providers[0].selectionRules[0].priority", "greater than or equal to 0, got -1")},
		},
		{
			name: "image key not an engine",
			doc:  capsDoc(`{providers: [{name: vllm, images: {vllm: "vllm/vllm-openai:v0.11.0", tgi: "x:1"}}]}`),
			want: []want{e("spec.providers[0].images.tgi", `"tgi" is not an engine`, `"vllm", "sglang", "trtllm", "llamacpp"`)},
		},
		{
			name: "empty image",
			doc:  capsDoc(`{providers: [{name: vllm, images: {vllm: ""}}]}`),
			want: []want{e("spec.providers[0].images.vllm", "must name an image")},
		},
		{
			name: "valid gateway",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: v1.5.1, channel: standard, parentRef: {name: gw, namespace: gateway-system}}`)),
		},
		{
			name: "gateway with the v1alpha2 pool and no optional fields",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.x-k8s.io/v1alpha2, gatewayAPIVersion: v1.0.0, parentRef: {name: gw}}`)),
		},
		{
			name: "gateway with a cluster-wide endpoint picker",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: v1.7.0, channel: experimental, parentRef: {name: gw}, endpointPicker: {image: "registry.example.com/epp:v1.5.0"}}`)),
		},
		{
			name: "gateway without gatewayAPIVersion",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, parentRef: {name: gw}}`)),
			want: []want{e("spec.gateway.gatewayAPIVersion", "is required", ">= 1.0.0, < 1.8.0")},
		},
		{
			name: "gateway with unsupported inferencePoolVersion",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.x-k8s.io/v1alpha1, gatewayAPIVersion: v1.5.1, parentRef: {name: gw}}`)),
			want: []want{e("spec.gateway.inferencePoolVersion", `"inference.networking.x-k8s.io/v1alpha1" is not supported`, `"inference.networking.k8s.io/v1"`)},
		},
		{
			name: "gateway without inferencePoolVersion",
			doc:  capsDoc(gw(`{gatewayAPIVersion: v1.5.1, parentRef: {name: gw}}`)),
			want: []want{e("spec.gateway.inferencePoolVersion", `"" is not supported`)},
		},
		{
			name: "gateway with unsupported channel",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: v1.5.1, channel: beta, parentRef: {name: gw}}`)),
			want: []want{e("spec.gateway.channel", `"beta" is not supported`, `"standard", "experimental"`)},
		},
		{
			name: "gateway with unsupported gatewayAPIVersion",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: v1.8.0, parentRef: {name: gw}}`)),
			want: []want{e("spec.gateway.gatewayAPIVersion", `"v1.8.0" is not supported`, ">= 1.0.0, < 1.8.0")},
		},
		{
			name: "gateway with a non-semver gatewayAPIVersion",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: latest, parentRef: {name: gw}}`)),
			want: []want{e("spec.gateway.gatewayAPIVersion", `"latest" is not supported`)},
		},
		{
			name: "gateway without parentRef",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: v1.5.1}`)),
			want: []want{e("spec.gateway.parentRef.name", "is required")},
		},
		{
			name: "gateway with an empty parentRef name",
			doc:  capsDoc(gw(`{inferencePoolVersion: inference.networking.k8s.io/v1, gatewayAPIVersion: v1.5.1, parentRef: {name: "", namespace: gw}}`)),
			want: []want{e("spec.gateway.parentRef.name", "is required")},
		},
		{
			name: "valid node pools",
			doc:  capsDoc(pools(`{name: h100, selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}], gpu: {resourceName: nvidia.com/gpu, memoryMiB: 81559, perNode: 8}}, {name: cpu, selector: {kubernetes.io/os: linux}, capacity: {cpu: "32", memory: 128Gi}}`)),
		},
		{
			name: "node pool duplicate name",
			doc:  capsDoc(pools(`{name: gpu, selector: {a: b}}, {name: cpu, selector: {a: c}}, {name: gpu, selector: {a: d}}`)),
			want: []want{e("spec.nodePools[2].name", `"gpu" is listed twice`)},
		},
		{
			name: "node pool bad taint effect",
			doc:  capsDoc(pools(`{name: gpu, selector: {a: b}, taints: [{key: a, effect: NoSchedule}, {key: b, effect: NoRun}]}`)),
			want: []want{e("spec.nodePools[0].taints[1].effect", `"NoRun" is not supported`, `"NoSchedule", "PreferNoSchedule", "NoExecute"`)},
		},
		{
			name: "node pool taint without key",
			doc:  capsDoc(pools(`{name: gpu, selector: {a: b}, taints: [{key: "", effect: NoExecute}]}`)),
			want: []want{e("spec.nodePools[0].taints[0].key", "must be set")},
		},
		{
			name: "node pool invalid name",
			doc:  capsDoc(pools(`{name: GPU_Pool, selector: {a: b}}`)),
			want: []want{e("spec.nodePools[0].name", `"GPU_Pool" is not a valid pool name`)},
		},
		{
			name: "node pool missing name",
			doc:  capsDoc(pools(`{name: "", selector: {a: b}}`)),
			want: []want{e("spec.nodePools[0].name", "must be set")},
		},
		{
			name: "node pool invalid selector key and value",
			doc:  capsDoc(pools(`{name: gpu, selector: {"bad key": x, ok.io/k: "not valid!"}}`)),
			want: []want{
				e("spec.nodePools[0].selector", `label key "bad key" is invalid`),
				e("spec.nodePools[0].selector.ok.io/k", `label value "not valid!" is invalid`),
			},
		},
		{
			name: "node pool without selector",
			doc:  capsDoc(pools(`{name: gpu}`)),
			want: []want{e("spec.nodePools[0].selector", "must name at least one node label")},
		},
		{
			name: "node pool bad capacity and GPU memory",
			doc:  capsDoc(pools(`{name: gpu, selector: {a: b}, gpu: {memoryMiB: -1}, capacity: {cpu: lots, memory: "0"}}`)),
			want: []want{
				e("spec.nodePools[0].gpu.memoryMiB", "greater than or equal to 0"),
				e("spec.nodePools[0].capacity.cpu", `"lots" must be a positive quantity`),
				e("spec.nodePools[0].capacity.memory", `"0" must be a positive quantity`),
			},
		},
		{
			name: "node pool negative perNode",
			doc:  capsDoc(pools(`{name: gpu, selector: {a: b}, gpu: {perNode: -1}}`)),
			want: []want{e("spec.nodePools[0].gpu.perNode", "greater than or equal to 0")},
		},
		{
			name: "every problem is reported",
			doc: strings.Replace(capsDoc(`{providers: [{name: triton}, {name: dynamo, version: "2.0.0"}, {name: vllm, version: "1.0.0", selectionRules: [{condition: "(", priority: -5}]}], `+
				`gateway: {inferencePoolVersion: v1, channel: beta}, nodePools: [{name: a, selector: {x: z}, taints: [{key: k, effect: Never}]}, {name: a}]}`), "airunway.ai/v1alpha1", "airunway.ai/v1", 1),
			want: []want{
				e("apiVersion", "is not supported"),
				e("spec.providers[0].name", "not a known provider"),
				e("spec.providers[1].version", "is not supported"),
				e("spec.providers[2].version", "must not be set"),
				e("spec.providers[2].selectionRules[0].priority", "greater than or equal to 0"),
				e("spec.providers[2].selectionRules[0].condition", "not a valid CEL expression"),
				e("spec.gateway.inferencePoolVersion", "is not supported"),
				e("spec.gateway.channel", "is not supported"),
				e("spec.gateway.gatewayAPIVersion", "is required"),
				e("spec.gateway.parentRef.name", "is required"),
				e("spec.nodePools[0].taints[0].effect", "is not supported"),
				e("spec.nodePools[1].name", "listed twice"),
				e("spec.nodePools[1].selector", "must name at least one node label"),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := resolveYAML(t, tc.doc)
			requireErrors(t, problems, tc.want...)
		})
	}
}

// A capability entry's fields replace the built-in description field by
// field; absent fields keep the built-in value.
func TestResolveMergesOverBuiltins(t *testing.T) {
	r, problems := resolveYAML(t, capsDoc(`{providers: [
		{name: vllm, ready: false, images: {vllm: "vllm/vllm-openai:v0.11.0"}},
		{name: kuberay, version: "1.4.0", selectionRules: []},
		{name: dynamo, version: "1.2.0", engines: [{name: vllm, servingModes: [aggregated], gpuSupport: true}], selectionRules: [{condition: "true", priority: 7}]},
		{name: kaito, version: "0.10.0"}]}`))
	requireErrors(t, problems)

	var names []string
	for _, p := range r.Providers {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{hub.ProviderDynamo, hub.ProviderKAITO, hub.ProviderKubeRay, hub.ProviderVLLM}, names, "providers are sorted by name")
	require.Nil(t, r.Provider(hub.ProviderLLMD), "a provider that is not listed is not installed")
	require.Equal(t, "test-cluster", r.Name)
	require.Equal(t, `ClusterCapabilities "test-cluster"`, r.Source)

	vllm := r.Provider(hub.ProviderVLLM)
	require.False(t, vllm.Ready)
	require.Equal(t, map[string]string{"vllm": "vllm/vllm-openai:v0.11.0"}, vllm.Images)
	require.Equal(t, BuiltinFor(hub.ProviderVLLM).Engines, vllm.Engines)

	kuberay := r.Provider(hub.ProviderKubeRay)
	require.True(t, kuberay.Ready)
	require.Empty(t, r.Rules(hub.ProviderKubeRay), "an explicit empty selectionRules list means no rules")
	require.Equal(t, "1.4.0", kuberay.Version)

	dynamo := r.Provider(hub.ProviderDynamo)
	require.Len(t, dynamo.Engines, 1)
	require.NotNil(t, dynamo.Engine("vllm"))
	require.Nil(t, dynamo.Engine("sglang"), "engines replace the built-in list")
	require.Len(t, r.Rules(hub.ProviderDynamo), 1)
	require.Equal(t, int32(7), r.Rules(hub.ProviderDynamo)[0].Priority)

	kaito := r.Rules(hub.ProviderKAITO)
	require.Len(t, kaito, len(BuiltinFor(hub.ProviderKAITO).Rules), "absent selectionRules keep the built-in rules")
	require.Equal(t, BuiltinFor(hub.ProviderKAITO).Rules[0].Condition, kaito[0].Condition)
}

func TestDecodeCapabilities(t *testing.T) {
	_, problems := Decode([]byte("spec: [unclosed"))
	requireErrors(t, problems, e("", "is not valid YAML"))

	// a key on line 7 that the YAML parser puts on line 4, the start of
	// the mapping around it, counted from 0
	_, problems = Decode([]byte("apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: c}\nspec:\n  providers:\n      - name: vllm\n    nodePools:\n    - name: l4\n"))
	requireErrors(t, problems, e("", "is not valid YAML: line 7: `nodePools:` is indented 4 spaces, but the entries of `spec.providers` are indented 6 and the keys of `spec` 2"))

	_, problems = Decode([]byte(capsDoc(`{providers: [{name: kaito, verison: "0.10.0"}], nodepools: []}`)))
	requireErrors(t, problems,
		e("spec.providers[0].verison", "unknown field"),
		e("spec.nodepools", "unknown field"))

	// encoding/json type errors carry no list index; the path names the
	// element all the same (hub.elementPath).
	for _, tc := range []struct{ spec, field, msg string }{
		{`{providers: [{name: kaito, ready: "yes"}]}`, "spec.providers[0].ready", "must be a boolean, got string"},
		{`{providers: [{name: kuberay, version: "1.4.2"}, {name: kaito, version: 0.8}]}`, "spec.providers[1].version", "must be a string, got number"},
		{`{nodePools: [{name: l4, selector: {a: b}, gpu: {resourceName: nvidia.com/gpu, perNode: "x"}}]}`, "spec.nodePools[0].gpu.perNode", "must be an integer, got string"},
		{`{nodePools: [{name: l4, selector: {a: b, c: 1}}]}`, "spec.nodePools[0].selector.c", "must be a string, got number"},
	} {
		_, problems = Decode([]byte(capsDoc(tc.spec)))
		requireErrors(t, problems, e(tc.field, tc.msg))
	}
}

func TestResolveNode(t *testing.T) {
	node, err := kyaml.Parse(capsDoc(`{providers: [{name: kaito, version: "0.10.0"}]}`))
	require.NoError(t, err)
	r, problems := ResolveNode(node)
	requireErrors(t, problems)
	require.NotNil(t, r)
	require.NotNil(t, r.Provider(hub.ProviderKAITO))

	node, err = kyaml.Parse(capsDoc(`{requireVersions: true, providers: [{name: kaito}]}`))
	require.NoError(t, err)
	r, problems = ResolveNode(node)
	require.Nil(t, r, "no Resolved value when the file has errors")
	requireErrors(t, problems, e("spec.providers[0].version", "is required"))

	node, err = kyaml.Parse(capsDoc(`{providers: [{name: kaito, bogus: 1}]}`))
	require.NoError(t, err)
	r, problems = ResolveNode(node)
	require.Nil(t, r)
	requireErrors(t, problems, e("spec.providers[0].bogus", "unknown field"))
}

// Rule.Matches follows upstream: a rule that errors at evaluation (typically
// `no such key` on an absent field) or returns a non-boolean does not match.
// Specs are decoded from JSON, the shape the selector builds.
func TestRuleMatches(t *testing.T) {
	for _, tc := range []struct {
		name      string
		condition string
		spec      string
		want      bool
	}{
		{"equality true", "spec.engine.type == 'vllm'", `{"engine":{"type":"vllm"}}`, true},
		{"equality false", "spec.engine.type == 'vllm'", `{"engine":{"type":"sglang"}}`, false},
		{"missing key errors and does not match", "spec.engine.type == 'vllm'", `{}`, false},
		{"missing nested key errors and does not match", "spec.resources.gpu.count > 0", `{"resources":{"gpu":{"type":"nvidia.com/gpu"}}}`, false},
		{"JSON number compares with an int literal", "spec.resources.gpu.count > 0", `{"resources":{"gpu":{"count":1}}}`, true},
		{"string result does not match", "spec.engine.type", `{"engine":{"type":"vllm"}}`, false},
		{"int result does not match", "1 + 1", `{}`, false},
		{"map result does not match", "spec", `{"engine":{}}`, false},
		{"constant true matches", "true", `{}`, true},
		{"has guards the missing field", "has(spec.resources.gpu) && spec.resources.gpu.count > 1", `{"resources":{"cpu":"4"}}`, false},
		{"has on a missing parent errors", "has(spec.resources.gpu)", `{}`, false},
		{"kaito rule true on CPU-only resources", "!has(spec.resources.gpu) || spec.resources.gpu.count == 0", `{"resources":{"cpu":"4"}}`, true},
		{"kaito rule errors without resources", "!has(spec.resources.gpu) || spec.resources.gpu.count == 0", `{"engine":{"type":"vllm"}}`, false},
		{"kaito rule errors on gpu without count", "!has(spec.resources.gpu) || spec.resources.gpu.count == 0", `{"resources":{"gpu":{"type":"nvidia.com/gpu"}}}`, false},
		{"dynamo disaggregated rule", "has(spec.serving) && spec.serving.mode == 'disaggregated'", `{"serving":{"mode":"disaggregated"}}`, true},
		{"kuberay rule needs two GPUs", "has(spec.resources.gpu) && spec.resources.gpu.count > 1 && spec.engine.type == 'vllm'", `{"engine":{"type":"vllm"},"resources":{"gpu":{"count":2}}}`, true},
		{"kuberay rule with one GPU", "has(spec.resources.gpu) && spec.resources.gpu.count > 1 && spec.engine.type == 'vllm'", `{"engine":{"type":"vllm"},"resources":{"gpu":{"count":1}}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.spec), &spec))
			resolved, r := ruleOf(t, tc.condition)
			match, err := resolved.Match(r, spec)
			require.NoError(t, err)
			require.Equal(t, tc.want, match)
		})
	}

	r := Rule{Condition: "true", Priority: 5}
	require.Equal(t, `"true" (priority 5)`, r.String())
}

// TestRuleCostLimit: a rule that iterates too much stops at the cost limit
// with an error (found by FuzzRender: six nested `.all` over 20 items ran
// for 30 s, seven for hours), and stays an error without running again.
func TestRuleCostLimit(t *testing.T) {
	list := "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]"
	cond := list + ".all(a, " + list + ".all(b, " + list + ".all(c, " + list + ".all(d, " + list + ".all(e, " + list + ".all(f, " + list + ".all(g, a+b+c+d+e+f+g > 0)))))))"
	caps, l := Decode([]byte("apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: c}\nspec:\n  providers:\n  - name: vllm\n    selectionRules: [{condition: '" + cond + "', priority: 10}]\n"))
	require.Empty(t, l)
	resolved, l := Resolve(caps)
	require.Empty(t, l)
	r := resolved.Rules("vllm")[0]
	require.Equal(t, "spec.providers[0].selectionRules[0].condition", r.Field)
	for range 2 {
		match, err := resolved.Match(r, map[string]any{})
		require.ErrorIs(t, err, ErrRuleTooCostly)
		require.False(t, match)
	}
	spent := resolved.cost.spent.Load()
	require.True(t, spent >= RuleCostLimit && spent < 2*RuleCostLimit, "paid for once: %d", spent)
	resolved, cheap := ruleOf(t, list+".all(a, a > 0)")
	match, err := resolved.Match(cheap, nil)
	require.NoError(t, err)
	require.True(t, match, "a small comprehension stays well under the limit")
}

// ruleOf is a capability file of one rule, resolved, and its rule.
func ruleOf(t testing.TB, condition string) (*Resolved, Rule) {
	t.Helper()
	c := &hub.ClusterCapabilities{}
	c.Kind, c.Name = hub.KindClusterCapabilities, "c"
	c.Spec.Providers = []hub.ProviderCapability{{Name: "vllm", SelectionRules: []hub.SelectionRule{{Condition: condition, Priority: 5}}}}
	resolved, l := Resolve(c)
	require.False(t, l.HasErrors(), "%v", l)
	return resolved, resolved.Rules("vllm")[0]
}

func TestCompileRuleErrors(t *testing.T) {
	for _, tc := range []struct {
		condition string
		msg       string
	}{
		{"spec.engine.type ==", "Syntax error"},
		{"model.id == 'x'", "undeclared reference to 'model'"},
		{"spec.engine.type.startsWith(1)", "found no matching overload"},
	} {
		t.Run(tc.condition, func(t *testing.T) {
			_, err := compileRule(tc.condition)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestNodeAutoProvisioning(t *testing.T) {
	c := &hub.ClusterCapabilities{}
	c.APIVersion, c.Kind, c.Name = v1alpha1.APIVersion, hub.KindClusterCapabilities, "nap"
	nap := &hub.NodeAutoProvisioning{GPUInstanceType: "Standard_NC24ads_A100_v4"}
	c.Spec.Providers = []hub.ProviderCapability{
		{Name: "kaito", Version: "0.10.0", NodeAutoProvisioning: nap},
		{Name: "vllm", NodeAutoProvisioning: nap},
		{Name: "kuberay", Version: "1.3.0", NodeAutoProvisioning: &hub.NodeAutoProvisioning{}},
	}
	r, problems := Resolve(c)
	errs := problems.Errors()
	require.Len(t, errs, 2, "%v", problems)
	require.Equal(t, "spec.providers[1].nodeAutoProvisioning", errs[0].Field)
	require.Contains(t, errs[0].Message, `only supported for the "kaito" provider`)
	require.Equal(t, "spec.providers[2].nodeAutoProvisioning", errs[1].Field)
	require.Equal(t, "Standard_NC24ads_A100_v4", r.Provider("kaito").NodeAutoProvisioning.GPUInstanceType)
}

// The warning for a run without a capability file says what the embedded
// default assumes, from the default itself.
func TestDefaultAssumptions(t *testing.T) {
	require.Equal(t, `every one of dynamo 1.1.1, kaito 0.10.0, kuberay 1.3.0, llmd 0.6.0, vllm installed and ready; node pools "nvidia-gpu" (nvidia.com/gpu.present=true; nvidia.com/gpu) and "cpu" (kubernetes.io/os=linux; no GPUs); no gateway`,
		Default().Assumptions())
}

// A provider without a version renders for the newest release a golden
// case covers, and says so; `requireVersions` turns that into an error
// (TestResolveProblems).
func TestUnsetVersionIsTheNewest(t *testing.T) {
	c, problems := Decode([]byte(capsDoc(`{providers: [{name: kaito}, {name: kuberay}, {name: vllm}]}`)))
	require.Empty(t, problems)
	r, problems := Resolve(c)
	require.False(t, problems.HasErrors(), "%v", problems)
	require.Equal(t, "0.12.0", r.Provider(hub.ProviderKAITO).Version)
	require.Equal(t, "1.7.0", r.Provider(hub.ProviderKubeRay).Version)
	require.Empty(t, r.Provider(hub.ProviderVLLM).Version)
	require.Len(t, problems, 2)
	require.Equal(t, "spec.providers[0].version", problems[0].Field)
	require.Equal(t, "is not set: rendering for kaito 0.12.0, the newest release this renderer supports; declare the release the cluster runs (`version: \"0.12.0\"`), or set `spec.requireVersions: true` to make it mandatory", problems[0].Message)
}

// TestNewestVersionIsTested: the release an unpinned provider gets is one
// a golden case renders for, inside the supported range.
func TestNewestVersionIsTested(t *testing.T) {
	inputs, err := filepath.Glob("../golden/testdata/*/*.yaml")
	require.NoError(t, err)
	configs, err := filepath.Glob("../golden/testdata/*/functionConfig/*.yaml")
	require.NoError(t, err)
	tested := map[string]bool{}
	for _, f := range append(inputs, configs...) {
		if filepath.Base(f) == "expected.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		nodes, err := kio.FromBytes(data)
		require.NoError(t, err, f)
		for _, n := range nodes {
			if n.GetKind() != hub.KindClusterCapabilities {
				continue
			}
			c, problems := Decode([]byte(n.MustString()))
			if problems.HasErrors() {
				continue // error cases
			}
			for _, p := range c.Spec.Providers {
				tested[p.Name+" "+p.Version] = true
			}
		}
	}
	for _, name := range ProviderNames() {
		b := BuiltinFor(name)
		if b.Versions == nil {
			continue
		}
		v, err := hub.ParseRelease(b.NewestVersion)
		require.NoError(t, err, name)
		require.True(t, b.Versions.Contains(v), "%s %s is outside %s", name, b.NewestVersion, b.Versions)
		require.True(t, tested[name+" "+b.NewestVersion], "no golden case renders %s %s", name, b.NewestVersion)
	}
}

// A fleet's cluster labels are matched by models' cluster selectors: they
// are kept, and a label the API server would refuse is an error.
func TestClusterLabels(t *testing.T) {
	r, problems := resolveYAML(t, "apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: east, labels: {region: us-east1, tier: standard}}\nspec: {providers: [{name: vllm}]}\n")
	require.False(t, problems.HasErrors(), "%v", problems)
	require.Equal(t, map[string]string{"region": "us-east1", "tier": "standard"}, r.Labels)
	require.False(t, r.Embedded())
	require.True(t, Default().Embedded())

	_, problems = resolveYAML(t, "apiVersion: airunway.ai/v1alpha1\nkind: ClusterCapabilities\nmetadata: {name: east, labels: {region: \"us east\"}}\nspec: {providers: [{name: vllm}]}\n")
	require.True(t, problems.HasErrors())
	require.Equal(t, "metadata.labels", problems.Errors()[0].Field)
	require.Contains(t, problems.Errors()[0].Message, `Invalid value: "us east"`)
}

// heavyRule is a rule that costs about a tenth of RuleCostLimit and reads
// spec.model.id, so that models with distinct ids each evaluate it.
const heavyRule = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a+b+c+d > 0)))) && spec.model.id != ''"

// TestRunRuleCost: the rules of a run spend from one RunRuleCostLimit;
// the evaluation that crosses it fails with an error naming the rule, its
// field and the limit, and every later one fails at once. Two files that
// share the cost (a fleet's) spend from the same limit.
func TestRunRuleCost(t *testing.T) {
	resolved, rule := ruleOf(t, heavyRule)
	var err error
	evaluations := 0
	for ; err == nil && evaluations < 10_000; evaluations++ {
		_, err = resolved.Match(rule, map[string]any{"model": map[string]any{"id": fmt.Sprint(evaluations)}})
	}
	var exceeded *RunCostExceeded
	require.ErrorAs(t, err, &exceeded)
	t.Logf("%d evaluations; %v", evaluations, err)
	require.Greater(t, evaluations, 10, "a run affords many evaluations of a costly rule")
	require.Contains(t, err.Error(), "past the 10000000 one run may spend, while evaluating rule")
	require.Contains(t, err.Error(), "at `spec.providers[0].selectionRules[0].condition`")
	_, err = resolved.Match(rule, map[string]any{"model": map[string]any{"id": "next"}})
	require.ErrorAs(t, err, &exceeded)

	a, ruleA := ruleOf(t, heavyRule)
	b, ruleB := ruleOf(t, heavyRule+" && true") // not the same rule, whose result the files would share
	ShareRuleCost(a, b)
	for i := 0; ; i++ {
		_, errA := a.Match(ruleA, map[string]any{"model": map[string]any{"id": fmt.Sprint(i)}})
		_, errB := b.Match(ruleB, map[string]any{"model": map[string]any{"id": fmt.Sprint(i)}})
		if errA != nil || errB != nil {
			require.InDelta(t, evaluations, 2*i+1, 2, "two shared files afford together what one does")
			break
		}
	}
}

// TestRuleResultCache: a rule is evaluated once per distinct value of the
// fields it reads: models that differ elsewhere cost nothing more, and a
// field that is absent, null or set is told apart.
func TestRuleResultCache(t *testing.T) {
	resolved, rule := ruleOf(t, "has(spec.engine.type) && spec.engine.type == 'vllm' && spec.resources.gpu.count > 1")
	spec := func(id string, engine any, count int) map[string]any {
		return map[string]any{"model": map[string]any{"id": id}, "engine": map[string]any{"type": engine}, "resources": map[string]any{"gpu": map[string]any{"count": count}}}
	}
	match, err := resolved.Match(rule, spec("a", "vllm", 2))
	require.NoError(t, err)
	require.True(t, match)
	once := resolved.cost.spent.Load()
	for i := range 1000 {
		match, err := resolved.Match(rule, spec(fmt.Sprint(i), "vllm", 2))
		require.NoError(t, err)
		require.True(t, match)
	}
	require.Equal(t, once, resolved.cost.spent.Load(), "models differing only in a field the rule does not read share its result")
	for _, tc := range []struct {
		spec map[string]any
		want bool
	}{
		{spec("a", "vllm", 1), false},
		{spec("a", "sglang", 2), false},
		{spec("a", nil, 2), false},
		{map[string]any{"engine": map[string]any{}, "resources": map[string]any{"gpu": map[string]any{"count": 2}}}, false},
	} {
		match, err := resolved.Match(rule, tc.spec)
		require.NoError(t, err)
		require.Equal(t, tc.want, match, "%v", tc.spec)
	}
}

// TestRuleInputs: the fields a rule reads, found in its checked
// expression; any other use of spec reads all of it.
func TestRuleInputs(t *testing.T) {
	for _, tc := range []struct {
		condition string
		paths     [][]string
		whole     bool
	}{
		{"spec.engine.type == 'vllm'", [][]string{{"engine", "type"}}, false},
		{"has(spec.resources.gpu) && spec.resources.gpu.count > 1", [][]string{{"resources", "gpu"}, {"resources", "gpu", "count"}}, false},
		{"spec.adapters.exists(a, a.name == 'x')", [][]string{{"adapters"}}, false},
		{"size(spec) > 2", nil, true},
		{"spec['engine'].type == 'vllm'", nil, true},
		{"[1].all(spec, spec > 0) && spec.model.id == 'x'", [][]string{{"model", "id"}}, true},
		{"true", nil, false},
	} {
		c, err := compileRule(tc.condition)
		require.NoError(t, err, tc.condition)
		require.Equal(t, tc.paths, c.inputs.paths, tc.condition)
		require.Equal(t, tc.whole, c.inputs.whole, tc.condition)
	}
}

// TestMaxSelectionRules: a file of more rules than MaxSelectionRules is
// refused at the provider whose rules cross the bound, before any is
// compiled.
func TestMaxSelectionRules(t *testing.T) {
	c := &hub.ClusterCapabilities{}
	c.Kind, c.Name = hub.KindClusterCapabilities, "c"
	for _, name := range []string{"vllm", "kuberay"} {
		p := hub.ProviderCapability{Name: name}
		for range MaxSelectionRules/2 + 1 {
			p.SelectionRules = append(p.SelectionRules, hub.SelectionRule{Condition: "spec.engine.type ==", Priority: 1})
		}
		c.Spec.Providers = append(c.Spec.Providers, p)
	}
	_, l := Resolve(c)
	l = l.Errors()
	require.Len(t, l, 1, "no rule is compiled: %v", l)
	require.Equal(t, "spec.providers[1].selectionRules", l[0].Field)
	require.Contains(t, l[0].Message, "brings the file's selection rules to 102; a capability file may list at most 100")
}
