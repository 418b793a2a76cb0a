package gateway

import (
	"github.com/airunway-render/airunway-render/providers"
)

// inferencePool renders the pool in the API version the cluster serves:
// v1 has `selector.matchLabels`, `targetPorts` and `endpointPickerRef`;
// v1alpha2 a plain label map, `targetPortNumber` and `extensionRef`.
func (pl *plan) inferencePool() providers.Object {
	spec := map[string]any{}
	if pl.group == PoolGroupV1Alpha2 {
		spec["selector"] = providers.StringMap(pl.backend.PodSelector)
		spec["targetPortNumber"] = int64(pl.backend.Port)
		spec["extensionRef"] = map[string]any{"name": eppName(pl.md), "portNumber": int64(EndpointPickerPort)}
	} else {
		spec["selector"] = map[string]any{"matchLabels": providers.StringMap(pl.backend.PodSelector)}
		spec["targetPorts"] = []any{map[string]any{"number": int64(pl.backend.Port)}}
		spec["endpointPickerRef"] = map[string]any{"name": eppName(pl.md), "port": map[string]any{"number": int64(EndpointPickerPort)}}
	}
	return providers.Object{
		"apiVersion": pl.group + "/" + pl.version,
		"kind":       PoolKind,
		"metadata":   pl.meta(pl.pool.name, pl.pool.namespace, pl.objectLabels()),
		"spec":       spec,
	}
}
