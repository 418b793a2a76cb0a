// Package migrations rewrites ModelDeployments in the YAML their authors
// wrote (comments, key order and sequence indentation kept), and only when
// the model means the same afterwards. `airunway-render migrate` drives it
// over files and, as a KRM function, over a ResourceList:
//
//   - within a served version, each deprecated field moves to its
//     replacement (ForVersion): `spec.image` moves to `spec.engine.image`,
//     in v1alpha1 and v1alpha2 alike;
//   - between served versions (Convert, `migrate --to`), the apiVersion
//     changes and the fields v1alpha1 lacks move between `spec` and the
//     v1alpha1 conversion annotation.
//
// It is a package of its own, not part of the version packages, because it
// edits YAML node trees: the status reporter imports the version packages
// for their types and conversions and must not link a YAML library.
package migrations

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/manifest"
)

// ToHub decodes, converts and defaults one served version's
// ModelDeployment, as the version packages' ToHub functions do.
type ToHub func(data []byte) (*hub.ModelDeployment, diag.List)

// ForVersion returns the migration of a served version whose objects
// toHub reads. The migration changes one ModelDeployment in place and says
// what changed. A spec that is not a mapping is left alone (rendering
// reports it). A move that would change what the model means is refused
// with an error, and obj is then left as it was only if the caller
// discards it: callers migrate a copy.
func ForVersion(toHub ToHub) func(obj *yaml.RNode) ([]string, error) {
	return func(obj *yaml.RNode) ([]string, error) { return apply(obj, toHub) }
}

func apply(obj *yaml.RNode, toHub ToHub) ([]string, error) {
	spec := obj.Field("spec")
	if spec == nil || spec.Value.YNode().Kind != yaml.MappingNode {
		return nil, nil
	}
	orig := obj.Copy()
	changes, err := moveImage(spec.Value)
	if err != nil || len(changes) == 0 {
		return changes, err
	}
	before, decoded := effectiveSpec(orig, toHub)
	if !decoded {
		return changes, nil
	}
	after, _ := effectiveSpec(obj, toHub)
	if diffs := specDifferences(before, after); len(diffs) > 0 {
		what := "that field"
		if len(diffs) > 1 {
			what = "those fields"
		}
		return nil, fmt.Errorf("`spec.image` was not moved: as `spec.engine.image` it would change what the model means, because upstream's defaults would then set %s; write %s in `spec` with the value you want, then run migrate again", strings.Join(diffs, ", "), what)
	}
	return changes, nil
}

// effectiveSpec is what a ModelDeployment means after upstream's defaults,
// flattened to field paths, with the image under the one path it has in
// the newest form. A migration must leave it unchanged: moving a field is
// not allowed to switch on a default (creating `spec.engine` turns on its
// CRD defaults, and `spec.image` alone suppresses the webhook's GPU
// default). It is false for an object the renderer cannot decode; that
// object is migrated on its structure alone and refused when rendered.
func effectiveSpec(n *yaml.RNode, toHub ToHub) (map[string]string, bool) {
	js, l := manifest.ObjectJSON(n)
	if l.HasErrors() {
		return nil, false
	}
	return specOf(js, toHub)
}

// specOf is effectiveSpec of an object already read as JSON.
func specOf(js []byte, toHub ToHub) (map[string]string, bool) {
	md, l := toHub(js)
	if l.HasErrors() {
		return nil, false
	}
	image := md.Spec.EngineImage()
	md.Spec.Image = ""
	if e := md.Spec.Engine; e != nil {
		e.Image = ""
		// Absent and false mean the same for these two (every reader
		// takes absent as false), so their CRD defaults of false, which
		// creating `spec.engine` switches on, change nothing.
		e.EnforceEager = trueOrNil(e.EnforceEager)
		e.TrustRemoteCode = trueOrNil(e.TrustRemoteCode)
	}
	b, err := json.Marshal(md.Spec)
	if err != nil {
		return nil, false
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, false
	}
	flat := map[string]string{}
	flatten("spec", tree, flat)
	if image != "" {
		flat["spec.engine.image"] = strconv.Quote(image)
	}
	return flat, true
}

// trueOrNil is b when it is true, else nil.
func trueOrNil(b *bool) *bool {
	if b != nil && *b {
		return b
	}
	return nil
}

// flatten records each scalar of a decoded JSON tree under its field path.
func flatten(at string, v any, into map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			flatten(at+"."+k, child, into)
		}
	case []any:
		for i, child := range v {
			flatten(fmt.Sprintf("%s[%d]", at, i), child, into)
		}
	default:
		b, _ := json.Marshal(v)
		into[at] = string(b)
	}
}

// specDifferences lists, sorted, each field whose effective value differs:
// "`spec.engine.enablePrefixCaching` to true (unset before)".
func specDifferences(before, after map[string]string) []string {
	var diffs []string
	for _, path := range slices.Sorted(maps.Keys(after)) {
		old, had := before[path]
		switch {
		case !had:
			diffs = append(diffs, fmt.Sprintf("`%s` to %s (unset before)", path, after[path]))
		case old != after[path]:
			diffs = append(diffs, fmt.Sprintf("`%s` to %s (%s before)", path, after[path], old))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(before)) {
		if _, kept := after[path]; !kept {
			diffs = append(diffs, fmt.Sprintf("`%s` to unset (%s before)", path, before[path]))
		}
	}
	return diffs
}

// moveImage moves the legacy `spec.image` to `spec.engine.image`, keeping
// its comments; equal values merge, different ones are an error (the
// renderer refuses them too).
func moveImage(spec *yaml.RNode) ([]string, error) {
	legacy := spec.Field("image")
	if legacy == nil {
		return nil, nil
	}
	engine, err := spec.Pipe(yaml.LookupCreate(yaml.MappingNode, "engine"))
	if err != nil {
		return nil, fmt.Errorf("`spec.engine` must be a mapping to take `spec.image`: %v", err)
	}
	if current := engine.Field("image"); current != nil {
		if current.Value.YNode().Value != legacy.Value.YNode().Value {
			return nil, fmt.Errorf("`spec.image` %q and `spec.engine.image` %q differ: keep one of them by hand", legacy.Value.YNode().Value, current.Value.YNode().Value)
		}
		if err := spec.PipeE(yaml.Clear("image")); err != nil {
			return nil, err
		}
		return []string{"removed `spec.image`, the same as `spec.engine.image`"}, nil
	}
	// Move the key node itself: its comments go with it.
	engine.YNode().Content = append(engine.YNode().Content, legacy.Key.YNode(), legacy.Value.YNode())
	if err := spec.PipeE(yaml.Clear("image")); err != nil {
		return nil, err
	}
	return []string{"moved `spec.image` to `spec.engine.image`"}, nil
}
