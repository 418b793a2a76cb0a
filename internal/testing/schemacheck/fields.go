package schemacheck

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// itemsStep is the path element HasField reads as "the items of this array".
const itemsStep = "[]"

// HasField reports whether the schema of group/kind/version at exactly
// release ("" = newest) in channel ("" = the kind's default) declares the
// property path, for example
//
//	HasField("gateway.networking.k8s.io", "HTTPRoute", "v1", "v1.2.0", "standard", "spec", "rules", "[]", "timeouts")
//
// A renderer that emits a field only from some release on can test its
// cut-over against the real schemas with it. A field below a node that
// preserves unknown fields is not declared, so it is false. Stepping with
// "[]" into something that is not an array, or by name into an array, is an
// error: the path does not describe the schema's shape.
func HasField(group, kind, version, release, channel string, path ...string) (bool, error) {
	if len(path) == 0 {
		return false, fmt.Errorf("schemacheck: HasField path must not be empty")
	}
	f, err := lookup(gvk{group, kind, version}, release, channel)
	if err != nil {
		return false, err
	}
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(f.Schema, &s); err != nil {
		return false, fmt.Errorf("schemacheck: %s: %w", f.path, err)
	}
	node := &s
	for i, step := range path {
		at := strings.Join(path[:i], ".")
		if step == itemsStep {
			if node.Type != "array" {
				return false, fmt.Errorf("schemacheck: %s at %q must be an array to step into %q, but is %q", f.path, at, itemsStep, node.Type)
			}
			if node.Items == nil || node.Items.Schema == nil {
				return false, nil
			}
			node = node.Items.Schema
			continue
		}
		if node.Type == "array" {
			return false, fmt.Errorf("schemacheck: %s at %q is an array; the path must step into its items with %q before %q", f.path, at, itemsStep, step)
		}
		child, ok := node.Properties[step]
		if !ok {
			return false, nil
		}
		node = &child
	}
	return true, nil
}
