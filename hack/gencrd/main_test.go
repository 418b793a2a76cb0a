package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
	"github.com/airunway-render/airunway-render/reporter"
)

const repoRoot = "../.."

// TestCRDIsCurrent fails when the committed CRD is not what the Go types
// generate now.
func TestCRDIsCurrent(t *testing.T) {
	for _, out := range outputs {
		want, err := out.generate(repoRoot)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(repoRoot, out.file))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s is stale: run `make docs` (or go run ./hack/gencrd)", out.file)
	}
}

// committedCRD reads the CRD as a cluster would receive it.
func committedCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, outFile))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, crd))
	return crd
}

// validateAsAPIServer runs what the API server runs when a CRD is created,
// structural schema rules included.
func validateAsAPIServer(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	t.Helper()
	errs, err := schemacheck.ValidateCRD(crd)
	require.NoError(t, err)
	return errs
}

// TestCRDIsStructural: the API server accepts the CRD, its schema is
// structural, and it says what the brief of the file promises (names,
// scope, the status subresource, the printer columns, conditions as a
// list-map keyed by type).
func TestCRDIsStructural(t *testing.T) {
	crd := committedCRD(t)
	require.Empty(t, validateAsAPIServer(t, crd).ToAggregate())
	require.Len(t, crd.Spec.Versions, 1)
	v := crd.Spec.Versions[0]

	require.Equal(t, "clustercapabilities.airunway.ai", crd.Name)
	require.Equal(t, apiextensionsv1.CustomResourceDefinitionNames{
		Kind: "ClusterCapabilities", ListKind: "ClusterCapabilitiesList", Plural: "clustercapabilities", Singular: "clustercapabilities",
	}, crd.Spec.Names)
	require.Equal(t, apiextensionsv1.ClusterScoped, crd.Spec.Scope)
	require.True(t, v.Served)
	require.True(t, v.Storage)
	require.Equal(t, &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}, v.Subresources)
	var columns []string
	for _, c := range v.AdditionalPrinterColumns {
		columns = append(columns, c.Name+" "+c.JSONPath)
	}
	require.Equal(t, []string{
		`Current .status.conditions[?(@.type=="CapabilitiesCurrent")].status`,
		`Reason .status.conditions[?(@.type=="CapabilitiesCurrent")].reason`,
		"Age .metadata.creationTimestamp",
	}, columns)

	root := v.Schema.OpenAPIV3Schema
	require.Equal(t, []string{"apiVersion", "kind", "metadata", "spec", "status"}, slices.Sorted(maps.Keys(root.Properties)))
	require.Equal(t, apiextensionsv1.JSONSchemaProps{Type: "object"}, root.Properties["metadata"])
	conditions := root.Properties["status"].Properties["conditions"]
	require.Equal(t, "map", *conditions.XListType)
	require.Equal(t, []string{"type"}, conditions.XListMapKeys)
	require.Equal(t, []string{"type", "status", "lastTransitionTime", "reason", "message"}, conditions.Items.Schema.Required)
	require.Equal(t, "date-time", conditions.Items.Schema.Properties["lastTransitionTime"].Format)
	gpu := root.Properties["spec"].Properties["nodePools"].Items.Schema.Properties["gpu"]
	require.Equal(t, "int32", gpu.Properties["perNode"].Format)
	require.Contains(t, gpu.Properties["perNode"].Description, "number of GPUs per node", "descriptions come from the doc comments")

	// The check has teeth: an untyped property is not structural.
	broken := crd.DeepCopy()
	spec := broken.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["bogus"] = apiextensionsv1.JSONSchemaProps{}
	require.ErrorContains(t, validateAsAPIServer(t, broken).ToAggregate(), "openAPIV3Schema.properties[spec].properties[bogus].type: Required value")
}

// TestUnsupportedTypes: a Go type whose JSON shape reflection cannot know
// fails the generator instead of producing a wrong schema.
func TestUnsupportedTypes(t *testing.T) {
	g := newGenerator(repoRoot)
	for _, tc := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct {
			Raw json.RawMessage `json:"raw"`
		}](), "x.raw: json.RawMessage decodes itself (UnmarshalJSON or UnmarshalText); teach gencrd its JSON shape"},
		{reflect.TypeFor[struct {
			Counts map[string]int `json:"counts"`
		}](), "x.counts: no schema for Go type map[string]int"},
		{reflect.TypeFor[struct {
			Any any `json:"any"`
		}](), "x.any: no schema for Go type interface {}"},
	} {
		_, err := g.schema(tc.typ, "x")
		require.EqualError(t, err, tc.want)
	}
}

// TestStatusFromItsOwnType: the status schema is the reporter's status
// type, although the renderer's Go type declares an opaque status (which
// it accepts and ignores), and status is not required.
func TestStatusFromItsOwnType(t *testing.T) {
	want, err := newGenerator(repoRoot).schema(reflect.TypeFor[v1alpha1.ClusterCapabilitiesStatus](), "status")
	require.NoError(t, err)
	crd, err := buildCRD(repoRoot)
	require.NoError(t, err)
	s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	require.Equal(t, want, s.Properties["status"])
	require.Equal(t, []string{"spec"}, s.Required)
}

func validator(t *testing.T) *schemacheck.Validator {
	t.Helper()
	v, err := schemacheck.ForCRD(committedCRD(t), v1alpha1.Version)
	require.NoError(t, err)
	return v
}

// renderer says whether the renderer refuses a capability file: when it
// decodes it (strictly: unknown fields and wrong types are errors), and
// when it resolves it (names, effects, versions, ...).
func renderer(t *testing.T, o map[string]any) (decodeErr, resolveErr bool) {
	t.Helper()
	data, err := json.Marshal(o)
	require.NoError(t, err)
	c, problems := capabilities.Decode(data)
	if problems.HasErrors() {
		return true, false
	}
	_, problems = capabilities.Resolve(c)
	return false, problems.HasErrors()
}

// TestExamplesValidate: every capability file of the repository that the
// renderer accepts is accepted by the CRD, so a file that renders can be
// applied; one the decoder refuses is refused by the CRD too.
func TestExamplesValidate(t *testing.T) {
	v := validator(t)
	accepted := 0
	files, err := schemacheck.CapabilityFiles(repoRoot)
	require.NoError(t, err)
	for _, f := range files {
		problems := v.Validate(f.Object)
		decodeErr, resolveErr := renderer(t, f.Object)
		switch {
		case decodeErr:
			require.NotEmpty(t, problems, "%s: the renderer cannot decode it, but the CRD accepts it", f.Source)
		case resolveErr:
			t.Logf("%s: the renderer refuses it (an error case); the CRD says %v", f.Source, problems)
		default:
			require.Empty(t, problems, "%s: the renderer accepts it but the CRD refuses it", f.Source)
			accepted++
		}
	}
	t.Logf("%d capability files accepted", accepted)
	require.Greater(t, accepted, 20)
}

// TestBadCapabilitiesFail: mistakes in a capability file are refused with
// their field path, by the schema and by the renderer's decoder alike. An
// unknown field is not part of a structural schema: the API server prunes
// it, and with strict field validation (kubectl's default) refuses it;
// schemacheck reports it as kubectl would.
func TestBadCapabilitiesFail(t *testing.T) {
	v := validator(t)
	type obj = map[string]any
	base := func() obj {
		return obj{
			"apiVersion": "airunway.ai/v1alpha1",
			"kind":       "ClusterCapabilities",
			"metadata":   obj{"name": "bad"},
			"spec": obj{
				"providers": []any{obj{"name": "vllm", "images": obj{"vllm": "vllm/vllm-openai:v0.11.0"}}},
				"nodePools": []any{obj{
					"name":     "l4",
					"selector": obj{"cloud.google.com/gke-accelerator": "nvidia-l4"},
					"taints":   []any{obj{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}},
					"gpu":      obj{"resourceName": "nvidia.com/gpu", "perNode": 1},
				}},
			},
		}
	}
	spec := func(o obj) obj { return o["spec"].(obj) }
	pool := func(o obj) obj { return spec(o)["nodePools"].([]any)[0].(obj) }
	require.Empty(t, v.Validate(base()))
	for _, tc := range []struct {
		name   string
		mutate func(obj)
		want   string
		// renders: the renderer accepts what the schema refuses (the Go
		// field has no omitempty, but decoding does not require it).
		renders bool
	}{
		{"perNode as a string", func(o obj) { pool(o)["gpu"].(obj)["perNode"] = "x" },
			`spec.nodePools[0].gpu.perNode: Invalid value: "string": spec.nodePools[0].gpu.perNode in body must be of type integer: "string"`, false},
		{"unknown spec field", func(o obj) { spec(o)["nodepools"] = []any{} },
			"spec.nodepools: Unknown field", false},
		{"unknown pool field", func(o obj) { pool(o)["gpus"] = 8 },
			"spec.nodePools[0].gpus: Unknown field", false},
		{"provider without a name", func(o obj) { delete(spec(o)["providers"].([]any)[0].(obj), "name") },
			"spec.providers[0].name: Required value", false},
		{"taint without an effect", func(o obj) { delete(pool(o)["taints"].([]any)[0].(obj), "effect") },
			"spec.nodePools[0].taints[0].effect: Required value", false},
		{"an unquoted YAML boolean as a label value", func(o obj) { pool(o)["selector"] = obj{"nvidia.com/gpu.present": true} },
			`spec.nodePools[0].selector.nvidia.com/gpu.present: Invalid value: "boolean": spec.nodePools[0].selector.nvidia.com/gpu.present in body must be of type string: "boolean"`, false},
		{"a price as a string", func(o obj) { pool(o)["pricePerNodeHour"] = obj{"amount": "0.80", "currency": "USD"} },
			`spec.nodePools[0].pricePerNodeHour.amount: Invalid value: "string": spec.nodePools[0].pricePerNodeHour.amount in body must be of type number: "string"`, false},
		{"a fractional GPU count", func(o obj) { pool(o)["gpu"].(obj)["perNode"] = 1.5 },
			`spec.nodePools[0].gpu.perNode: Invalid value: "float64": spec.nodePools[0].gpu.perNode in body must be of type int32: "float64"`, false},
		{"no spec", func(o obj) { delete(o, "spec") },
			"spec: Required value", true},
		{"a price without its amount", func(o obj) { pool(o)["pricePerNodeHour"] = obj{"currency": "USD"} },
			"spec.nodePools[0].pricePerNodeHour.amount: Required value", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			tc.mutate(o)
			require.Contains(t, v.Validate(o), tc.want)
			decodeErr, resolveErr := renderer(t, o)
			require.Equal(t, !tc.renders, decodeErr || resolveErr, "the renderer refuses it: %v", decodeErr || resolveErr)
		})
	}

	// Status is the reporter's: a condition needs its reason, and
	// condition types are unique.
	for _, tc := range []struct {
		name       string
		conditions []any
		want       string
	}{
		{"condition without a reason", []any{obj{"type": v1alpha1.ConditionCapabilitiesCurrent, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "message": ""}},
			"status.conditions[0].reason: Required value"},
		{"a condition type twice", []any{
			obj{"type": v1alpha1.ConditionCapabilitiesCurrent, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": reporter.ReasonCapabilitiesCurrent, "message": ""},
			obj{"type": v1alpha1.ConditionCapabilitiesCurrent, "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": reporter.ReasonCapabilitiesDrifted, "message": ""},
		}, `status.conditions[1]: Duplicate value: {"type":"CapabilitiesCurrent"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			o["status"] = obj{"conditions": tc.conditions}
			require.Contains(t, v.Validate(o), tc.want)
		})
	}
}

// The ModelDeployment CRD is current, the API server accepts it, v1alpha1
// is upstream's derived schema unchanged and the storage version, and
// v1alpha2 says the v1alpha2 fields with the rules the renderer checks.
func TestModelDeploymentCRD(t *testing.T) {
	want, err := generateModelDeployments(repoRoot)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(repoRoot, mdOutFile))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s is stale: run `make docs` (or go run ./hack/gencrd)", mdOutFile)

	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(got, crd))
	require.Empty(t, validateAsAPIServer(t, crd).ToAggregate())
	require.Len(t, crd.Spec.Versions, 2)
	v1, v2 := crd.Spec.Versions[0], crd.Spec.Versions[1]
	require.True(t, v1.Storage && v1.Served && v2.Served && !v2.Storage)
	require.Equal(t, apiextensionsv1.WebhookConverter, crd.Spec.Conversion.Strategy)

	upstream, err := os.ReadFile(filepath.Join(repoRoot, upstreamSchema))
	require.NoError(t, err)
	var derived derivedVersion
	require.NoError(t, json.Unmarshal(upstream, &derived))
	require.Equal(t, derived.Schema, *v1.Schema.OpenAPIV3Schema, "v1alpha1 is upstream's schema")

	spec := v2.Schema.OpenAPIV3Schema.Properties["spec"]
	adapters := spec.Properties["adapters"]
	require.Equal(t, int64(64), *adapters.MaxItems)
	require.Equal(t, []string{"name", "source"}, adapters.Items.Schema.Required)
	scaling := spec.Properties["scaling"]
	require.Nil(t, scaling.Properties["replicas"].Default, "an autoscaled model has no default count")
	require.Equal(t, []string{"maxReplicas", "target"}, scaling.Properties["autoscaling"].Required)
	require.Contains(t, spec.Properties["gateway"].Properties, "parentRef")
	require.NotContains(t, v1.Schema.OpenAPIV3Schema.Properties["spec"].Properties, "adapters")
	require.NotContains(t, v1.Schema.OpenAPIV3Schema.Properties["spec"].Properties, "placement")

	// spec.placement.clusterSelector is the LabelSelector every CRD has:
	// controller-gen's, as Prometheus Operator's PodMonitor publishes it.
	podMonitor, err := os.ReadFile(filepath.Join(repoRoot, "schemas/prometheus-operator/monitoring.coreos.com_podmonitor_v1_v0.93.0.json"))
	require.NoError(t, err)
	var pm derivedVersion
	require.NoError(t, json.Unmarshal(podMonitor, &pm))
	standard := pm.Schema.Properties["spec"].Properties["selector"]
	require.NotEmpty(t, standard.Properties)
	selector := spec.Properties["placement"].Properties["clusterSelector"]
	require.NotEmpty(t, selector.Description)
	require.Equal(t, withoutDescriptions(t, standard), withoutDescriptions(t, selector))
}

// withoutDescriptions is a schema as JSON with every description removed.
func withoutDescriptions(t *testing.T, s apiextensionsv1.JSONSchemaProps) any {
	t.Helper()
	raw, err := json.Marshal(s)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "description")
			for _, c := range v {
				strip(c)
			}
		case []any:
			for _, c := range v {
				strip(c)
			}
		}
	}
	strip(v)
	return v
}
