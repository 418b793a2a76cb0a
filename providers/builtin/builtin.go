// Package builtin is the list of providers this release renders and reads
// status from. It is the only package that imports every provider: the
// render engine picks from it by name, the status reporter asks it for each
// provider's status translation, and `airunway-render version` prints it.
// Adding a provider is one line here and one entry in the capability
// catalogue (package capabilities), which a test keeps in step.
package builtin

import (
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/dynamo"
	"github.com/airunway-render/airunway-render/providers/kaito"
	"github.com/airunway-render/airunway-render/providers/kuberay"
	"github.com/airunway-render/airunway-render/providers/llmd"
	"github.com/airunway-render/airunway-render/providers/vllm"
)

// Providers lists the built-in providers in name order.
func Providers() []providers.Provider {
	return []providers.Provider{
		dynamo.Provider{},
		kaito.Provider{},
		kuberay.Provider{},
		llmd.Provider{},
		vllm.Provider{},
	}
}

// ByName returns the built-in providers keyed by name; the map is the
// caller's to change.
func ByName() map[string]providers.Provider {
	out := map[string]providers.Provider{}
	for _, p := range Providers() {
		out[p.Name()] = p
	}
	return out
}
