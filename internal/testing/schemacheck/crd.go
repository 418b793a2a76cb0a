package schemacheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeversion "k8s.io/apimachinery/pkg/version"
)

// CRD assembles an installable apiextensions.k8s.io/v1
// CustomResourceDefinition for group/kind from the embedded schemas, for
// tests that run a real API server (envtest) and must install the
// providers' CRDs without the upstream files. release selects the upstream
// release ("" = the newest one embedded for the kind, by the same order as
// Load); Gateway API kinds come from the standard channel (see CRDChannel).
//
// The CRD has every version of the kind embedded for that release, each
// with its schema, served/storage/deprecated flags, subresources, printer
// columns and selectable fields, and the CRD's names, scope and
// API-approval annotation. It differs from the upstream CRD in what
// schemas/ does not keep: descriptions (schema, printer columns), deprecation
// warnings, tooling annotations, and the conversion webhook (conversion is
// always None, as an envtest API server has no webhook to call; objects of
// a non-storage version are then converted by rewriting apiVersion only).
// Versions hack/derive-schemas does not derive are missing too: for the
// module-derived Gateway API kinds only the versions declared in its
// modules.go (for example HTTPRoute v1 from release v1.7.0, without
// v1beta1).
//
// Exactly one version must be the storage version; if the embedded
// versions of that release have none (HTTPRoute v1.0.0, whose storage
// version v1beta1 is not derived) or several, CRD returns an error. Each
// call returns a new object the caller may modify.
//
// Without a conversion webhook, an object written in a version other than
// the storage version is stored with only its apiVersion changed, and is
// then pruned by the storage version's schema. Where the versions' schemas
// differ (Dynamo: v1alpha1 spec.services and status.services are
// v1beta1 spec.components and status.components), a test writing the
// older version must make it the storage version (SetStorageVersion).
func CRD(group, kind, release string) (*apiextensionsv1.CustomResourceDefinition, error) {
	return CRDChannel(group, kind, release, "")
}

// CRDChannel is CRD in a release channel ("standard", "experimental"; "" =
// the kind's default: standard for Gateway API kinds, none for kinds
// published without channels).
func CRDChannel(group, kind, release, channel string) (*apiextensionsv1.CustomResourceDefinition, error) {
	idx, err := loadIndex()
	if err != nil {
		return nil, err
	}
	files, err := crdFiles(idx, group, kind, release, channel)
	if err != nil {
		return nil, err
	}
	return buildCRD(files)
}

// crdFiles returns the embedded files of every version of group/kind at
// one release of one channel, in version priority order (v1 before
// v1beta1 before v1alpha1), the order kubectl and discovery use.
func crdFiles(idx map[key][]*schemaFile, group, kind, release, channel string) ([]*schemaFile, error) {
	name := group + " " + kind
	var all []*schemaFile
	var versions []gvk
	for k, files := range idx {
		if k.group != group || k.kind != kind {
			continue
		}
		versions = append(versions, k.gvk)
		// The channel argument means per version what it means for Load.
		if picked := resolveChannel(idx, k.gvk, channel); picked == k {
			all = append(all, files...)
			channel = picked.channel
		}
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("schemacheck: no schema known for kind %s", name)
	}
	if len(all) == 0 {
		picked := resolveChannel(idx, versions[0], channel)
		return nil, fmt.Errorf("schemacheck: no schema known for kind %s in channel %q (have %s)", name, picked.channel, strings.Join(channels(idx, versions[0]), ", "))
	}
	if channel != "" {
		name += " (" + channel + " channel)"
	}

	if release == "" {
		for _, f := range all {
			if release == "" || releaseLess(release, f.Release) {
				release = f.Release
			}
		}
	}
	var picked []*schemaFile
	have := map[string]bool{}
	for _, f := range all {
		have[f.Release] = true
		if f.Release == release {
			picked = append(picked, f)
		}
	}
	if len(picked) == 0 {
		releases := make([]string, 0, len(have))
		for r := range have {
			releases = append(releases, r)
		}
		sort.Slice(releases, func(i, j int) bool { return releaseLess(releases[i], releases[j]) })
		return nil, fmt.Errorf("schemacheck: no CRD for kind %s at release %s (have %s)", name, release, strings.Join(releases, ", "))
	}
	sort.Slice(picked, func(i, j int) bool {
		return kubeversion.CompareKubeAwareVersionStrings(picked[i].Version, picked[j].Version) > 0
	})
	return picked, nil
}

// buildCRD turns the files of one CRD (one release) into the CRD. They
// were derived from one upstream document, so the CRD-wide fields must
// agree; a disagreement means schemas/ was edited by hand.
func buildCRD(files []*schemaFile) (*apiextensionsv1.CustomResourceDefinition, error) {
	first := files[0]
	what := fmt.Sprintf("%s %s release %s", first.Group, first.Kind, first.Release)
	if first.Channel != "" {
		what += " (" + first.Channel + " channel)"
	}
	if first.Names.Plural == "" || first.Names.Kind != first.Kind || first.Scope == "" {
		return nil, fmt.Errorf("schemacheck: %s: %s lacks the CRD names or scope; regenerate schemas/ with hack/derive-schemas", what, first.path)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        first.Names.Plural + "." + first.Group,
			Annotations: maps.Clone(first.Annotations),
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:      first.Group,
			Names:      *first.Names.DeepCopy(),
			Scope:      first.Scope,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
	}
	var storage []string
	for _, f := range files {
		if f.Source != first.Source || f.Scope != first.Scope || !reflect.DeepEqual(f.Names, first.Names) || !maps.Equal(f.Annotations, first.Annotations) {
			return nil, fmt.Errorf("schemacheck: %s: %s and %s disagree on the CRD's source, names, scope or annotations", what, first.path, f.path)
		}
		var schema apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal(f.Schema, &schema); err != nil {
			return nil, fmt.Errorf("schemacheck: %s: %w", f.path, err)
		}
		v := apiextensionsv1.CustomResourceDefinitionVersion{
			Name:                     f.Version,
			Served:                   f.Served,
			Storage:                  f.Storage,
			Deprecated:               f.Deprecated,
			Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
			Subresources:             f.Subresources.DeepCopy(),
			AdditionalPrinterColumns: append([]apiextensionsv1.CustomResourceColumnDefinition(nil), f.PrinterColumns...),
			SelectableFields:         append([]apiextensionsv1.SelectableField(nil), f.SelectableFields...),
		}
		if v.Storage {
			storage = append(storage, v.Name)
		}
		crd.Spec.Versions = append(crd.Spec.Versions, v)
	}
	if len(storage) != 1 {
		var versions []string
		for _, f := range files {
			versions = append(versions, f.Version)
		}
		return nil, fmt.Errorf("schemacheck: %s: a CRD needs exactly one storage version, but %d of its embedded versions (%s) are marked storage",
			what, len(storage), strings.Join(versions, ", "))
	}
	return crd, nil
}

// SetStorageVersion makes version the only storage version of crd, for a
// test that writes objects in that version (see CRD on conversion).
// It returns an error, changing nothing, if crd has no such version.
func SetStorageVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	var have []string
	for _, v := range crd.Spec.Versions {
		have = append(have, v.Name)
	}
	if !slices.Contains(have, version) {
		return fmt.Errorf("schemacheck: CRD %s has no version %q (have %s)", crd.Name, version, strings.Join(have, ", "))
	}
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
	}
	return nil
}
