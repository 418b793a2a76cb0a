package schemacheck

import (
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/deploy/base"
)

// ownValidators holds a validator per kind and version of the airunway.ai
// CRDs deploy/base installs.
var ownValidators = sync.OnceValues(func() (map[string]*Validator, error) {
	out := map[string]*Validator{}
	for _, data := range [][]byte{base.ModelDeploymentsCRD, base.ClusterCapabilitiesCRD} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, err
		}
		for _, v := range crd.Spec.Versions {
			val, err := ForCRD(crd, v.Name)
			if err != nil {
				return nil, err
			}
			out[crd.Spec.Names.Kind+"/"+v.Name] = val
		}
	}
	return out, nil
})

// Own returns the validator of an airunway.ai kind at version, from the
// CRD deploy/base installs.
func Own(kind, version string) (*Validator, error) {
	all, err := ownValidators()
	if err != nil {
		return nil, err
	}
	if v := all[kind+"/"+version]; v != nil {
		return v, nil
	}
	return nil, fmt.Errorf("schemacheck: deploy/base serves no %s/%s %s", hub.Group, version, kind)
}
