package versions

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha1/migrations"
	"github.com/airunway-render/airunway-render/diag"
)

// Version is one served version of the airunway.ai API.
type Version struct {
	// APIVersion is the group and version, e.g. "airunway.ai/v1alpha1".
	APIVersion string
	// ModelDeployment decodes, defaults and converts a ModelDeployment.
	ModelDeployment func(data []byte) (*hub.ModelDeployment, diag.List)
	// ClusterCapabilities decodes and converts a capability file.
	ClusterCapabilities func(data []byte) (*hub.ClusterCapabilities, diag.List)
	// Migrate rewrites a ModelDeployment of this version, as YAML, to the
	// version's newest form in place, saying what changed.
	Migrate func(obj *yaml.RNode) ([]string, error)
}

// Served lists the served versions, oldest first; the last is the newest,
// the form `airunway-render migrate` writes.
var Served = []Version{
	{APIVersion: v1alpha1.APIVersion, ModelDeployment: v1alpha1.ToHub, ClusterCapabilities: v1alpha1.CapabilitiesToHub, Migrate: migrations.Apply},
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

// NotServed is the message for an apiVersion no version serves, naming the
// ones that are.
func NotServed(apiVersion, kind string) string {
	names := make([]string, len(Served))
	for i, v := range Served {
		names[i] = fmt.Sprintf("%q", v.APIVersion)
	}
	return fmt.Sprintf("%q is not supported: %s must use apiVersion %s", apiVersion, kind, strings.Join(names, " or "))
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

func lookupOrNewest(apiVersion, kind string) (Version, diag.List) {
	if v, ok := Lookup(apiVersion); ok {
		return v, nil
	}
	var l diag.List
	l.Errorf("apiVersion", "%s", NotServed(apiVersion, kind))
	return Served[len(Served)-1], l
}

// Migrate rewrites a ModelDeployment, as YAML, to the newest form of the
// served version it is written in, in place, and says what changed.
// Anything else is left alone: other kinds, and an apiVersion no version
// serves (rendering reports that). The caller checks first that kyaml's
// accessors can read the object (render.CheckShape).
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
