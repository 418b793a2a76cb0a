package schemacheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// etcdRequestLimit is etcd's default --max-request-bytes (1.5 MiB): a CRD
// whose stored form is larger cannot be created.
const etcdRequestLimit = 1536 * 1024

// validateAsAPIServer is ValidateCRD in a test.
func validateAsAPIServer(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	t.Helper()
	errs, err := ValidateCRD(crd)
	require.NoError(t, err)
	return errs
}

type crdCase struct {
	group, kind, release, channel string
	wantRelease                   string   // the release picked
	wantVersions                  []string // in priority order
	wantStorage                   string
}

// The CRDs the status reporter's envtest tests install.
var reporterCRDs = []crdCase{
	{group: "kaito.sh", kind: "Workspace", wantRelease: "v0.12.0", wantVersions: []string{"v1beta1", "v1alpha1"}, wantStorage: "v1beta1"},
	{group: "nvidia.com", kind: "DynamoGraphDeployment", wantRelease: "main-2a6da14c", wantVersions: []string{"v1beta1", "v1alpha1"}, wantStorage: "v1beta1"},
	{group: "ray.io", kind: "RayService", release: "v1.7.0", wantRelease: "v1.7.0", wantVersions: []string{"v1", "v1alpha1"}, wantStorage: "v1"},
	{group: "inference.networking.k8s.io", kind: "InferencePool", wantRelease: "v1.6.0", wantVersions: []string{"v1"}, wantStorage: "v1"},
	{group: "inference.networking.x-k8s.io", kind: "InferencePool", wantRelease: "v1.4.0", wantVersions: []string{"v1alpha2"}, wantStorage: "v1alpha2"},
	{group: "gateway.networking.k8s.io", kind: "HTTPRoute", wantRelease: "v1.7.0", wantVersions: []string{"v1"}, wantStorage: "v1"},
	{group: "gateway.networking.k8s.io", kind: "ReferenceGrant", wantRelease: "v1.6.1", wantVersions: []string{"v1", "v1beta1"}, wantStorage: "v1beta1"},
	{group: "gateway.networking.k8s.io", kind: "Gateway", wantRelease: "v1.7.0", wantVersions: []string{"v1"}, wantStorage: "v1"},
	{group: "airunway.ai", kind: "ModelDeployment", wantRelease: "main-b0d3fb77", wantVersions: []string{"v1alpha1"}, wantStorage: "v1alpha1"},
	// Not installed by the reporter, but covering the other shapes: an
	// older release with two versions, the experimental channel, a
	// cluster-scoped kind and a scale subresource.
	{group: "gateway.networking.k8s.io", kind: "HTTPRoute", release: "v1.5.1", wantRelease: "v1.5.1", wantVersions: []string{"v1", "v1beta1"}, wantStorage: "v1"},
	{group: "gateway.networking.k8s.io", kind: "HTTPRoute", channel: "experimental", wantRelease: "v1.7.0", wantVersions: []string{"v1"}, wantStorage: "v1"},
	{group: "airunway.ai", kind: "InferenceProviderConfig", wantRelease: "main-b0d3fb77", wantVersions: []string{"v1alpha1"}, wantStorage: "v1alpha1"},
	{group: "kaito.sh", kind: "InferenceSet", wantRelease: "v0.12.0", wantVersions: []string{"v1beta1", "v1alpha1"}, wantStorage: "v1beta1"},
}

func TestCRD(t *testing.T) {
	for _, tc := range reporterCRDs {
		name := tc.group + "/" + tc.kind + "@" + tc.release + "/" + tc.channel
		t.Run(name, func(t *testing.T) {
			crd, err := CRDChannel(tc.group, tc.kind, tc.release, tc.channel)
			require.NoError(t, err)
			if tc.release == "" && tc.channel == "" {
				same, err := CRD(tc.group, tc.kind, "")
				require.NoError(t, err)
				require.Equal(t, crd, same)
			}

			require.Equal(t, "apiextensions.k8s.io/v1", crd.APIVersion)
			require.Equal(t, "CustomResourceDefinition", crd.Kind)
			require.Equal(t, crd.Spec.Names.Plural+"."+tc.group, crd.Name)
			require.Equal(t, tc.group, crd.Spec.Group)
			require.Equal(t, tc.kind, crd.Spec.Names.Kind)
			require.Equal(t, tc.kind+"List", crd.Spec.Names.ListKind)
			require.NotEmpty(t, crd.Spec.Names.Singular)
			require.Equal(t, apiextensionsv1.NoneConverter, crd.Spec.Conversion.Strategy)
			var versions []string
			storage := ""
			for _, v := range crd.Spec.Versions {
				versions = append(versions, v.Name)
				if v.Storage {
					storage = v.Name
				}
				require.True(t, v.Served, v.Name)
				require.NotNil(t, v.Schema.OpenAPIV3Schema, v.Name)
				require.Nil(t, v.DeprecationWarning, "deprecation warnings are upstream prose and not kept")
				for _, c := range v.AdditionalPrinterColumns {
					require.Empty(t, c.Description, "printer column descriptions are upstream prose and not kept")
				}
			}
			require.Equal(t, tc.wantVersions, versions)
			require.Equal(t, tc.wantStorage, storage)
			releaseOf := func() string {
				for _, f := range mustFiles(t, tc) {
					return f.Release
				}
				return ""
			}
			require.Equal(t, tc.wantRelease, releaseOf())

			errs := validateAsAPIServer(t, crd)
			require.Empty(t, errs, "the API server would reject the CRD: %v", errs.ToAggregate())

			// What a client sends and etcd stores is the JSON form.
			data, err := json.Marshal(crd)
			require.NoError(t, err)
			t.Logf("%s at %s: %d versions, %d bytes of JSON (%.1f%% of etcd's 1.5 MiB limit)",
				crd.Name, tc.wantRelease, len(versions), len(data), 100*float64(len(data))/etcdRequestLimit)
			require.Less(t, len(data), etcdRequestLimit, "too large to store in etcd")
			var back apiextensionsv1.CustomResourceDefinition
			require.NoError(t, yaml.UnmarshalStrict(data, &back))
			again, err := json.Marshal(&back)
			require.NoError(t, err)
			require.Equal(t, string(data), string(again), "the CRD must survive a JSON round trip")

			// Changing the result must not change the next one.
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Type = "string"
			crd.Spec.Names.Plural = "changed"
			fresh, err := CRDChannel(tc.group, tc.kind, tc.release, tc.channel)
			require.NoError(t, err)
			require.Equal(t, "object", fresh.Spec.Versions[0].Schema.OpenAPIV3Schema.Type)
			require.Equal(t, back.Spec.Names.Plural, fresh.Spec.Names.Plural)
		})
	}
}

func mustFiles(t *testing.T, tc crdCase) []*schemaFile {
	t.Helper()
	idx, err := loadIndex()
	require.NoError(t, err)
	files, err := crdFiles(idx, tc.group, tc.kind, tc.release, tc.channel)
	require.NoError(t, err)
	return files
}

// TestCRDDetails checks the fields an envtest test relies on beyond the
// schema: names, scope, subresources, printer columns, API approval.
func TestCRDDetails(t *testing.T) {
	ws, err := CRD("kaito.sh", "Workspace", "")
	require.NoError(t, err)
	require.Equal(t, []string{"wk", "wks"}, ws.Spec.Names.ShortNames)
	require.Equal(t, []string{"workspace"}, ws.Spec.Names.Categories)
	require.Equal(t, apiextensionsv1.NamespaceScoped, ws.Spec.Scope)
	require.Equal(t, "InferenceReady", ws.Spec.Versions[0].AdditionalPrinterColumns[2].Name)

	dgd, err := CRD("nvidia.com", "DynamoGraphDeployment", "")
	require.NoError(t, err)
	require.Equal(t, []string{"dgd"}, dgd.Spec.Names.ShortNames)
	require.Equal(t, &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}, dgd.Spec.Versions[0].Subresources)
	require.True(t, dgd.Spec.Versions[1].Deprecated, "v1alpha1 is deprecated")
	require.NotContains(t, dgd.Annotations, "helm.sh/resource-policy", "tooling annotations are not kept")

	// Dynamo's versions differ, so a test writing v1alpha1 stores it.
	require.NoError(t, SetStorageVersion(dgd, "v1alpha1"))
	require.False(t, dgd.Spec.Versions[0].Storage)
	require.True(t, dgd.Spec.Versions[1].Storage)
	require.Empty(t, validateAsAPIServer(t, dgd))
	require.EqualError(t, SetStorageVersion(dgd, "v2"), `schemacheck: CRD dynamographdeployments.nvidia.com has no version "v2" (have v1beta1, v1alpha1)`)
	require.True(t, dgd.Spec.Versions[1].Storage, "a failed call changes nothing")

	is, err := CRD("kaito.sh", "InferenceSet", "")
	require.NoError(t, err)
	require.Equal(t, &apiextensionsv1.CustomResourceSubresourceScale{
		SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ptr(".status.selector"),
	}, is.Spec.Versions[0].Subresources.Scale)

	ipc, err := CRD("airunway.ai", "InferenceProviderConfig", "")
	require.NoError(t, err)
	require.Equal(t, apiextensionsv1.ClusterScoped, ipc.Spec.Scope)

	gw, err := CRD("gateway.networking.k8s.io", "Gateway", "")
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"api-approved.kubernetes.io":               "https://github.com/kubernetes-sigs/gateway-api/pull/5371",
		"gateway.networking.k8s.io/bundle-version": "v1.7.0",
		"gateway.networking.k8s.io/channel":        "standard",
	}, gw.Annotations)
	require.Equal(t, []string{"gtw"}, gw.Spec.Names.ShortNames)
	status := gw.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	require.Contains(t, status.Properties, "addresses", "the reporter reads Gateway status.addresses")

	// The validation is the API server's: a CEL rule that does not compile
	// is refused, and so is a *.k8s.io CRD without the approval annotation
	// (which is why derive-schemas keeps it).
	broken := gw.DeepCopy()
	spec := broken.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.XValidations = append(spec.XValidations, apiextensionsv1.ValidationRule{Rule: "self.nope("})
	broken.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	require.ErrorContains(t, validateAsAPIServer(t, broken).ToAggregate(), "compilation failed")
	delete(gw.Annotations, "api-approved.kubernetes.io")
	require.ErrorContains(t, validateAsAPIServer(t, gw).ToAggregate(), "protected groups must have approval annotation")

	rg, err := CRD("gateway.networking.k8s.io", "ReferenceGrant", "")
	require.NoError(t, err)
	require.Equal(t, &apiextensionsv1.CustomResourceSubresources{}, rg.Spec.Versions[0].Subresources, "upstream declares an empty subresources")
}

func ptr[T any](v T) *T { return &v }

func TestCRDErrors(t *testing.T) {
	for _, tc := range []struct {
		group, kind, release, channel string
		wantErr                       string
	}{
		{
			group: "example.com", kind: "Nope",
			wantErr: "schemacheck: no schema known for kind example.com Nope",
		},
		{
			group: "kaito.sh", kind: "Workspace", release: "v9.9.9",
			wantErr: "schemacheck: no CRD for kind kaito.sh Workspace at release v9.9.9 (have v0.6.2, v0.8.1, v0.10.0, v0.12.0)",
		},
		{
			group: "kaito.sh", kind: "Workspace", channel: "experimental",
			wantErr: `schemacheck: no schema known for kind kaito.sh Workspace in channel "experimental" (have "")`,
		},
		{
			// v1.0.0 stores v1beta1, which is not derived for it.
			group: "gateway.networking.k8s.io", kind: "HTTPRoute", release: "v1.0.0",
			wantErr: "schemacheck: gateway.networking.k8s.io HTTPRoute release v1.0.0 (standard channel): a CRD needs exactly one storage version, but 0 of its embedded versions (v1) are marked storage",
		},
	} {
		_, err := CRDChannel(tc.group, tc.kind, tc.release, tc.channel)
		require.EqualError(t, err, tc.wantErr)
	}
}

// TestEveryEmbeddedCRD builds and validates the CRD of every embedded kind
// at every embedded release, so a schema the API server would refuse is
// found when schemas/ is regenerated, not in an envtest run. Releases whose
// storage version is not derived are listed, so the list is a decision.
func TestEveryEmbeddedCRD(t *testing.T) {
	idx, err := loadIndex()
	require.NoError(t, err)
	type crdKey struct{ group, kind, channel, release string }
	seen := map[crdKey]bool{}
	for k, files := range idx {
		for _, f := range files {
			seen[crdKey{k.group, k.kind, k.channel, f.Release}] = true
		}
	}
	var noStorage []string
	largest, largestName := 0, ""
	for k := range seen {
		crd, err := CRDChannel(k.group, k.kind, k.release, k.channel)
		if err != nil {
			require.ErrorContains(t, err, "a CRD needs exactly one storage version", "%+v", k)
			noStorage = append(noStorage, k.kind+"@"+k.release+"/"+k.channel)
			continue
		}
		errs := validateAsAPIServer(t, crd)
		require.Empty(t, errs, "%+v: the API server would reject the CRD: %v", k, errs.ToAggregate())
		data, err := json.Marshal(crd)
		require.NoError(t, err)
		require.Less(t, len(data), etcdRequestLimit, "%+v: too large to store in etcd", k)
		if len(data) > largest {
			largest, largestName = len(data), crd.Name+"@"+k.release
		}
	}
	t.Logf("largest embedded CRD: %s, %d bytes of JSON", largestName, largest)
	sort.Strings(noStorage)
	require.Equal(t, []string{"HTTPRoute@v1.0.0/experimental", "HTTPRoute@v1.0.0/standard"}, noStorage)
}

// TestDeployCRD checks the ModelDeployment CRD the deployment bundle
// installs (generated by hack/gencrd): the API server accepts it, and its
// v1alpha1, the storage version, has the same spec as the CRD rebuilt
// from schemas/, so the two cannot drift; v1alpha2 is hack/gencrd's own
// test.
func TestDeployCRD(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "base", "airunway.ai_modeldeployments.yaml"))
	require.NoError(t, err)
	var deployed apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(raw, &deployed))
	require.Empty(t, validateAsAPIServer(t, &deployed))

	rebuilt, err := CRD("airunway.ai", "ModelDeployment", "")
	require.NoError(t, err)
	crdScheme.Default(&deployed)
	crdScheme.Default(rebuilt)
	require.Equal(t, rebuilt.Name, deployed.Name)
	require.Len(t, rebuilt.Spec.Versions, 1)
	require.Equal(t, rebuilt.Spec.Versions[0], deployed.Spec.Versions[0])
	require.Equal(t, rebuilt.Spec.Names, deployed.Spec.Names)
	v1, err := json.Marshal(deployed.Spec.Versions[0])
	require.NoError(t, err)
	require.NotContains(t, string(v1), `"description"`, "descriptions are upstream prose and must be stripped")
	require.NotNil(t, deployed.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties, "the status schema is kept")
}
