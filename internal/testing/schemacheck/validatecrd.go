package schemacheck

import (
	"context"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
}()

// ValidateCRD runs what the API server runs when a CRD is created: v1
// defaulting, conversion to the internal type, the registry's
// PrepareForCreate (status reset, storedVersions), and the create
// validation (names, structural schemas, defaults, CEL compilation and
// cost limits, printer column and subresource paths, API approval).
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) (field.ErrorList, error) {
	v1 := crd.DeepCopy()
	crdScheme.Default(v1)
	var internal apiextensions.CustomResourceDefinition
	if err := crdScheme.Convert(v1, &internal, nil); err != nil {
		return nil, err
	}
	internal.Status = apiextensions.CustomResourceDefinitionStatus{}
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = []string{v.Name}
			break
		}
	}
	return validation.ValidateCustomResourceDefinition(context.Background(), &internal), nil
}
