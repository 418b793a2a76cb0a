package render

import (
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/gateway"
	"github.com/airunway-render/airunway-render/internal/benchdata"
	"github.com/airunway-render/airunway-render/internal/manifest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// BenchmarkStages measures each stage of rendering one ModelDeployment of
// the benchmark workload (internal/benchdata), per provider, in the order
// data flows: decode (YAML node to the hub: the input limits, the
// duplicate-key check, strict decoding, defaults and conversion), validate (of the defaulted object), select (engine
// and provider: the workload's models name their provider), select-rules
// (the same model without a provider name, so the built-in CEL rules are
// evaluated), place (node pool), render (the provider's objects
// and the gateway's), emit (objects to YAML nodes with their kpt
// annotations) and the whole model. Each stage is timed alone on the
// output of the stages before it.
func BenchmarkStages(b *testing.B) {
	caps := benchCapabilities(b)
	registry := builtin.ByName()
	for i, provider := range benchdata.Providers {
		node := yaml.MustParse(benchdata.Model(i + len(benchdata.Providers))) // a 1-GPU model of each provider
		js, l := manifest.ObjectJSON(node)
		must(b, l)
		md, l := versions.DecodeModelDeployment(v1alpha1.APIVersion, js)
		must(b, l)
		var pl diag.List
		d, ok := decide(md, caps, &pl)
		if !ok || d.Provider != provider {
			b.Fatalf("%s: selected %q: %v", provider, d.Provider, pl)
		}
		unnamed := *md
		unnamed.Spec.Provider = nil
		if d, ok := decide(&unnamed, caps, &pl); !ok || d.Provider == "" {
			b.Fatalf("%s: no provider selected by the rules: %v", provider, pl)
		}
		p := registry[provider]
		placement := place(md, caps, p, &pl)
		must(b, pl)
		req := &providers.Request{MD: md, Engine: d.Engine, Provider: caps.Provider(provider), Caps: &caps.ResolvedCapabilities, Placement: placement, GatewayEnabled: md.GatewayEnabled(caps.Gateway)}
		objs, l := p.Render(req)
		must(b, l)

		stages := []struct {
			name string
			run  func() diag.List
		}{
			{"decode", func() diag.List {
				js, l := manifest.ObjectJSON(node)
				if l.HasErrors() {
					return l
				}
				_, l = versions.DecodeModelDeployment(v1alpha1.APIVersion, js)
				return l
			}},
			{"validate", func() diag.List {
				// Validation of the defaulted object; defaulting itself is a
				// few assignments (and would change md for the next run).
				return hub.ValidateModelDeployment(md)
			}},
			{"select", func() diag.List {
				var l diag.List
				decide(md, caps, &l)
				return l
			}},
			{"select-rules", func() diag.List {
				var l diag.List
				decide(&unnamed, caps, &l)
				return l
			}},
			{"place", func() diag.List {
				var l diag.List
				place(md, caps, p, &l)
				return l
			}},
			{"render", func() diag.List {
				_, l := p.Render(req)
				_, gl := gateway.Render(req, p)
				return append(l, gl...)
			}},
			{"emit", func() diag.List {
				if _, err := annotateModel(node, d); err != nil {
					b.Fatal(err)
				}
				for _, obj := range objs {
					if _, err := toNode(obj, "models.yaml"); err != nil {
						b.Fatal(err)
					}
				}
				return nil
			}},
			{"model", func() diag.List {
				// Every stage, as Render runs them for one model.
				run := &modelRun{caps: caps, registry: registry, out: &output{}, seen: map[string]string{}}
				return run.render(queued{node: node}, newTurns().next()).problems
			}},
		}
		for _, s := range stages {
			b.Run(fmt.Sprintf("provider=%s/%s", provider, s.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if l := s.run(); l.HasErrors() {
						b.Fatal(l)
					}
				}
			})
		}
	}
}

func benchCapabilities(tb testing.TB) *capabilities.Resolved {
	tb.Helper()
	c, l := capabilities.Decode([]byte(benchdata.Capabilities))
	must(tb, l)
	caps, l := capabilities.Resolve(c)
	must(tb, l)
	return caps
}

func must(tb testing.TB, l diag.List) {
	tb.Helper()
	if l.HasErrors() {
		tb.Fatal(l)
	}
}
