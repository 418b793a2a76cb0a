package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

// TestEndpointIsARenderedService holds the endpoint a model records
// (render.airunway.ai/endpoint, what `preview` compares across an upgrade)
// to the objects rendered for it: where the provider renders the Service
// itself (vllm, llmd), a Service of that name in the model's namespace has
// that port. The operators' own Services (KAITO, KubeRay, Dynamo) follow
// their status translation, which the status tests hold.
func TestEndpointIsARenderedService(t *testing.T) {
	files, err := filepath.Glob("testdata/*/expected.yaml")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var rl struct {
			Items []struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name        string            `json:"name"`
					Namespace   string            `json:"namespace"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
				Spec struct {
					Ports []struct {
						Port int32 `json:"port"`
					} `json:"ports"`
				} `json:"spec"`
			} `json:"items"`
		}
		if sigsyaml.Unmarshal(data, &rl) != nil {
			continue // an error case's output
		}
		services := map[string]bool{}
		for _, it := range rl.Items {
			if it.Kind == "Service" {
				for _, p := range it.Spec.Ports {
					services[fmt.Sprintf("%s/%s:%d", it.Metadata.Namespace, it.Metadata.Name, p.Port)] = true
				}
			}
		}
		for _, it := range rl.Items {
			a := it.Metadata.Annotations
			if it.Kind != hub.KindModelDeployment || (a[hub.AnnotationProvider] != "vllm" && a[hub.AnnotationProvider] != "llmd") {
				continue
			}
			require.NotEmpty(t, a[hub.AnnotationEndpoint], "%s: %s has no endpoint", f, it.Metadata.Name)
			require.True(t, services[it.Metadata.Namespace+"/"+a[hub.AnnotationEndpoint]], "%s: %s records endpoint %q, which no rendered Service has", f, it.Metadata.Name, a[hub.AnnotationEndpoint])
			checked++
		}
	}
	require.Greater(t, checked, 20)
}
