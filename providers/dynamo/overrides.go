package dynamo

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/airunway-render/airunway-render/diag"
)

// Typed override keys: upstream reads them into its own settings. They are
// not DynamoGraphDeployment fields, so (unlike upstream, which also merges
// them verbatim into the object's root where the CRD schema rejects them)
// they are consumed here and only the rest of the overrides is deep-merged.
const (
	overrideRouterMode = "routerMode"
	overrideFrontend   = "frontend"
	overrideEpp        = "epp"
)

var typedOverrideKeys = []string{overrideEpp, overrideFrontend, overrideRouterMode}

// typedOverrides are upstream's DynamoOverrides.
type typedOverrides struct {
	RouterMode string
	Frontend   *frontendOverrides
	Epp        *eppOverrides
	// Intent holds the intent mode's keys (intent.go).
	Intent intentOverrides
}

type frontendOverrides struct {
	Replicas  *int32             `json:"replicas,omitempty"`
	Resources *resourceOverrides `json:"resources,omitempty"`
}

type resourceOverrides struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

type eppOverrides struct {
	Replicas *int32 `json:"replicas,omitempty"`
	Image    string `json:"image,omitempty"`
}

// splitOverrides separates the typed keys from the rest of the overrides.
// It returns the typed settings and the remaining JSON object to deep-merge
// (nil when nothing remains). A typed key with the wrong shape, or an
// unknown key inside `frontend` or `epp`, is an error: upstream would ignore
// it silently and then merge it where the schema rejects it.
func splitOverrides(raw json.RawMessage, l *diag.List) (typedOverrides, json.RawMessage) {
	var t typedOverrides
	if len(raw) == 0 {
		return t, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		l.Errorf(overridesField, "must be a JSON object")
		return t, nil
	}
	t.Intent = splitIntent(all, l)
	if v, ok := all[overrideRouterMode]; ok {
		if err := json.Unmarshal(v, &t.RouterMode); err != nil || t.RouterMode == "" {
			l.Errorf(overridesField+"."+overrideRouterMode, "must be a non-empty string such as \"round-robin\" or \"kv\"")
		}
	}
	if v, ok := all[overrideFrontend]; ok {
		t.Frontend = &frontendOverrides{}
		decodeStrict(v, t.Frontend, overridesField+"."+overrideFrontend, "replicas, resources.cpu, resources.memory", l)
	}
	if v, ok := all[overrideEpp]; ok {
		t.Epp = &eppOverrides{}
		decodeStrict(v, t.Epp, overridesField+"."+overrideEpp, "replicas, image", l)
	}
	for _, k := range typedOverrideKeys {
		delete(all, k)
	}
	if len(all) == 0 {
		return t, nil
	}
	rest, err := json.Marshal(all)
	if err != nil {
		l.Errorf(overridesField, "internal error: %v", err)
		return t, nil
	}
	return t, rest
}

func decodeStrict(data json.RawMessage, into any, field, supported string, l *diag.List) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		msg := err.Error()
		if strings.HasPrefix(msg, "json: unknown field ") {
			msg = strings.TrimPrefix(msg, "json: ") + " (supported: " + supported + ")"
		}
		l.Errorf(field, "is not a valid Dynamo %s override: %s", strings.TrimPrefix(field, overridesField+"."), msg)
	}
}

// warnInapplicable reports typed overrides that configure a component the
// chosen topology does not have: they would otherwise be dropped silently.
func (t typedOverrides) warnInapplicable(gateway bool, l *diag.List) {
	var unused []string
	if gateway {
		if t.RouterMode != "" {
			unused = append(unused, overrideRouterMode)
		}
		if t.Frontend != nil {
			unused = append(unused, overrideFrontend)
		}
	} else if t.Epp != nil {
		unused = append(unused, overrideEpp)
	}
	why := "the standalone Frontend topology has no Epp service"
	if gateway {
		why = "the gateway topology routes through the Epp service and has no standalone Frontend"
	}
	for _, k := range unused {
		l.Warnf(diag.IgnoredField, overridesField+"."+k, "is ignored: %s", why)
	}
}
