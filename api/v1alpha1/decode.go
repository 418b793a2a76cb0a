package v1alpha1

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// DecodeModelDeployment strictly decodes a ModelDeployment from JSON
// (hub.DecodeStrict): unknown and duplicate fields are errors at their
// path, and an object past the input limits is refused before it is
// decoded.
func DecodeModelDeployment(data []byte) (*ModelDeployment, diag.List) {
	md := &ModelDeployment{}
	problems := hub.DecodeStrict(data, md, hub.KindModelDeployment)
	hub.PruneNullOverrides(md.Spec.Provider)
	return md, problems
}

// DecodeClusterCapabilities strictly decodes a ClusterCapabilities object.
func DecodeClusterCapabilities(data []byte) (*ClusterCapabilities, diag.List) {
	c := &ClusterCapabilities{}
	problems := hub.DecodeStrict(data, c, hub.KindClusterCapabilities)
	return c, problems
}

// DecodeModelCatalog strictly decodes a ModelCatalog object.
func DecodeModelCatalog(data []byte) (*ModelCatalog, diag.List) {
	c := &ModelCatalog{}
	problems := hub.DecodeStrict(data, c, hub.KindModelCatalog)
	return c, problems
}
