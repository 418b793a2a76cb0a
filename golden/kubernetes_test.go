package golden

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/kubefeatures"
)

// TestKubeFeaturesDeclared holds the Kubernetes column of the
// compatibility matrix to what is really rendered. It scans every golden
// output for the features of package kubefeatures:
//   - true: each feature found is declared by the case's provider, or by
//     the gateway when the case has gateway objects (input-dependent
//     features aside, which the matrix lists for everyone);
//   - tight: each declared feature is found in some case of its provider
//     (of the gateway: in some case with gateway objects).
func TestKubeFeaturesDeclared(t *testing.T) {
	declared := map[string][]string{"gateway": capabilities.GatewayKubeFeatures}
	for _, b := range capabilities.Builtins {
		declared[b.Name] = b.KubeFeatures
	}
	seen := map[string]map[string]bool{}
	mark := func(owner, feature string) {
		if seen[owner] == nil {
			seen[owner] = map[string]bool{}
		}
		seen[owner][feature] = true
	}
	files, err := filepath.Glob("testdata/*/expected.yaml")
	require.NoError(t, err)
	cases := 0
	for _, f := range files {
		provider, hasGateway, found := scanCase(t, f)
		if provider == "" {
			continue // an error case: nothing rendered
		}
		cases++
		for _, feature := range found {
			switch {
			case slices.Contains(declared[provider], feature):
				mark(provider, feature)
			case hasGateway && slices.Contains(declared["gateway"], feature):
				mark("gateway", feature)
			default:
				spec, _ := kubefeatures.Lookup(feature)
				require.Truef(t, spec.InputDependent, "%s: provider %s renders %q, which its KubeFeatures do not declare", f, provider, feature)
			}
		}
	}
	require.Greater(t, cases, 50)
	for owner, features := range declared {
		for _, feature := range features {
			require.Truef(t, seen[owner][feature], "%s declares %q, but no golden output of it has the feature: remove the declaration or add a case", owner, feature)
		}
	}
}

// scanCase returns the provider of a golden case's models (one per case
// here), whether it rendered gateway objects, and the features of all its
// rendered objects.
func scanCase(t *testing.T, file string) (string, bool, []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var rl struct {
		Items []map[string]any `json:"items"`
	}
	if sigsyaml.Unmarshal(data, &rl) != nil {
		return "", false, nil // not a ResourceList: an error case's output
	}
	provider, hasGateway := "", false
	var found []string
	for _, item := range rl.Items {
		kind, _ := item["kind"].(string)
		meta, _ := item["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		if kind == "ModelDeployment" {
			if p, ok := annotations[hub.AnnotationProvider].(string); ok {
				require.Truef(t, provider == "" || provider == p, "%s: models of two providers; this test reads one per case", file)
				provider = p
			}
			continue
		}
		if kind == "InferencePool" || kind == "HTTPRoute" {
			hasGateway = true
		}
		found = append(found, kubefeatures.Scan(item)...)
	}
	return provider, hasGateway, found
}
