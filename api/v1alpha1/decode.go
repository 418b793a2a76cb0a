package v1alpha1

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	kjson "sigs.k8s.io/json"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

var (
	typeErrRe   = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field [A-Za-z0-9_]+\.(\S+) of type (\S+)$`)
	strictErrRe = regexp.MustCompile(`^(unknown|duplicate) field "(.*)"$`)
)

// DecodeModelDeployment strictly decodes a ModelDeployment from JSON. Unknown
// and duplicate fields are errors at their path, as the API server reports
// them with `kubectl apply --validate=strict`; an object past the input
// limits (limits.go) is refused before it is decoded.
func DecodeModelDeployment(data []byte) (*ModelDeployment, diag.List) {
	md := &ModelDeployment{}
	problems := decodeStrict(data, md, "ModelDeployment")
	// The API server prunes a null in a non-nullable field, so
	// `overrides: null` reaches upstream as "no overrides".
	if p := md.Spec.Provider; p != nil && string(bytes.TrimSpace(p.Overrides)) == "null" {
		p.Overrides = nil
	}
	return md, problems
}

// DecodeClusterCapabilities strictly decodes a ClusterCapabilities object.
func DecodeClusterCapabilities(data []byte) (*ClusterCapabilities, diag.List) {
	c := &ClusterCapabilities{}
	problems := decodeStrict(data, c, "ClusterCapabilities")
	return c, problems
}

func decodeStrict(data []byte, into any, kind string) diag.List {
	if problems := hub.CheckLimits(data, kind); problems.HasErrors() {
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
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "v1alpha1."), strings.HasPrefix(goType, "hub."), strings.HasPrefix(goType, "v1."):
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
