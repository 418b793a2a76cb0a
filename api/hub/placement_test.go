package hub_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
)

// model runs a ModelDeployment of apiVersion, with annotations and spec
// (YAML flow), through its version's decoding, conversion and defaults.
func model(t *testing.T, apiVersion, annotations, spec string) *hub.ModelDeployment {
	t.Helper()
	doc, err := yaml.YAMLToJSON([]byte(fmt.Sprintf("apiVersion: %s\nkind: ModelDeployment\nmetadata: {name: m, namespace: default, annotations: %s}\nspec: %s", apiVersion, annotations, spec)))
	require.NoError(t, err)
	toHub := v1alpha2.ToHub
	if apiVersion == v1alpha1.APIVersion {
		toHub = v1alpha1.ToHub
	}
	md, l := toHub(doc)
	require.False(t, l.HasErrors(), "%v", l)
	return md
}

// TestValidatePlacement requires exactly the errors listed, field and
// whole message, for the cluster selector (field or annotation) and the
// assigned cluster.
func TestValidatePlacement(t *testing.T) {
	const base = `{model: {id: Qwen/Qwen3-0.6B}, resources: {gpu: {count: 1}}`
	for _, tc := range []struct {
		name, apiVersion, annotations, spec string
		want                                map[string]string // field → message; nothing else
	}{
		{name: "a selector", spec: base + `, placement: {clusterSelector: {matchLabels: {region: us-east1}, matchExpressions: [{key: tier, operator: NotIn, values: [spot]}]}}}`},
		{name: "an empty placement selects every cluster", spec: base + `, placement: {}}`},
		{name: "an empty selector selects every cluster", spec: base + `, placement: {clusterSelector: {}}}`},
		{name: "the annotation on v1alpha2", annotations: `{airunway.ai/cluster-selector: "region in (us-east1,us-west1),tier!=spot", airunway.ai/cluster: gpu-east}`, spec: base + `}`},
		{name: "the annotation on v1alpha1", apiVersion: v1alpha1.APIVersion, annotations: `{airunway.ai/cluster-selector: "compliance=hipaa,!preemptible"}`, spec: base + `}`},
		{name: "an empty annotation selects every cluster", annotations: `{airunway.ai/cluster-selector: ""}`, spec: base + `}`},
		{name: "the annotation beside an empty placement", annotations: `{airunway.ai/cluster-selector: "region=us-east1"}`, spec: base + `, placement: {}}`},
		{name: "an annotation that does not parse", annotations: `{airunway.ai/cluster-selector: "region in us-east1"}`, spec: base + `}`,
			want: map[string]string{"metadata.annotations.airunway.ai/cluster-selector": `"region in us-east1" is not a label selector: unable to parse requirement: found 'us-east1' expected: '('; write it as ` + "`kubectl get -l`" + ` takes one, for example "region in (us-east1,us-west1),tier!=spot"`}},
		{name: "an annotation with a bad key", apiVersion: v1alpha1.APIVersion, annotations: `{airunway.ai/cluster-selector: "Bad Key=x"}`, spec: base + `}`,
			want: map[string]string{"metadata.annotations.airunway.ai/cluster-selector": `"Bad Key=x" is not a label selector: unable to parse requirement: found 'Key', expected: in, notin, =, ==, !=, gt, lt; write it as ` + "`kubectl get -l`" + ` takes one, for example "region in (us-east1,us-west1),tier!=spot"`}},
		{name: "both the annotation and the field",
			annotations: `{airunway.ai/cluster-selector: "region=us-east1"}`, spec: base + `, placement: {clusterSelector: {matchLabels: {region: us-east1}}}}`,
			want: map[string]string{"spec.placement.clusterSelector": "must not be set with annotation airunway.ai/cluster-selector \"region=us-east1\": a model has one cluster selector; keep `spec.placement.clusterSelector` and remove the annotation, which is for v1alpha1 models"}},
		{name: "a selector the API server refuses",
			spec: base + `, placement: {clusterSelector: {matchLabels: {"bad key": x}, matchExpressions: [{key: tier, operator: Has}, {key: zone, operator: In}, {key: gpu, operator: Exists, values: [a]}, {key: region, operator: In, values: ["not valid!"]}]}}}`,
			want: map[string]string{
				"spec.placement.clusterSelector.matchLabels":                   `Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				"spec.placement.clusterSelector.matchExpressions[0].operator":  `Invalid value: "Has": not a valid selector operator: use "In", "NotIn", "Exists", "DoesNotExist"`,
				"spec.placement.clusterSelector.matchExpressions[1].values":    "Required value: must be specified when `operator` is 'In' or 'NotIn'",
				"spec.placement.clusterSelector.matchExpressions[2].values":    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
				"spec.placement.clusterSelector.matchExpressions[3].values[0]": `Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
			}},
		{name: "an assigned cluster that is no name", annotations: `{airunway.ai/cluster: GPU_East}`, spec: base + `}`,
			want: map[string]string{"metadata.annotations.airunway.ai/cluster": `"GPU_East" is not a valid cluster name: it must be a capability file's ` + "`metadata.name`" + `, a DNS subdomain (lowercase letters, digits, '-' and '.'): a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{name: "an empty assigned cluster", apiVersion: v1alpha1.APIVersion, annotations: `{airunway.ai/cluster: ""}`, spec: base + `}`,
			want: map[string]string{"metadata.annotations.airunway.ai/cluster": "must not be empty: it names the capability file (`metadata.name`) of the cluster the model runs in; remove the annotation to leave the model unassigned"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apiVersion := tc.apiVersion
			if apiVersion == "" {
				apiVersion = v1alpha2.APIVersion
			}
			annotations := tc.annotations
			if annotations == "" {
				annotations = "{}"
			}
			got := map[string]string{}
			for _, p := range hub.ValidateModelDeployment(model(t, apiVersion, annotations, tc.spec)).Errors() {
				require.NotContains(t, got, p.Field, "two errors at %s", p.Field)
				got[p.Field] = p.Message
			}
			require.Equal(t, tc.want, nonNil(got))
		})
	}
}

func nonNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// ClusterSelector is the field's selector, else the annotation's, else
// every cluster; AssignedCluster is the planner's annotation.
func TestClusterSelector(t *testing.T) {
	east := map[string]string{"region": "us-east1", "tier": "standard"}
	spot := map[string]string{"region": "us-east1", "tier": "spot"}
	west := map[string]string{"region": "us-west1", "tier": "standard"}
	for _, tc := range []struct {
		name, apiVersion, annotations, spec string
		want                                string // the selector's String()
		matches                             []bool // east, spot, west
	}{
		{name: "none", spec: `{model: {id: m}}`, want: "", matches: []bool{true, true, true}},
		{name: "an empty placement", spec: `{model: {id: m}, placement: {}}`, want: "", matches: []bool{true, true, true}},
		{name: "an empty selector", spec: `{model: {id: m}, placement: {clusterSelector: {}}}`, want: "", matches: []bool{true, true, true}},
		{name: "the field",
			spec: `{model: {id: m}, placement: {clusterSelector: {matchLabels: {region: us-east1}, matchExpressions: [{key: tier, operator: NotIn, values: [spot]}]}}}`,
			want: "region=us-east1,tier notin (spot)", matches: []bool{true, false, false}},
		{name: "the annotation, v1alpha1", apiVersion: v1alpha1.APIVersion,
			annotations: `{airunway.ai/cluster-selector: "region in (us-east1,us-west1),tier!=spot"}`, spec: `{model: {id: m}}`,
			want: "region in (us-east1,us-west1),tier!=spot", matches: []bool{true, false, true}},
		{name: "the annotation, v1alpha2",
			annotations: `{airunway.ai/cluster-selector: "region=us-west1"}`, spec: `{model: {id: m}, placement: {}}`,
			want: "region=us-west1", matches: []bool{false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apiVersion := tc.apiVersion
			if apiVersion == "" {
				apiVersion = v1alpha2.APIVersion
			}
			annotations := tc.annotations
			if annotations == "" {
				annotations = "{}"
			}
			md := model(t, apiVersion, annotations, tc.spec)
			require.Empty(t, hub.ValidateModelDeployment(md).Errors())
			sel := md.ClusterSelector()
			require.Equal(t, tc.want, sel.String())
			var got []bool
			for _, l := range []map[string]string{east, spot, west} {
				got = append(got, sel.Matches(labels.Set(l)))
			}
			require.Equal(t, tc.matches, got)
			require.Empty(t, md.AssignedCluster())
		})
	}
	md := model(t, v1alpha2.APIVersion, `{airunway.ai/cluster: gpu-east}`, `{model: {id: m}}`)
	require.Equal(t, "gpu-east", md.AssignedCluster())
}
