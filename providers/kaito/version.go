package kaito

import (
	"fmt"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/providers"
)

// Releases where KAITO's Workspace behaviour changes for what we render.
var (
	// v0.8.0 made label-selected "bring your own" nodes the BYO mechanism
	// (GPU Feature Discovery labels checked by the webhook, instanceType
	// empty unless node auto-provisioning is on) and left preferredNodes
	// deprecated and unread. v0.7.x still behaves like v0.6.x.
	release0_8 = capabilities.Semver{0, 8, 0}
	// v0.9.0 accepts any Hugging Face id `org/model` as a preset name;
	// earlier releases accept only their registered preset names.
	release0_9 = capabilities.Semver{0, 9, 0}
)

// release is the KAITO operator release the capability file declares, with
// the behaviour switches rendering depends on.
type release struct {
	version capabilities.Semver
	// labelBYO: nodes are selected by `resource.labelSelector` alone (GFD
	// labels forced for GPUs), `preferredNodes` is refused, and
	// `instanceType` must be set exactly when node auto-provisioning is on.
	labelBYO bool
	// hfPresetNames: `inference.preset.name` may be a Hugging Face id.
	hfPresetNames bool
}

func (r release) String() string { return "KAITO " + r.version.String() }

// releaseOf reads the declared release; a request without a capability
// entry (only in tests) gets the embedded default.
func releaseOf(req *providers.Request) (release, error) {
	s := ""
	if req.Provider != nil {
		s = req.Provider.Version
	}
	if s == "" {
		s = capabilities.BuiltinFor(capabilities.KAITO).DefaultVersion
	}
	v, err := capabilities.ParseSemver(s)
	if err != nil {
		return release{}, fmt.Errorf("kaito version: %w", err)
	}
	return release{
		version:       v,
		labelBYO:      !v.Less(release0_8),
		hfPresetNames: !v.Less(release0_9),
	}, nil
}
