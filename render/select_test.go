package render

import (
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/providers/builtin"

	"github.com/stretchr/testify/require"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/testing/providertest"
	"github.com/airunway-render/airunway-render/providers"
)

// modelDeployment decodes, defaults and validates a spec written as YAML,
// as the pipeline does before selection.
func modelDeployment(t *testing.T, spec string, annotations ...string) *hub.ModelDeployment {
	t.Helper()
	meta := "{name: m, namespace: default"
	if len(annotations) > 0 {
		meta += ", annotations: {"
		for i := 0; i+1 < len(annotations); i += 2 {
			if i > 0 {
				meta += ", "
			}
			meta += annotations[i] + ": " + annotations[i+1]
		}
		meta += "}"
	}
	return providertest.Valid(t, meta+"}", spec)
}

// caps resolves a capability file listing the named providers at their
// default versions, all ready.
func caps(t *testing.T, names ...string) *capabilities.Resolved {
	t.Helper()
	c := &hub.ClusterCapabilities{}
	c.APIVersion, c.Kind, c.Name = v1alpha1.APIVersion, hub.KindClusterCapabilities, "test"
	for _, n := range names {
		c.Spec.Providers = append(c.Spec.Providers, hub.ProviderCapability{Name: n, Version: capabilities.BuiltinFor(n).DefaultVersion})
	}
	r, problems := capabilities.Resolve(c)
	require.False(t, problems.HasErrors(), "%v", problems)
	return r
}

// TestSelectionMatchesUpstream reproduces the decisions upstream AI Runway
// makes with its five shipped providers (runSelectionAlgorithm in
// kaito-project/airunway's controller).
func TestSelectionMatchesUpstream(t *testing.T) {
	all := capabilities.Default()
	cases := []struct {
		name, spec       string
		caps             *capabilities.Resolved
		engine, provider string
		engineReason     string
	}{
		{name: "vllm one GPU goes to dynamo", spec: "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", caps: all, engine: "vllm", provider: "dynamo", engineReason: "explicit engine selection"},
		{name: "vllm webhook-defaulted GPU goes to dynamo", spec: "model: {id: x}\nengine: {type: vllm}", caps: all, engine: "vllm", provider: "dynamo"},
		{name: "vllm two GPUs goes to kuberay", spec: "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}", caps: all, engine: "vllm", provider: "kuberay"},
		{name: "disaggregated vllm goes to dynamo", spec: "model: {id: x}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}", caps: all, engine: "vllm", provider: "dynamo"},
		{name: "sglang goes to dynamo", spec: "model: {id: x}\nengine: {type: sglang}\nresources: {gpu: {count: 1}}", caps: all, engine: "sglang", provider: "dynamo"},
		{name: "trtllm goes to dynamo", spec: "model: {id: x}\nengine: {type: trtllm}\nresources: {gpu: {count: 1}}", caps: all, engine: "trtllm", provider: "dynamo"},
		{name: "llamacpp goes to kaito", spec: "model: {id: x}\nengine: {type: llamacpp}\nimage: img", caps: all, engine: "llamacpp", provider: "kaito"},
		{name: "no engine, cpu only: llamacpp on kaito", spec: "model: {id: x}\nresources: {cpu: \"4\"}", caps: all, engine: "llamacpp", provider: "kaito", engineReason: "auto-selected from provider kaito capabilities"},
		{name: "no engine, one GPU: vllm on dynamo", spec: "model: {id: x}\nresources: {gpu: {count: 1}}", caps: all, engine: "vllm", provider: "dynamo", engineReason: "auto-selected from provider dynamo capabilities"},
		{name: "kaito, llmd, vllm: name tie-break picks kaito", spec: "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", caps: caps(t, "kaito", "llmd", "vllm"), engine: "vllm", provider: "kaito"},
		{name: "llmd and vllm: name tie-break picks llmd", spec: "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", caps: caps(t, "llmd", "vllm"), engine: "vllm", provider: "llmd"},
		{name: "explicit provider wins over rules", spec: "model: {id: x}\nengine: {type: vllm}\nprovider: {name: vllm}\nresources: {gpu: {count: 1}}", caps: all, engine: "vllm", provider: "vllm"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l diag.List
			d, ok := decide(modelDeployment(t, tc.spec), tc.caps, &l)
			require.True(t, ok, "%v", l)
			require.False(t, l.HasErrors(), "%v", l)
			require.Equal(t, tc.engine, d.Engine)
			require.Equal(t, tc.provider, d.Provider)
			if tc.engineReason != "" {
				require.Equal(t, tc.engineReason, d.EngineReason)
			}
			if strings.Contains(tc.spec, "provider:") {
				require.Equal(t, "explicit provider selection", d.ProviderReason)
			} else {
				require.True(t, strings.HasPrefix(d.ProviderReason, "matched capabilities: engine="+tc.engine), d.ProviderReason)
			}
		})
	}
}

func TestSelectionErrors(t *testing.T) {
	notReady := caps(t, "vllm")
	notReady.Providers[0].Ready = false
	cases := []struct {
		name, spec string
		caps       *capabilities.Resolved
		field      string
		message    string
	}{
		{name: "named provider not installed", spec: "model: {id: x}\nengine: {type: vllm}\nprovider: {name: kaito}", caps: caps(t, "vllm"), field: "spec.provider.name", message: `provider "kaito" is not installed`},
		{name: "named provider not installed, engine unset, no GPU", spec: "model: {id: x}\nprovider: {name: kaito}", caps: caps(t, "vllm"), field: "spec.provider.name", message: `provider "kaito" is not installed according to`},
		{name: "named provider unknown", spec: "model: {id: x}\nprovider: {name: kaitoo}", caps: capabilities.Default(), field: "spec.provider.name", message: `"kaitoo" is not a known provider: must be one of "dynamo", "kaito", "kuberay", "llmd", "vllm"; did you mean "kaito"?`},
		{name: "named provider unknown, nothing near", spec: "model: {id: x}\nprovider: {name: openai}", caps: capabilities.Default(), field: "spec.provider.name", message: `"openai" is not a known provider: must be one of "dynamo", "kaito", "kuberay", "llmd", "vllm"`},
		{name: "named provider lacks the engine", spec: "model: {id: x}\nengine: {type: sglang}\nprovider: {name: kaito}\nresources: {gpu: {count: 1}}", caps: capabilities.Default(), field: "spec.engine.type", message: "provider kaito does not support engine sglang"},
		{name: "named provider lacks the mode", spec: "model: {id: x}\nengine: {type: trtllm}\nprovider: {name: dynamo}\nserving: {mode: disaggregated}\nscaling: {prefill: {gpu: {count: 1}}, decode: {gpu: {count: 1}}}", caps: capabilities.Default(), field: "spec.serving.mode", message: "does not support disaggregated mode for engine trtllm"},
		{name: "named provider needs GPU", spec: "model: {id: x}\nengine: {type: vllm}\nprovider: {name: dynamo}\nresources: {cpu: \"4\"}", caps: capabilities.Default(), field: "spec.resources.gpu.count", message: "vllm engine on provider dynamo requires GPU"},
		{name: "no provider serves vllm on CPU", spec: "model: {id: x}\nengine: {type: vllm}\nresources: {cpu: \"4\"}", caps: capabilities.Default(), field: "spec.resources.gpu.count", message: "vllm engine requires GPU"},
		{name: "no ready provider", spec: "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}", caps: notReady, field: "spec.provider.name", message: "no compatible provider found"},
		{name: "no engine offered", spec: "model: {id: x}\nresources: {cpu: \"4\"}", caps: caps(t, "vllm"), field: "spec.engine.type", message: "no engines available"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l diag.List
			_, ok := decide(modelDeployment(t, tc.spec), tc.caps, &l)
			require.False(t, ok)
			errs := l.Errors()
			require.Len(t, errs, 1, "%v", l)
			require.Equal(t, tc.field, errs[0].Field)
			require.Contains(t, errs[0].Message, tc.message)
		})
	}
}

func TestSelectionIsSticky(t *testing.T) {
	spec := "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}"
	t.Run("earlier choice kept while still a candidate", func(t *testing.T) {
		var l diag.List
		d, ok := decide(modelDeployment(t, spec, hub.AnnotationProvider, "vllm"), caps(t, "llmd", "vllm"), &l)
		require.True(t, ok)
		require.Equal(t, "vllm", d.Provider)
		require.Len(t, l, 1)
		require.Equal(t, diag.Warning, l[0].Severity)
		require.Contains(t, l[0].Message, `now auto-selects provider "llmd"`)
	})
	t.Run("earlier choice gone: switch with a warning", func(t *testing.T) {
		var l diag.List
		d, ok := decide(modelDeployment(t, spec, hub.AnnotationProvider, "kaito"), caps(t, "llmd", "vllm"), &l)
		require.True(t, ok)
		require.Equal(t, "llmd", d.Provider)
		require.Len(t, l, 1)
		require.Contains(t, l[0].Message, `no longer a ready, compatible provider`)
	})
	t.Run("same choice: silent", func(t *testing.T) {
		var l diag.List
		d, ok := decide(modelDeployment(t, spec, hub.AnnotationProvider, "llmd"), caps(t, "llmd", "vllm"), &l)
		require.True(t, ok)
		require.Equal(t, "llmd", d.Provider)
		require.Empty(t, l)
	})
}

// TestCELSpecShape pins the quirks upstream's rules depend on: omitempty
// drops zero GPU counts and false booleans, engine is always an object.
func TestCELSpecShape(t *testing.T) {
	md := modelDeployment(t, "model: {id: x}\nengine: {enablePrefixCaching: false}\nresources: {gpu: {count: 0}}\nnodeSelector: {}")
	got := celSpec(&md.Spec, "llamacpp")
	engine := got["engine"].(map[string]any)
	require.Equal(t, "llamacpp", engine["type"])
	require.NotContains(t, engine, "enablePrefixCaching")
	require.NotContains(t, got["resources"].(map[string]any)["gpu"], "count")
	require.NotContains(t, got, "nodeSelector")

	// KAITO's CPU rule errors on the missing count and so does not match,
	// exactly as upstream's omitempty JSON makes it.
	caps := capabilities.Default()
	rule := caps.Rules("kaito")[0]
	require.Equal(t, capabilities.BuiltinFor("kaito").Rules[0].Condition, rule.Condition)
	match, err := caps.Match(rule, got)
	require.NoError(t, err)
	require.False(t, match)
}

// TestUnregisteredProvider covers a selected provider that this build
// cannot render (a registry narrowed by Options.Providers): an error that
// names the choice and what can be rendered, and no output.
func TestUnregisteredProvider(t *testing.T) {
	md := kyaml.MustParse(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: m, namespace: default}
spec:
  model: {id: x}
  engine: {type: vllm}
`)
	res := Render([]*kyaml.RNode{md}, Options{Providers: map[string]providers.Provider{"vllm": builtin.ByName()["vllm"]}})
	require.Nil(t, res.Items)
	errs := res.Problems.Errors()
	require.Len(t, errs, 1)
	require.Equal(t, "spec.provider.name", errs[0].Field)
	require.Contains(t, errs[0].Message, `provider "dynamo" was selected by the capability file's rules, but this release of airunway-render renders only vllm`)
}

// TestSelectionReasonNamesRuleAndLosers: the annotation says which rule
// won, which candidates lost and which installed providers were no
// candidates at all.
func TestSelectionReasonNamesRuleAndLosers(t *testing.T) {
	var l diag.List
	md := modelDeployment(t, "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}")
	d, ok := decide(md, capabilities.Default(), &l)
	require.True(t, ok, "%v", l)
	require.Equal(t, "kuberay", d.Provider)
	require.Equal(t, `matched capabilities: engine=vllm, gpu=true, mode=aggregated; won: kuberay (rule "has(spec.resources.gpu) && spec.resources.gpu.count > 1 && spec.engine.type == 'vllm'", priority 80); `+
		`lost: dynamo (rule "has(spec.resources.gpu) && spec.resources.gpu.count > 0 && spec.engine.type == 'vllm'", priority 50), kaito (no rule matched, priority 0), llmd (no rule matched, priority 0), vllm (no rule matched, priority 0)`,
		d.ProviderReason)

	notReady := caps(t, "llmd", "vllm")
	notReady.Providers[0].Ready = false
	md = modelDeployment(t, "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}")
	d, ok = decide(md, notReady, &l)
	require.True(t, ok, "%v", l)
	require.Equal(t, "matched capabilities: engine=vllm, gpu=true, mode=aggregated; won: vllm (no rule matched, priority 0); not candidates: llmd (not ready)", d.ProviderReason)
}

func TestSelectionReasonSaysATieWasBrokenByName(t *testing.T) {
	var l diag.List
	md := modelDeployment(t, "model: {id: x}\nengine: {type: vllm}\nresources: {gpu: {count: 1}}")
	d, ok := decide(md, caps(t, "llmd", "vllm"), &l)
	require.True(t, ok, "%v", l)
	require.Contains(t, d.ProviderReason, "; lost: ")
	require.Contains(t, d.ProviderReason, "; the tie went to the first name")
}

// TestEngineReasonNamesTheChosenProvider: the engine is picked among what
// every ready provider offers, but its reason names the provider that
// serves the model (once named the first provider offering the engine:
// "from provider kaito capabilities" on a model rendered for vllm), also
// when the engine is kept from an earlier render; an engine the model
// names says so.
func TestEngineReasonNamesTheChosenProvider(t *testing.T) {
	for _, tc := range []struct {
		name, spec  string
		annotations []string
		caps        *capabilities.Resolved
		want        string
	}{
		{name: "provider named, engine auto-selected", spec: "model: {id: x}\nprovider: {name: vllm}\nresources: {gpu: {count: 1}}",
			caps: caps(t, "kaito", "kuberay", "vllm"), want: "auto-selected from provider vllm capabilities"},
		{name: "provider named, engine kept from an earlier render", spec: "model: {id: x}\nprovider: {name: kuberay}\nresources: {gpu: {count: 1}}",
			annotations: []string{hub.AnnotationEngine, "vllm"}, caps: caps(t, "kaito", "kuberay"), want: "auto-selected from provider kuberay capabilities"},
		{name: "both selected", spec: "model: {id: x}\nresources: {gpu: {count: 1}}", caps: caps(t, "kaito", "vllm"),
			want: "auto-selected from provider kaito capabilities"},
		{name: "engine named", spec: "model: {id: x}\nengine: {type: vllm}\nprovider: {name: vllm}\nresources: {gpu: {count: 1}}",
			caps: caps(t, "dynamo", "vllm"), want: "explicit engine selection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l diag.List
			d, ok := decide(modelDeployment(t, tc.spec, tc.annotations...), tc.caps, &l)
			require.True(t, ok, "%v", l)
			require.Equal(t, tc.want, d.EngineReason)
		})
	}
}
