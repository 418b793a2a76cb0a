package providers

import (
	"encoding/json"
	"fmt"
)

// refusedOverrideKeys are top-level keys overrides may never touch: they
// would change the object's identity or write status.
var refusedOverrideKeys = []string{"apiVersion", "kind", "metadata", "status"}

// ApplyOverrides deep-merges `spec.provider.overrides` into the root of a
// rendered object, after every generated field is in place. Maps merge
// recursively, any other value replaces, and a JSON null deletes the key.
// Upstream deletes on null only for KAITO; here every provider does, so one
// override document means the same thing whichever provider renders it.
func ApplyOverrides(obj Object, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var patch map[string]any
	if err := json.Unmarshal(raw, &patch); err != nil {
		return fmt.Errorf("overrides must be a JSON object")
	}
	for _, k := range refusedOverrideKeys {
		if _, ok := patch[k]; ok {
			return fmt.Errorf("overriding %q is not allowed", k)
		}
	}
	mergeInto(obj, patch)
	return nil
}

func mergeInto(dst, patch map[string]any) {
	for k, pv := range patch {
		if pv == nil {
			delete(dst, k)
			continue
		}
		pm, pIsMap := pv.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if pIsMap && dIsMap {
			mergeInto(dm, pm)
			continue
		}
		dst[k] = withoutNulls(pv)
	}
}

// withoutNulls copies a value that replaces, rather than merges into, what
// was there. Its nulls have nothing to delete, and must not reach the
// output as nulls: keys set to null are left out, and so are null list
// items (which validation refuses before they get here).
func withoutNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if e != nil {
				out = append(out, withoutNulls(e))
			}
		}
		return out
	}
	return v
}
