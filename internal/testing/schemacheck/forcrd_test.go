package schemacheck

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestForCRD validates against a CRD handed in rather than embedded: the
// ModelDeployment CRD rebuilt from schemas/ gives the same answers as Load.
func TestForCRD(t *testing.T) {
	crd, err := CRD("airunway.ai", "ModelDeployment", "")
	require.NoError(t, err)
	v, err := ForCRD(crd, "v1alpha1")
	require.NoError(t, err)
	loaded, err := Load("airunway.ai", "ModelDeployment", "v1alpha1", "")
	require.NoError(t, err)
	for _, o := range []obj{
		modelDeployment(nil),
		modelDeployment(func(s obj) { s["bogus"] = "x" }),
		modelDeployment(func(s obj) { s["scaling"] = obj{"replicas": "two"} }),
	} {
		require.Equal(t, loaded.Validate(o), v.Validate(o))
	}
	requireProblems(t, v.Validate(modelDeployment(func(s obj) { s["bogus"] = "x" })), "spec.bogus: Unknown field")

	_, err = ForCRD(crd, "v2")
	require.EqualError(t, err, `schemacheck: CRD modeldeployments.airunway.ai has no version "v2"`)
	crd.Spec.Versions[0].Schema = nil
	_, err = ForCRD(crd, "v1alpha1")
	require.EqualError(t, err, "schemacheck: CRD modeldeployments.airunway.ai version v1alpha1 has no schema")
}
