package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
	"github.com/airunway-render/airunway-render/reporter"
)

// upstreamSchema is upstream's v1alpha1 ModelDeployment as
// hack/derive-schemas derived it (descriptions removed, everything else as
// published); the schemas README names its source.
const upstreamSchema = "schemas/airunway/airunway.ai_modeldeployment_v1alpha1_main-b0d3fb77.json"

// webhookNamespace is the namespace of the conversion webhook's Service
// (reporter.WebhookService, deploy/base/service.yaml); kustomize's
// namespace transformer rewrites it with the rest of deploy/base.
const webhookNamespace = "airunway-system"

// dnsLabel is the pattern of a Kubernetes DNS label.
const dnsLabel = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`

// derivedVersion is what gencrd reads of a derived schema file.
type derivedVersion struct {
	Schema         apiextensionsv1.JSONSchemaProps                  `json:"openAPIV3Schema"`
	Subresources   *apiextensionsv1.CustomResourceSubresources      `json:"subresources"`
	PrinterColumns []apiextensionsv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns"`
	Names          apiextensionsv1.CustomResourceDefinitionNames    `json:"names"`
}

func generateModelDeployments(root string) ([]byte, error) {
	crd, err := buildModelDeploymentCRD(root)
	if err != nil {
		return nil, err
	}
	return withHeader(crd,
		"CustomResourceDefinition "+crd.Name+" (kind ModelDeployment).",
		"v1alpha1, the storage version, is upstream AI Runway's schema as",
		"hack/derive-schemas derived it into "+upstreamSchema,
		"(its README names the upstream file). v1alpha2 is that schema plus the",
		"fields v1alpha2 adds, derived from the Go types of api/hub. The status",
		"reporter converts between them (webhook at "+reporter.ConversionPath+"): see",
		"docs/versioning.md.")
}

// generateModelDeploymentsAlone is the CRD deploy/crds installs without
// the status reporter: v1alpha1 only, with no conversion, since no
// webhook would answer. A v1alpha2 model is then refused by the API
// server ("no matches for kind") instead of failing every read of the
// resource, which a served version without its converter would.
func generateModelDeploymentsAlone(root string) ([]byte, error) {
	crd, err := buildModelDeploymentCRD(root)
	if err != nil {
		return nil, err
	}
	crd.Spec.Versions = crd.Spec.Versions[:1]
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	return withHeader(crd,
		"CustomResourceDefinition "+crd.Name+" (kind ModelDeployment), for a",
		"cluster without the status reporter (deploy/crds): v1alpha1 only, no",
		"conversion. deploy/base installs the full one, with v1alpha2 and the",
		"reporter's conversion webhook.")
}

func buildModelDeploymentCRD(root string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(upstreamSchema)))
	if err != nil {
		return nil, err
	}
	var old derivedVersion
	if err := json.Unmarshal(data, &old); err != nil {
		return nil, fmt.Errorf("%s: %w", upstreamSchema, err)
	}
	v2, err := v1alpha2Schema(root, old.Schema)
	if err != nil {
		return nil, err
	}
	version := func(name string, storage bool, schema apiextensionsv1.JSONSchemaProps) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{
			Name: name, Served: true, Storage: storage,
			Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
			Subresources:             old.Subresources,
			AdditionalPrinterColumns: old.PrinterColumns,
		}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: old.Names.Plural + "." + hub.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: hub.Group,
			Names: old.Names,
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				version(v1alpha1.Version, true, old.Schema),
				version(v1alpha2.Version, false, v2),
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
						Name: reporter.WebhookService, Namespace: webhookNamespace, Path: ptr.To(reporter.ConversionPath), Port: ptr.To[int32](443),
					}},
				},
			},
		},
	}, nil
}

// v1alpha2Schema is v1's schema plus the v1alpha2 fields, with the rules
// the renderer checks (hub.ValidateModelDeployment) that a schema can say.
// The replica counts an autoscaler may own lose their `default: 1`: the
// API server applies defaults before validation, so a default would
// always collide with autoscaling.
func v1alpha2Schema(root string, v1 apiextensionsv1.JSONSchemaProps) (apiextensionsv1.JSONSchemaProps, error) {
	var v2 apiextensionsv1.JSONSchemaProps
	raw, err := json.Marshal(v1)
	if err != nil {
		return v2, err
	}
	if err := json.Unmarshal(raw, &v2); err != nil {
		return v2, err
	}
	g := newGenerator(root)
	adapters, err := g.schema(reflect.TypeFor[[]hub.Adapter](), "spec.adapters")
	if err != nil {
		return v2, err
	}
	autoscaling, err := g.schema(reflect.TypeFor[hub.AutoscalingSpec](), "spec.scaling.autoscaling")
	if err != nil {
		return v2, err
	}
	parentRef, err := g.schema(reflect.TypeFor[hub.GatewayRef](), "spec.gateway.parentRef")
	if err != nil {
		return v2, err
	}
	if d := g.doc(reflect.TypeFor[hub.ModelDeploymentSpec](), "Adapters"); d != "" {
		adapters.Description = d
	}
	placement, err := g.schema(reflect.TypeFor[hub.PlacementSpec](), "spec.placement")
	if err != nil {
		return v2, err
	}
	if d := g.doc(reflect.TypeFor[hub.ModelDeploymentSpec](), "Placement"); d != "" {
		placement.Description = d
	}
	selector := placement.Properties["clusterSelector"]
	labelSelectorSchema(&selector)
	placement.Properties["clusterSelector"] = selector

	item := adapters.Items.Schema
	name, source := item.Properties["name"], item.Properties["source"]
	name.Pattern, name.MaxLength = dnsLabel, ptr.To[int64](63)
	source.Pattern = hub.AdapterSourceRe.String()
	item.Properties["name"], item.Properties["source"] = name, source
	adapters.MaxItems = ptr.To[int64](hub.MaxAdapters)
	adapters.XListType, adapters.XListMapKeys = ptr.To("map"), []string{"name"}

	props := autoscaling.Properties
	bound := func(field string, lo, hi float64, def string) {
		p := props[field]
		p.Minimum, p.Maximum = &lo, &hi
		if def != "" {
			p.Default = &apiextensionsv1.JSON{Raw: []byte(def)}
		}
		props[field] = p
	}
	bound("minReplicas", 0, hub.MaxReplicas, fmt.Sprint(hub.DefaultMinReplicas))
	bound("maxReplicas", 1, hub.MaxReplicas, "")
	bound("target", 1, 1<<31-1, "")
	bound("scaleDownDelaySeconds", 0, hub.MaxScaleDownDelaySeconds, fmt.Sprint(hub.DefaultScaleDownDelaySeconds))
	metric := props["metric"]
	metric.Default = &apiextensionsv1.JSON{Raw: []byte(`"` + hub.MetricQueueDepth + `"`)}
	for _, m := range hub.AutoscalingMetrics {
		metric.Enum = append(metric.Enum, apiextensionsv1.JSON{Raw: []byte(`"` + m + `"`)})
	}
	props["metric"] = metric
	autoscaling.Required = []string{"maxReplicas", "target"}
	autoscaling.XValidations = apiextensionsv1.ValidationRules{
		{Rule: "self.minReplicas <= self.maxReplicas", Message: "minReplicas must not be more than maxReplicas"},
		{Rule: "self.metric != '" + hub.MetricKVCacheUsage + "' || self.target <= 100", Message: "target is a percentage of the KV cache for kvCacheUsage and must be at most 100"},
	}
	name = parentRef.Properties["name"]
	name.MinLength = ptr.To[int64](1)
	parentRef.Properties["name"] = name

	spec := v2.Properties["spec"]
	spec.Properties["adapters"] = adapters
	scaling := spec.Properties["scaling"]
	scaling.Properties["autoscaling"] = autoscaling
	replicas := scaling.Properties["replicas"]
	replicas.Default = nil
	scaling.Properties["replicas"] = replicas
	decode := scaling.Properties["decode"]
	decodeReplicas := decode.Properties["replicas"]
	decodeReplicas.Default = nil
	decode.Properties["replicas"] = decodeReplicas
	scaling.Properties["decode"] = decode
	scaling.XValidations = append(scaling.XValidations, apiextensionsv1.ValidationRule{
		Rule:    "!has(self.autoscaling) || !has(self.replicas)",
		Message: "replicas must not be set with autoscaling: the autoscaler owns the replica count",
	})
	spec.Properties["scaling"] = scaling
	gateway := spec.Properties["gateway"]
	gateway.Properties["parentRef"] = parentRef
	spec.Properties["gateway"] = gateway
	spec.Properties["placement"] = placement
	v2.Properties["spec"] = spec
	return v2, nil
}

// labelSelectorSchema completes the reflected schema of a
// metav1.LabelSelector as controller-gen writes it for every CRD (the
// lists and the selector are atomic), and gives its fields Kubernetes'
// descriptions, which are outside this module's source.
func labelSelectorSchema(s *apiextensionsv1.JSONSchemaProps) {
	s.XMapType = ptr.To("atomic")
	exprs := s.Properties["matchExpressions"]
	exprs.XListType = ptr.To("atomic")
	exprs.Description = "matchExpressions is a list of label selector requirements. The requirements are ANDed."
	req := exprs.Items.Schema
	req.Description = "A label selector requirement is a selector that contains values, a key, and an operator that relates the key and values."
	for field, doc := range map[string]string{
		"key":      "key is the label key that the selector applies to.",
		"operator": "operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist.",
		"values":   "values is an array of string values. If the operator is In or NotIn, the values array must be non-empty. If the operator is Exists or DoesNotExist, the values array must be empty.",
	} {
		p := req.Properties[field]
		p.Description = doc
		if field == "values" {
			p.XListType = ptr.To("atomic")
		}
		req.Properties[field] = p
	}
	s.Properties["matchExpressions"] = exprs
	labels := s.Properties["matchLabels"]
	labels.Description = `matchLabels is a map of {key,value} pairs. A single {key,value} in the matchLabels map is equivalent to an element of matchExpressions, whose key field is "key", the operator is "In", and the values array contains only "value". The requirements are ANDed.`
	s.Properties["matchLabels"] = labels
}
