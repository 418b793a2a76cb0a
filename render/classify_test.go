package render

import (
	"testing"

	"github.com/stretchr/testify/require"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
)

// TestNearAPIsAreRefused: an object meant for the renderer whose
// apiVersion it would not read (a typo of the group, another group, an
// unserved version) fails the run, naming the apiVersion and what is
// allowed, instead of passing through beside the models that rendered.
// Other APIs' objects pass, whatever their kind.
func TestNearAPIsAreRefused(t *testing.T) {
	const valid = "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: ok, namespace: ml}\nspec: {model: {id: Qwen/Qwen3-0.6B}, provider: {name: vllm}, resources: {gpu: {count: 1}}}\n"
	for _, tc := range []struct {
		apiVersion, kind string
		want             string // the message, "" when the object passes
	}{
		{"airunway.io/v1alpha1", "ModelDeployment", `"airunway.io/v1alpha1" is not supported: the group is "airunway.io", not "airunway.ai", so the renderer would pass this object through unread; ModelDeployment must use apiVersion "airunway.ai/v1alpha1" or "airunway.ai/v1alpha2"`},
		{"serving.example.com/v1", "ModelDeployment", `"serving.example.com/v1" is not supported: the group is "serving.example.com", not "airunway.ai", so the renderer would pass this object through unread; ModelDeployment must use apiVersion "airunway.ai/v1alpha1" or "airunway.ai/v1alpha2"`},
		{"v1", "ClusterCapabilities", `"v1" is not supported: it is of the core group, not "airunway.ai", so the renderer would pass this object through unread; ClusterCapabilities must use apiVersion "airunway.ai/v1alpha1"`},
		{"airunway.io/v1alpha1", "Modeldeployments", `"airunway.io/v1alpha1" is not supported: the group is "airunway.io", not "airunway.ai", so the renderer would pass this object through unread; ModelDeployment must use apiVersion "airunway.ai/v1alpha1" or "airunway.ai/v1alpha2", and kind "Modeldeployments" is not "ModelDeployment"`},
		{"ai-runway.ai/v1alpha1", "InferenceProviderConfig", `"ai-runway.ai/v1alpha1" is not supported: the group is "ai-runway.ai", not "airunway.ai", so the renderer would pass this object through unread; InferenceProviderConfig must use apiVersion "airunway.ai/v1alpha1" or "airunway.ai/v1alpha2"`},
		{"airunway.ai/v1beta1", "InferenceProviderConfig", `"airunway.ai/v1beta1" is not supported: InferenceProviderConfig must use apiVersion "airunway.ai/v1alpha1" or "airunway.ai/v1alpha2"`},
		{"airunway.ai/v1alpha2", "ClusterCapabilities", `"airunway.ai/v1alpha2" is not supported: ClusterCapabilities must use apiVersion "airunway.ai/v1alpha1"`},
		{"airunway.ai/v1alpha2", "ModelCatalog", `"airunway.ai/v1alpha2" is not supported: ModelCatalog must use apiVersion "airunway.ai/v1alpha1"`},
		{"airunway.io/v1alpha1", "ModelCatalog", `"airunway.io/v1alpha1" is not supported: the group is "airunway.io", not "airunway.ai", so the renderer would pass this object through unread; ModelCatalog must use apiVersion "airunway.ai/v1alpha1"`},
		// Unrelated APIs: other kinds, also in a group near ours, and
		// our third kind in a group far from ours.
		{"apps/v1", "Deployment", ""},
		{"airunway.io/v1", "Deployment", ""},
		{"serving.example.com/v1", "InferenceProviderConfig", ""},
		{"kaito.sh/v1beta1", "Workspace", ""},
		{"catalog.example.com/v1", "ModelCatalog", ""}, // a name another API may use
		{"airunway.ai/v1alpha1", "InferenceProviderConfig", ""},
	} {
		t.Run(tc.apiVersion+"/"+tc.kind, func(t *testing.T) {
			other := "apiVersion: " + tc.apiVersion + "\nkind: " + tc.kind + "\nmetadata: {name: other, namespace: ml}\n"
			items := []*kyaml.RNode{kyaml.MustParse(valid), kyaml.MustParse(other)}
			res := Render(items, Options{Capabilities: caps(t, "vllm")})
			var errs []string
			for _, p := range res.Problems {
				if p.Severity == diag.Error {
					errs = append(errs, p.Field+": "+p.Message)
				}
			}
			if tc.want == "" {
				require.Empty(t, errs)
				require.NotEmpty(t, res.Items)
				return
			}
			require.Equal(t, []string{"apiVersion: " + tc.want}, errs)
			require.Nil(t, res.Items, "nothing is rendered")
		})
	}
}
