package schemacheck

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Validator validates unstructured objects against a chosen schema. It is
// safe for concurrent use and is cached, so Load is cheap after the first
// call for a given schema.
type Validator struct {
	gvk        gvk
	channel    string
	release    string
	source     string
	schema     apiservervalidation.SchemaValidator
	structural *structuralschema.Structural
	cel        *cel.Validator // nil when the schema has no x-kubernetes-validations
}

// Release is the upstream release the schema was derived from.
func (v *Validator) Release() string { return v.release }

// Channel is the release channel of the schema ("standard",
// "experimental"), "" for kinds published without channels.
func (v *Validator) Channel() string { return v.channel }

// String names the schema, for test failure messages.
func (v *Validator) String() string {
	return fmt.Sprintf("%s (release %s, from %s)", key{v.gvk, v.channel}, v.release, v.source)
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Validator{}
)

// Load returns a validator for group/kind/version at a release ("" = newest
// release available for that GVK, by semver where the release parses;
// branch snapshots such as "main-..." count as newest), in the kind's
// default channel (standard for Gateway API kinds).
func Load(group, kind, version, release string) (*Validator, error) {
	return LoadChannel(group, kind, version, release, "")
}

// LoadChannel is Load for one release channel ("standard", "experimental";
// "" = the kind's default).
func LoadChannel(group, kind, version, release, channel string) (*Validator, error) {
	f, err := lookup(gvk{group, kind, version}, release, channel)
	if err != nil {
		return nil, err
	}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if v, ok := cache[f.path]; ok {
		return v, nil
	}
	v, err := newValidator(f)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: %s: %w", f.path, err)
	}
	cache[f.path] = v
	return v, nil
}

// ForCRD returns a validator for one version of a CRD that schemas/ does
// not embed, such as one this repository generates (hack/gencrd), so a
// test checks objects against exactly the CRD a cluster installs. It is
// not cached.
func ForCRD(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Validator, error) {
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("schemacheck: CRD %s version %s has no schema", crd.Name, version)
		}
		raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
		if err != nil {
			return nil, err
		}
		f := &schemaFile{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Version: version, Source: "CRD " + crd.Name, Schema: raw}
		val, err := newValidator(f)
		if err != nil {
			return nil, fmt.Errorf("schemacheck: CRD %s: %w", crd.Name, err)
		}
		return val, nil
	}
	return nil, fmt.Errorf("schemacheck: CRD %s has no version %q", crd.Name, version)
}

// newValidator builds the same artefacts the API server builds for a served
// CRD version (see customresource_handler.go in apiextensions-apiserver):
// the OpenAPI schema validator on the internal types, the structural schema
// with pruned defaults, and the CEL validator.
func newValidator(f *schemaFile) (*Validator, error) {
	var external apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(f.Schema, &external); err != nil {
		return nil, err
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&external, &internal, nil); err != nil {
		return nil, err
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	return &Validator{
		gvk:        gvk{f.Group, f.Kind, f.Version},
		channel:    f.Channel,
		release:    f.Release,
		source:     f.Source,
		schema:     sv,
		structural: s,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
	}, nil
}

// ForObject picks the schema by the object's apiVersion/kind, at the newest
// embedded release of the kind's default channel.
func ForObject(obj map[string]any) (*Validator, error) {
	k, err := gvkOf(obj)
	if err != nil {
		return nil, err
	}
	return Load(k.group, k.kind, k.version, "")
}

func gvkOf(obj map[string]any) (gvk, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" {
		return gvk{}, fmt.Errorf("schemacheck: object has no apiVersion/kind")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return gvk{}, fmt.Errorf("schemacheck: %w", err)
	}
	return gvk{gv.Group, kind, gv.Version}, nil
}

// Validate returns every problem found in obj, each a string that starts
// with the field path. obj is not modified. An empty result means the API
// server would accept the object as far as its schema is concerned.
func (v *Validator) Validate(obj map[string]any) []string {
	u, err := normalize(obj)
	if err != nil {
		return []string{err.Error()}
	}

	var problems []string
	if k, err := gvkOf(u); err != nil {
		problems = append(problems, err.Error())
	} else if k != v.gvk {
		problems = append(problems, fmt.Sprintf("apiVersion/kind: Invalid value: %q: this validator is for %s", k.String(), v.gvk))
	}
	problems = append(problems, checkMetadataName(u)...)

	// Decoding: the API server prunes unknown fields (reporting them under
	// strict field validation, kubectl's default), drops nulls the schema
	// does not allow, and checks embedded resources' metadata.
	unknown := pruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, v.structural)
	coerceErr, metaUnknown := schemaobjectmeta.CoerceWithOptions(nil, u, v.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	for _, p := range append(unknown, metaUnknown...) {
		problems = append(problems, fmt.Sprintf("%s: Unknown field", p))
	}
	if coerceErr != nil {
		problems = append(problems, coerceErr.Error())
	}

	// Defaulting happens before validation in the API server.
	structuraldefaulting.Default(u, v.structural)

	// Validation, in the order of customResourceStrategy.Validate.
	var errs field.ErrorList
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u, v.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, u, v.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, v.structural, u)...)
	if v.cel != nil && !blockingError(errs) {
		celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, u, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	} else if v.cel != nil {
		problems = append(problems, "x-kubernetes-validations: rules not evaluated because of the other errors (as in the API server)")
	}
	for _, e := range errs {
		problems = append(problems, e.Error())
	}
	sort.Strings(problems)
	return problems
}

// blockingError mirrors hasBlockingErr in apiextensions-apiserver's
// registry/customresource/strategy.go: CEL rules are not run when the object
// is already structurally broken.
func blockingError(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// normalize deep-copies obj through JSON so that it has exactly the value
// types the API server's decoder produces (int64/float64, []any,
// map[string]any), whatever Go types the caller used.
func normalize(obj map[string]any) (map[string]any, error) {
	if obj == nil {
		return nil, fmt.Errorf("schemacheck: nil object")
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: object is not JSON-serialisable: %w", err)
	}
	var u map[string]any
	if err := utiljson.Unmarshal(data, &u); err != nil {
		return nil, fmt.Errorf("schemacheck: %w", err)
	}
	return u, nil
}

// checkMetadataName is the loose metadata check: metadata must be an object
// with a non-empty name. Rendered manifests never rely on generateName.
func checkMetadataName(u map[string]any) []string {
	m, ok := u["metadata"]
	if !ok || m == nil {
		return []string{"metadata.name: Required value"}
	}
	meta, ok := m.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("metadata: Invalid value: %T: must be an object", m)}
	}
	if name, _ := meta["name"].(string); strings.TrimSpace(name) == "" {
		return []string{"metadata.name: Required value"}
	}
	return nil
}

// Check validates any object this package knows: built-in kinds through
// ValidateBuiltin, custom resources through the newest embedded schema for
// their apiVersion/kind (in the standard channel for Gateway API kinds). An
// object of an unknown kind yields one problem saying so, so a renderer
// emitting an unexpected kind fails the test.
func Check(obj map[string]any) []string {
	return CheckAtChannel(obj, "", "")
}

// CheckAtVersion validates like Check, except that a custom resource is
// validated against the newest embedded release that is not newer than
// atMost, the operator release a capability file declares (for example
// KAITO "0.8.1" selects the v0.8.1 schema, "0.11.0" the v0.10.0 one). A kind
// known only from an untagged snapshot ("main-...") uses that snapshot.
// An empty atMost means the newest release.
func CheckAtVersion(obj map[string]any, atMost string) []string {
	return CheckAtChannel(obj, atMost, "")
}

// CheckAtChannel validates like CheckAtVersion, in a release channel: a
// Gateway API bundle is installed as "standard" or "experimental", and a
// field only the experimental schema has is pruned by a standard cluster.
// An empty channel means the kind's default (standard for Gateway API
// kinds, none for kinds published without channels); asking a kind for a
// channel it is not published in is a problem. Built-in kinds ignore it.
func CheckAtChannel(obj map[string]any, atMost, channel string) []string {
	if isBuiltin(obj) {
		return ValidateBuiltin(obj)
	}
	k, err := gvkOf(obj)
	if err != nil {
		return []string{err.Error()}
	}
	release := ""
	if atMost != "" {
		if release, err = releaseAtMost(k, channel, atMost); err != nil {
			return []string{err.Error()}
		}
	}
	v, err := LoadChannel(k.group, k.kind, k.version, release, channel)
	if err != nil {
		return []string{err.Error()}
	}
	return v.Validate(obj)
}

func releaseAtMost(k gvk, channel, atMost string) (string, error) {
	limit, err := version.ParseSemantic(strings.TrimPrefix(atMost, "v"))
	if err != nil {
		return "", fmt.Errorf("schemacheck: %q is not a release version: %v", atMost, err)
	}
	idx, err := loadIndex()
	if err != nil {
		return "", err
	}
	kc := resolveChannel(idx, k, channel)
	releases := ChannelReleases(k.group, k.kind, k.version, channel)
	chosen, tagged := "", false
	for _, r := range releases {
		v, err := version.ParseSemantic(r)
		switch {
		case err != nil && !tagged:
			chosen = r // an untagged snapshot, used only when no tag exists
		case err == nil && !limit.LessThan(v):
			chosen, tagged = r, true
		}
	}
	if chosen == "" {
		if len(releases) == 0 {
			// Let LoadChannel say which channels exist.
			_, err := LoadChannel(k.group, k.kind, k.version, "", channel)
			return "", err
		}
		return "", fmt.Errorf("schemacheck: no %s schema at or below release %s (have %v)", kc, atMost, releases)
	}
	return chosen, nil
}
