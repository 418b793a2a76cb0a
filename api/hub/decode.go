package hub

import (
	"bytes"
	"fmt"
	"regexp"
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
		field, msg := describeDecodeError(err)
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
// message that says what the field must be.
func describeDecodeError(err error) (string, string) {
	m := typeErrRe.FindStringSubmatch(err.Error())
	if m == nil {
		return "", fmt.Sprintf("cannot decode: %v", err)
	}
	return m[2], fmt.Sprintf("must be %s, got %s", jsonTypeName(m[3]), m[1])
}

func jsonTypeName(goType string) string {
	goType = strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "v1alpha"), strings.HasPrefix(goType, "hub."), strings.HasPrefix(goType, "v1."):
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
