package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	kjson "sigs.k8s.io/json"

	"github.com/airunway-render/airunway-render/diag"
)

var (
	typeErrRe   = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field [A-Za-z0-9_]+\.(\S+) of type (\S+)$`)
	strictErrRe = regexp.MustCompile(`^(unknown|duplicate) field "(.*)"$`)
)

// DecodeStrict decodes one object of kind from JSON into a served
// version's type, as every served version does. Unknown and duplicate
// fields are errors at their path, as the API server reports them with
// `kubectl apply --validate=strict`; an object past the input limits
// (limits.go) is refused before it is decoded.
func DecodeStrict(data []byte, into any, kind string) diag.List {
	if problems := CheckLimits(data, kind); problems.HasErrors() {
		return problems
	}
	var problems diag.List
	strictErrs, err := kjson.UnmarshalStrict(data, into, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		field, msg := describeDecodeError(data, err)
		problems.Errorf(field, "%s", msg)
	}
	for _, se := range strictErrs {
		m := strictErrRe.FindStringSubmatch(se.Error())
		if m == nil {
			problems.Errorf("", "%s", se.Error())
			continue
		}
		if m[1] == "unknown" {
			problems.Errorf(m[2], "unknown field: `%s` is not part of the %s schema (check the spelling and the nesting level)", lastSegment(m[2]), kind)
		} else {
			problems.Errorf(m[2], "field is set more than once; it must appear only once")
		}
	}
	return problems
}

// describeDecodeError turns a JSON type error into a field path and a
// message that says what the field must be. The decoder's path names no
// list element (`spec.nodePools.gpu.perNode`); elementPath finds it in
// data.
func describeDecodeError(data []byte, err error) (string, string) {
	m := typeErrRe.FindStringSubmatch(err.Error())
	if m == nil {
		return "", fmt.Sprintf("cannot decode: %v", err)
	}
	return elementPath(data, m[2], m[1]), fmt.Sprintf("must be %s, got %s", jsonTypeName(m[3]), m[1])
}

// elementPath is path, a type error's field path without list indexes,
// with the index of every list it passes (`spec.nodePools[0].gpu.perNode`):
// at each list, the first element whose value at the rest of the path is
// of the JSON type the error got. A map's value (the decoder leaves out
// the key) is named by its key. path itself when data does not lead
// there.
func elementPath(data []byte, path, got string) string {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return path
	}
	got, _, _ = strings.Cut(got, " ") // "number 1.5"
	var segments []string
	if path != "" {
		segments = strings.Split(path, ".")
	}
	if found, ok := findWrong(v, segments, got); ok {
		return strings.TrimPrefix(found, ".")
	}
	return path
}

// findWrong follows segments from v to a value of JSON type got and
// returns the path it took, with list indexes and map keys. Where the
// path ends, a value of that type is the culprit before any of its own
// values: the error cannot tell an object given for a string from a map
// of strings holding an object, and the first is the likelier mistake.
func findWrong(v any, segments []string, got string) (string, bool) {
	if len(segments) == 0 && jsonKind(v) == got {
		return "", true
	}
	switch v := v.(type) {
	case map[string]any:
		if len(segments) > 0 {
			if child, ok := v[segments[0]]; ok {
				rest, ok := findWrong(child, segments[1:], got)
				return "." + segments[0] + rest, ok
			}
			// An embedded struct's Go name (a ModelCatalog row's
			// fit.Model): the JSON has its fields inline. The API's
			// field names start in lower case.
			if s := segments[0]; s != "" && s[0] >= 'A' && s[0] <= 'Z' {
				return findWrong(v, segments[1:], got)
			}
		}
		// a map's values: the decoder's path does not name their keys
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if rest, ok := findWrong(v[k], segments, got); ok {
				return "." + k + rest, true
			}
		}
	case []any:
		for i, e := range v {
			if rest, ok := findWrong(e, segments, got); ok {
				return fmt.Sprintf("[%d]%s", i, rest), true
			}
		}
	}
	return "", false
}

// jsonKind names v's JSON type as the decoder's type errors do.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

func jsonTypeName(goType string) string {
	goType = strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "v1alpha"), strings.HasPrefix(goType, "hub."), strings.HasPrefix(goType, "v1."), strings.HasPrefix(goType, "fit."):
		return "an object"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case goType == "intstr.IntOrString":
		return "an integer or a string"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return "of type " + goType
}

func lastSegment(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}

// PruneNullOverrides drops `overrides: null`: the API server prunes a null
// in a non-nullable field, so it reaches upstream as "no overrides".
func PruneNullOverrides(p *ProviderSpec) {
	if p != nil && string(bytes.TrimSpace(p.Overrides)) == "null" {
		p.Overrides = nil
	}
}

// CheckLegacyImage checks the legacy `spec.image`, the one field of
// upstream's v1alpha1 with a replacement, which every served version still
// serves: it is deprecated, and it must agree with `spec.engine.image`
// when both are set. The hub keeps it, because upstream's defaults read it
// (it suppresses the webhook's GPU default).
func CheckLegacyImage(s *ModelDeploymentSpec) diag.List {
	var l diag.List
	switch {
	case s.Image == "":
	case s.Engine != nil && s.Engine.Image != "" && s.Image != s.Engine.Image:
		l.Errorf("spec.engine.image", "%q conflicts with `spec.image` %q: when both are set they must be equal (prefer `spec.engine.image` and remove the legacy `spec.image`)", s.Engine.Image, s.Image)
	default:
		l.Warnf(diag.DeprecatedField, "spec.image", "is deprecated: set the image as `spec.engine.image` (`airunway-render migrate` moves it, or says which fields to set first)")
	}
	return l
}
