package v1alpha1

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/api/hub"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// upstreamSchemaFile is the published upstream CRD schema our Go types must
// mirror (AI Runway main at b0d3fb77: v0.7.0 plus status.gateway.apiFormats;
// airunway.ai/v1alpha1 ModelDeployment).
const upstreamSchemaFile = "../../schemas/airunway/airunway.ai_modeldeployment_v1alpha1_main-b0d3fb77.json"

// openAPISchema is the subset of a structural OpenAPI v3 schema the parity
// tests read.
type openAPISchema struct {
	Type                 string                    `json:"type"`
	Format               string                    `json:"format"`
	Properties           map[string]*openAPISchema `json:"properties"`
	Items                *openAPISchema            `json:"items"`
	AdditionalProperties *openAPISchema            `json:"additionalProperties"`
	Required             []string                  `json:"required"`
	Enum                 []any                     `json:"enum"`
	Default              json.RawMessage           `json:"default"`
	Pattern              string                    `json:"pattern"`
	MaxLength            *int                      `json:"maxLength"`
	MaxItems             *int                      `json:"maxItems"`
	Minimum              *float64                  `json:"minimum"`
	PreserveUnknown      bool                      `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString          bool                      `json:"x-kubernetes-int-or-string"`
}

func loadSpecSchema(t *testing.T) *openAPISchema {
	t.Helper()
	data, err := os.ReadFile(upstreamSchemaFile)
	require.NoError(t, err)
	var doc struct {
		Kind    string         `json:"kind"`
		Version string         `json:"version"`
		Schema  *openAPISchema `json:"openAPIV3Schema"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.NotNil(t, doc.Schema)
	require.Equal(t, hub.KindModelDeployment, doc.Kind)
	require.Equal(t, Version, doc.Version)
	require.NotNil(t, doc.Schema.Properties["spec"])
	return doc.Schema.Properties["spec"]
}

// supersetFields are Kubernetes core types embedded in the spec: upstream
// publishes the schema of the Kubernetes release it was built with, so our
// (possibly newer) Go type may have more fields, never fewer.
var supersetFields = map[string]bool{"spec.env": true, "spec.tolerations": true}

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage{})
	intOrStringType = reflect.TypeOf(intstr.IntOrString{})
	quantityType    = reflect.TypeOf(resource.Quantity{})
)

type jsonField struct {
	typ       reflect.Type
	omitempty bool
}

// jsonFields lists a struct's fields by JSON name, flattening inlined
// embedded structs the way encoding/json does.
func jsonFields(t reflect.Type) map[string]jsonField {
	out := map[string]jsonField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = jsonField{typ: f.Type, omitempty: strings.Contains(","+opts+",", ",omitempty,")}
	}
	return out
}

// parityWalker walks a schema and a Go type side by side and records every
// disagreement, so one run lists all of them.
type parityWalker struct {
	problems []string
	visited  int
}

func (w *parityWalker) fail(path, format string, args ...any) {
	w.problems = append(w.problems, path+": "+fmt.Sprintf(format, args...))
}

func (w *parityWalker) walk(path string, s *openAPISchema, typ reflect.Type, superset bool) {
	w.visited++
	superset = superset || supersetFields[path]
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ {
	case rawMessageType:
		if s.Type != "object" || !s.PreserveUnknown {
			w.fail(path, "Go json.RawMessage needs an object with x-kubernetes-preserve-unknown-fields, schema has type %q preserve=%v", s.Type, s.PreserveUnknown)
		}
		return
	case intOrStringType, quantityType:
		if !s.IntOrString {
			w.fail(path, "Go %s needs x-kubernetes-int-or-string, schema has type %q", typ, s.Type)
		}
		return
	}
	if s.PreserveUnknown || s.IntOrString {
		w.fail(path, "schema is free-form/int-or-string but Go type is %s", typ)
		return
	}
	switch typ.Kind() {
	case reflect.String:
		w.expectType(path, s, "string", typ)
	case reflect.Bool:
		w.expectType(path, s, "boolean", typ)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.expectType(path, s, "integer", typ)
		if s.Format != "" && s.Format != fmt.Sprintf("int%d", typ.Bits()) {
			w.fail(path, "schema format %q but Go type is %s", s.Format, typ)
		}
	case reflect.Slice:
		if w.expectType(path, s, "array", typ) {
			if s.Items == nil {
				w.fail(path, "array schema without items")
				return
			}
			w.walk(path+"[]", s.Items, typ.Elem(), superset)
		}
	case reflect.Map:
		if !w.expectType(path, s, "object", typ) {
			return
		}
		if typ.Key().Kind() != reflect.String {
			w.fail(path, "Go map key is %s, JSON keys are strings", typ.Key())
		}
		if s.AdditionalProperties == nil || len(s.Properties) > 0 {
			w.fail(path, "Go %s needs an object schema with additionalProperties only", typ)
			return
		}
		w.walk(path+"{}", s.AdditionalProperties, typ.Elem(), superset)
	case reflect.Struct:
		if !w.expectType(path, s, "object", typ) {
			return
		}
		if s.AdditionalProperties != nil {
			w.fail(path, "schema has additionalProperties but Go type is struct %s", typ)
		}
		fields := jsonFields(typ)
		for _, name := range sortedKeys(s.Properties) {
			f, ok := fields[name]
			if !ok {
				w.fail(path+"."+name, "schema property has no field in Go type %s", typ)
				continue
			}
			w.walk(path+"."+name, s.Properties[name], f.typ, superset)
		}
		if !superset {
			for _, name := range sortedKeys(fields) {
				if _, ok := s.Properties[name]; !ok {
					w.fail(path+"."+name, "Go field of %s is not in the schema", typ)
				}
			}
		}
		for _, name := range s.Required {
			if f, ok := fields[name]; ok && f.omitempty {
				w.fail(path+"."+name, "schema requires the field but its Go json tag has omitempty")
			}
		}
	default:
		w.fail(path, "unexpected Go kind %s", typ.Kind())
	}
}

func (w *parityWalker) expectType(path string, s *openAPISchema, want string, typ reflect.Type) bool {
	if s.Type != want {
		w.fail(path, "schema type %q but Go type %s needs %q", s.Type, typ, want)
		return false
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Every property of the upstream schema has a Go field with the same JSON
// name and a matching type, and (outside Kubernetes core types) every Go
// field is in the schema.
func TestSchemaParityModelDeploymentSpec(t *testing.T) {
	spec := loadSpecSchema(t)
	w := &parityWalker{}
	w.walk("spec", spec, reflect.TypeOf(ModelDeploymentSpec{}), false)
	require.Emptyf(t, w.problems, "Go types and the upstream schema disagree:\n  %s", strings.Join(w.problems, "\n  "))
	require.Greater(t, w.visited, 60, "the walk visited suspiciously few schema nodes")
}

// The walker itself must catch the mismatches it claims to catch.
func TestSchemaParityWalkerDetectsMismatches(t *testing.T) {
	type inner struct {
		A string `json:"a"`
	}
	type goType struct {
		Name   string            `json:"name,omitempty"`
		Count  *int64            `json:"count,omitempty"`
		Inner  inner             `json:"inner"`
		Extra  bool              `json:"extra,omitempty"`
		Labels map[string]string `json:"labels,omitempty"`
		Raw    json.RawMessage   `json:"raw,omitempty"`
		Size   *intstr.IntOrString
		List   []int32 `json:"list"`
	}
	var s openAPISchema
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","required":["name"],"properties":{
		"name":{"type":"string"},
		"count":{"type":"integer","format":"int32"},
		"inner":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}}},
		"labels":{"type":"array","items":{"type":"string"}},
		"raw":{"type":"object"},
		"Size":{"type":"string"},
		"list":{"type":"array","items":{"type":"integer","format":"int32"}},
		"missing":{"type":"string"}}}`), &s))
	w := &parityWalker{}
	w.walk("x", &s, reflect.TypeOf(goType{}), false)
	require.ElementsMatch(t, []string{
		`x.count: schema format "int32" but Go type is int64`,
		`x.inner.a: schema type "integer" but Go type string needs "string"`,
		`x.inner.b: schema property has no field in Go type v1alpha1.inner`,
		`x.labels: schema type "array" but Go type map[string]string needs "object"`,
		`x.raw: Go json.RawMessage needs an object with x-kubernetes-preserve-unknown-fields, schema has type "object" preserve=false`,
		`x.Size: Go intstr.IntOrString needs x-kubernetes-int-or-string, schema has type "string"`,
		`x.missing: schema property has no field in Go type v1alpha1.goType`,
		`x.extra: Go field of v1alpha1.goType is not in the schema`,
		`x.name: schema requires the field but its Go json tag has omitempty`,
	}, w.problems)
}

// enumPaths maps every enum in the schema (outside Kubernetes core types)
// to the Go values the validator accepts.
func TestSchemaParityEnums(t *testing.T) {
	spec := loadSpecSchema(t)
	goEnums := map[string][]string{
		"spec.model.source":                       {hub.SourceHuggingFace, hub.SourceCustom},
		"spec.model.storage.volumes[].purpose":    {hub.PurposeModelCache, hub.PurposeCompilationCache, hub.PurposeCustom},
		"spec.model.storage.volumes[].accessMode": hub.AccessModes,
		"spec.engine.type":                        hub.Engines,
		"spec.serving.mode":                       {hub.ModeAggregated, hub.ModeDisaggregated},
	}
	found := map[string][]string{}
	var collect func(path string, s *openAPISchema)
	collect = func(path string, s *openAPISchema) {
		if supersetFields[path] {
			return
		}
		if len(s.Enum) > 0 {
			for _, v := range s.Enum {
				found[path] = append(found[path], fmt.Sprint(v))
			}
		}
		for name, p := range s.Properties {
			collect(path+"."+name, p)
		}
		if s.Items != nil {
			collect(path+"[]", s.Items)
		}
	}
	collect("spec", spec)
	require.ElementsMatch(t, sortedKeys(goEnums), sortedKeys(found), "enum paths")
	for path, values := range goEnums {
		require.ElementsMatch(t, found[path], values, path)
	}

	// Every enum value decodes and validates; a value outside it is
	// rejected at that path.
	for _, v := range hub.Engines {
		md := decodeYAML(t, mdDoc("", fmt.Sprintf(`{model: {id: m}, engine: {type: %s}}`, v)))
		DefaultModelDeployment(md)
		requireProblems(t, validate(md).Errors())
	}
}

// Numeric and string limits of the schema match the validator's.
func TestSchemaParityLimits(t *testing.T) {
	spec := loadSpecSchema(t)
	vols := spec.Properties["model"].Properties["storage"].Properties["volumes"]
	require.NotNil(t, vols.MaxItems)
	require.Equal(t, hub.MaxVolumes, *vols.MaxItems)
	name := vols.Items.Properties["name"]
	require.Equal(t, hub.VolumeNameRe.String(), name.Pattern)
	require.NotNil(t, name.MaxLength)
	require.Equal(t, 63, *name.MaxLength)
	require.Equal(t, []string{"name"}, vols.Items.Required)
	require.Equal(t, []string{"model"}, spec.Required)

	// Every integer of our own types has minimum 0, which the validator
	// enforces as "must be greater than or equal to 0".
	var ints []string
	var collect func(path string, s *openAPISchema)
	collect = func(path string, s *openAPISchema) {
		if supersetFields[path] {
			return
		}
		if s.Type == "integer" {
			ints = append(ints, path)
			if path != "spec.engine.contextLength" {
				require.NotNilf(t, s.Minimum, "%s has no minimum", path)
				require.Zero(t, *s.Minimum, path)
			}
		}
		for n, p := range s.Properties {
			collect(path+"."+n, p)
		}
	}
	collect("spec", spec)
	require.ElementsMatch(t, []string{
		"spec.engine.contextLength",
		"spec.resources.gpu.count",
		"spec.scaling.replicas",
		"spec.scaling.prefill.replicas", "spec.scaling.prefill.gpu.count",
		"spec.scaling.decode.replicas", "spec.scaling.decode.gpu.count",
	}, ints)
}

// defaultedPaths lists the schema's `default:` markers (outside Kubernetes
// core types) as segment lists; "[]" stands for a list element.
func defaultedPaths(s *openAPISchema, prefix []string, out map[string][]string) {
	if len(prefix) > 0 && supersetFields["spec."+strings.Join(prefix, ".")] {
		return
	}
	if len(s.Default) > 0 {
		out[strings.Join(prefix, ".")] = append([]string(nil), prefix...)
	}
	for name, p := range s.Properties {
		defaultedPaths(p, append(append([]string(nil), prefix...), name), out)
	}
	if s.Items != nil {
		defaultedPaths(s.Items, append(append([]string(nil), prefix...), "[]"), out)
	}
}

// skeleton builds the smallest JSON value of schema s that contains every
// object on segs except the last segment, which stays absent. Required
// properties get placeholders.
func skeleton(s *openAPISchema, segs []string) any {
	if segs[0] == "[]" {
		return []any{skeleton(s.Items, segs[1:])}
	}
	m := map[string]any{}
	for _, r := range s.Required {
		switch s.Properties[r].Type {
		case "string":
			m[r] = "x"
		default:
			m[r] = map[string]any{}
		}
	}
	if len(segs) > 1 {
		m[segs[0]] = skeleton(s.Properties[segs[0]], segs[1:])
	}
	return m
}

// lookup follows segs through decoded JSON; "[]" takes the first element.
func lookup(v any, segs []string) (any, bool) {
	for _, seg := range segs {
		if seg == "[]" {
			l, ok := v.([]any)
			if !ok || len(l) == 0 {
				return nil, false
			}
			v = l[0]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

// crdDefaulted decodes a spec skeleton and applies only the CRD default
// layer, returning the spec as plain JSON data.
func crdDefaulted(t *testing.T, spec any) map[string]any {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"apiVersion": APIVersion, "kind": hub.KindModelDeployment, "metadata": map[string]any{"name": "x"}, "spec": spec})
	require.NoError(t, err)
	md, problems := DecodeModelDeployment(doc)
	require.Emptyf(t, problems, "skeleton %s does not decode", doc)
	h, _ := md.ConvertToHub()
	hub.ApplyCRDDefaults(&h.Spec)
	out, err := json.Marshal(h.Spec)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	return m
}

// Every `default:` of the upstream schema is applied by the CRD default
// layer with the same value where its parent exists, and not where the
// (optional) parent is absent.
func TestSchemaParityDefaults(t *testing.T) {
	spec := loadSpecSchema(t)
	paths := map[string][]string{}
	defaultedPaths(spec, nil, paths)
	require.ElementsMatch(t, []string{
		"model.source",
		"model.storage.volumes.[].purpose", "model.storage.volumes.[].readOnly",
		"engine.enablePrefixCaching", "engine.enforceEager", "engine.trustRemoteCode",
		"serving.mode",
		"scaling.replicas",
		"scaling.prefill.replicas", "scaling.prefill.gpu.count", "scaling.prefill.gpu.type",
		"scaling.decode.replicas", "scaling.decode.gpu.count", "scaling.decode.gpu.type",
		"resources.gpu.count", "resources.gpu.type",
	}, sortedKeys(paths))

	for _, key := range sortedKeys(paths) {
		segs := paths[key]
		t.Run(key, func(t *testing.T) {
			var want any
			require.NoError(t, json.Unmarshal(schemaAt(spec, segs).Default, &want))

			got, ok := lookup(crdDefaulted(t, skeleton(spec, segs)), segs)
			require.True(t, ok, "default not applied although the parent exists")
			require.Equal(t, want, got)

			parent, grand := segs[len(segs)-2], schemaAt(spec, segs[:len(segs)-2])
			if parent == "[]" || slices.Contains(grand.Required, parent) {
				return // a required parent or list element always exists
			}
			_, ok = lookup(crdDefaulted(t, skeleton(spec, segs[:len(segs)-1])), segs)
			require.False(t, ok, "default applied although the parent %q is absent", parent)
		})
	}

	// The CRD layer sets nothing the schema has no default for: with every
	// defaulted parent present, the fields added are exactly the defaults.
	all := map[string]any{}
	for _, segs := range paths {
		mergeJSON(all, skeleton(spec, segs).(map[string]any))
	}
	before := leafPaths(all, "")
	after := leafPaths(crdDefaulted(t, all), "")
	var added []string
	for _, p := range after {
		if !slices.Contains(before, p) {
			added = append(added, p)
		}
	}
	require.ElementsMatch(t, sortedKeys(paths), added)
}

func schemaAt(s *openAPISchema, segs []string) *openAPISchema {
	for _, seg := range segs {
		if seg == "[]" {
			s = s.Items
		} else {
			s = s.Properties[seg]
		}
	}
	return s
}

func mergeJSON(dst, src map[string]any) {
	for k, v := range src {
		switch sv := v.(type) {
		case map[string]any:
			if dv, ok := dst[k].(map[string]any); ok {
				mergeJSON(dv, sv)
				continue
			}
		case []any:
			if dv, ok := dst[k].([]any); ok && len(dv) == 1 && len(sv) == 1 {
				dm, dok := dv[0].(map[string]any)
				sm, sok := sv[0].(map[string]any)
				if dok && sok {
					mergeJSON(dm, sm)
					continue
				}
			}
		}
		dst[k] = v
	}
}

// leafPaths lists the scalar leaves of decoded JSON with "[]" for list
// elements; empty objects are leaves too.
func leafPaths(v any, at string) []string {
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			return []string{at}
		}
		var out []string
		for k, c := range t {
			out = append(out, leafPaths(c, join(k))...)
		}
		return out
	case []any:
		var out []string
		for _, c := range t {
			out = append(out, leafPaths(c, join("[]"))...)
		}
		return out
	}
	return []string{at}
}
