package versions

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/migrations"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
	"github.com/airunway-render/airunway-render/diag"
)

// Version is one served version of the airunway.ai API.
type Version struct {
	// APIVersion is the group and version, e.g. "airunway.ai/v1alpha1".
	APIVersion string
	// ModelDeployment decodes, defaults and converts a ModelDeployment.
	ModelDeployment func(data []byte) (*hub.ModelDeployment, diag.List)
	// ClusterCapabilities decodes and converts a capability file; nil for
	// a version that does not serve ClusterCapabilities.
	ClusterCapabilities func(data []byte) (*hub.ClusterCapabilities, diag.List)
	// ModelCatalog decodes and converts a model catalog; nil for a
	// version that does not serve ModelCatalog.
	ModelCatalog func(data []byte) (*hub.ModelCatalog, diag.List)
	// Migrate rewrites a ModelDeployment of this version, as YAML, to the
	// version's newest form in place, saying what changed.
	Migrate func(obj *yaml.RNode) ([]string, error)
}

// Served lists the served versions, oldest first; the last is the newest.
// ClusterCapabilities and ModelCatalog are served only as v1alpha1:
// v1alpha2 changed the ModelDeployment alone.
var Served = []Version{
	{APIVersion: v1alpha1.APIVersion, ModelDeployment: v1alpha1.ToHub, ClusterCapabilities: v1alpha1.CapabilitiesToHub,
		ModelCatalog: v1alpha1.ModelCatalogToHub, Migrate: migrations.ForVersion(v1alpha1.ToHub)},
	{APIVersion: v1alpha2.APIVersion, ModelDeployment: v1alpha2.ToHub, Migrate: migrations.ForVersion(v1alpha2.ToHub)},
}

// Newest is the apiVersion new manifests should use.
func Newest() string { return Served[len(Served)-1].APIVersion }

// Lookup returns the served version of apiVersion, false when it is not
// served.
func Lookup(apiVersion string) (Version, bool) {
	for _, v := range Served {
		if v.APIVersion == apiVersion {
			return v, true
		}
	}
	return Version{}, false
}

// NotServed is the message for an apiVersion no version serves for kind,
// naming the ones that do.
func NotServed(apiVersion, kind string) string {
	var names []string
	for _, v := range Served {
		if serves(v, kind) {
			names = append(names, fmt.Sprintf("%q", v.APIVersion))
		}
	}
	return fmt.Sprintf("%q is not supported: %s must use apiVersion %s", apiVersion, kind, strings.Join(names, " or "))
}

// Serves reports whether apiVersion is served for kind.
func Serves(apiVersion, kind string) bool {
	v, ok := Lookup(apiVersion)
	return ok && serves(v, kind)
}

func serves(v Version, kind string) bool {
	switch kind {
	case hub.KindClusterCapabilities:
		return v.ClusterCapabilities != nil
	case hub.KindModelCatalog:
		return v.ModelCatalog != nil
	}
	return true
}

// DecodeModelDeployment turns a ModelDeployment of any served version into
// the hub, defaulted, with its version's deprecation warnings. An apiVersion
// that is not served is an error, and the object is still checked as the
// newest version, so one run reports all its problems. The object is nil
// only when it could not be decoded; otherwise it is returned even with
// errors, for the caller to validate further.
func DecodeModelDeployment(apiVersion string, data []byte) (*hub.ModelDeployment, diag.List) {
	v, l := lookupOrNewest(apiVersion, hub.KindModelDeployment)
	md, dl := v.ModelDeployment(data)
	return md, append(l, dl...)
}

// DecodeClusterCapabilities turns a capability file of any served version
// into the hub, as DecodeModelDeployment does.
func DecodeClusterCapabilities(apiVersion string, data []byte) (*hub.ClusterCapabilities, diag.List) {
	v, l := lookupOrNewest(apiVersion, hub.KindClusterCapabilities)
	c, dl := v.ClusterCapabilities(data)
	return c, append(l, dl...)
}

// DecodeModelCatalog turns a model catalog of any served version into the
// hub, as DecodeModelDeployment does; it is not validated
// (hub.ValidateModelCatalog).
func DecodeModelCatalog(apiVersion string, data []byte) (*hub.ModelCatalog, diag.List) {
	v, l := lookupOrNewest(apiVersion, hub.KindModelCatalog)
	c, dl := v.ModelCatalog(data)
	return c, append(l, dl...)
}

// lookupOrNewest returns the version of apiVersion, else, with an error,
// the newest version that serves kind.
func lookupOrNewest(apiVersion, kind string) (Version, diag.List) {
	if Serves(apiVersion, kind) {
		v, _ := Lookup(apiVersion)
		return v, nil
	}
	var l diag.List
	l.Errorf("apiVersion", "%s", NotServed(apiVersion, kind))
	for i := len(Served) - 1; ; i-- {
		if serves(Served[i], kind) {
			return Served[i], l
		}
	}
}

// Migrate rewrites a ModelDeployment, as YAML, to the newest form of the
// served version it is written in, in place, and says what changed.
// Anything else is left alone: other kinds, and an apiVersion no version
// serves (rendering reports that). The caller checks first that kyaml's
// accessors can read the object (CheckShape).
func Migrate(obj *yaml.RNode) ([]string, error) {
	if obj.GetKind() != hub.KindModelDeployment {
		return nil, nil
	}
	v, served := Lookup(obj.GetApiVersion())
	if !served {
		return nil, nil
	}
	return v.Migrate(obj)
}

// Names lists the served apiVersions, oldest first.
func Names() []string {
	names := make([]string, len(Served))
	for i, v := range Served {
		names[i] = v.APIVersion
	}
	return names
}
