package builtin_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// TestEveryProviderIsObservableAndRoutable keeps the registry complete: the
// status reporter reads every provider's health back, and the gateway can
// route to every provider whose operator does not manage its own pool.
func TestEveryProviderIsObservableAndRoutable(t *testing.T) {
	for name, p := range builtin.ByName() {
		_, reports := p.(providers.Reporter)
		require.True(t, reports, "%s does not implement providers.Reporter", name)
		_, routable := p.(providers.Routable)
		managed := false
		for _, e := range capabilities.BuiltinFor(name).Engines {
			managed = managed || (e.Gateway != nil && e.Gateway.ManagesInferencePool)
		}
		require.True(t, routable || managed, "%s neither implements providers.Routable nor manages its own InferencePool", name)
	}
}

// TestListMatchesTheCatalogue keeps the two lists a new provider needs in
// step: every provider the capability catalogue describes is rendered, in
// the catalogue's (name) order, and nothing else is.
func TestListMatchesTheCatalogue(t *testing.T) {
	var names []string
	for _, p := range builtin.Providers() {
		names = append(names, p.Name())
	}
	require.Equal(t, capabilities.ProviderNames(), names)
}
