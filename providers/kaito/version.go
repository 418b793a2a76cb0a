package kaito

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// Releases where KAITO's Workspace behaviour changes for what we render.
var (
	// v0.8.0 made label-selected "bring your own" nodes the BYO mechanism
	// (GPU Feature Discovery labels checked by the webhook, instanceType
	// empty unless node auto-provisioning is on) and left preferredNodes
	// deprecated and unread. v0.7.x still behaves like v0.6.x.
	release0_8 = hub.MustParseRelease("0.8.0")
	// v0.9.0 accepts any Hugging Face id `org/model` as a preset name;
	// earlier releases accept only their registered preset names.
	release0_9 = hub.MustParseRelease("0.9.0")
	// v0.11.0 serves every preset from its model catalog, downloading the
	// weights at runtime: it never refuses a modelAccessSecret.
	release0_11 = hub.MustParseRelease("0.11.0")
)

// release is the KAITO operator release the capability file declares, with
// the behaviour switches rendering depends on.
type release struct {
	version *version.Version
	// labelBYO: nodes are selected by `resource.labelSelector` alone (GFD
	// labels forced for GPUs), `preferredNodes` is refused, and
	// `instanceType` must be set exactly when node auto-provisioning is on.
	labelBYO bool
	// hfPresetNames: `inference.preset.name` may be a Hugging Face id.
	hfPresetNames bool
	// catalogOnly: every preset comes from the model catalog (no Go
	// presets with weights in their images).
	catalogOnly bool
	// inferenceSet: the InferenceSet is served at v1beta1 and its
	// controller is on by default (hub.KAITOInferenceSetSince).
	inferenceSet bool
}

func (r release) String() string { return "KAITO " + r.version.String() }

// releaseOf reads the declared release, checked against the supported
// range when the capability file was resolved.
func releaseOf(req *providers.Request) (release, error) {
	v, err := hub.ParseRelease(req.Provider.Version)
	if err != nil {
		return release{}, fmt.Errorf("kaito version: %w", err)
	}
	return release{
		version:       v,
		labelBYO:      v.AtLeast(release0_8),
		hfPresetNames: v.AtLeast(release0_9),
		catalogOnly:   v.AtLeast(release0_11),
		inferenceSet:  v.AtLeast(hub.KAITOInferenceSetSince),
	}, nil
}

// UpgradeNotes implements providers.UpgradeNoter: crossing 0.8 replaces the
// Deployment behind every Workspace with a StatefulSet (KAITO v0.8.0,
// kaito-project/kaito#1523, marked breaking in its release notes; v0.6.2
// ran a Deployment unless multi-node vLLM needed a StatefulSet).
func (Provider) UpgradeNotes(from, to *version.Version) []providers.UpgradeNote {
	if from.LessThan(release0_8) && to.AtLeast(release0_8) {
		return []providers.UpgradeNote{{Breaking: true,
			Message: "KAITO 0.8 runs every Workspace as a StatefulSet and deletes the Deployment of 0.6 and 0.7: every KAITO model restarts during the operator upgrade, whatever the diff shows"}}
	}
	return nil
}
