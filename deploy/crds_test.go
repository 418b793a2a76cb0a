package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/kbuild"
)

// TestCRDsAlone installs deploy/crds, as built by kustomize (the library
// build uses), on a real API server without the status reporter: a
// rendered v1alpha1 ModelDeployment is created and listed at the
// preferred version (what Argo CD's cache and kubectl read), a v1alpha2
// one is refused, and the capability file applies.
func TestCRDsAlone(t *testing.T) {
	res, err := kbuild.Build("crds", kbuild.Options{Function: "/nonexistent", Root: "."})
	require.NoError(t, err)
	require.False(t, res.RunsFunction)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, doc := range splitDocs(string(res.YAML)) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.UnmarshalStrict([]byte(doc), crd))
		require.Equal(t, "CustomResourceDefinition", crd.Kind, "deploy/crds holds CRDs only")
		crds = append(crds, crd)
	}
	require.Len(t, crds, 2)
	cfg, c := startAPIServer(t, crds...)
	ctx := context.Background()

	// The preferred version is what discovery-driven readers use.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	require.NoError(t, err)
	groups, err := dc.ServerGroups()
	require.NoError(t, err)
	for _, g := range groups.Groups {
		if g.Name == "airunway.ai" {
			require.Equal(t, "airunway.ai/v1alpha1", g.PreferredVersion.GroupVersion)
		}
	}

	md := func(apiVersion string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: obj{
			"apiVersion": apiVersion, "kind": "ModelDeployment",
			"metadata": obj{"name": "qwen", "namespace": "default"},
			"spec":     obj{"model": obj{"id": "Qwen/Qwen3-0.6B"}, "engine": obj{"type": "vllm"}},
		}}
	}
	require.NoError(t, c.Create(ctx, md("airunway.ai/v1alpha1"), client.FieldValidation("Strict")))
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("airunway.ai/v1alpha1")
	list.SetKind("ModelDeploymentList")
	require.NoError(t, c.List(ctx, list))
	require.Len(t, list.Items, 1)
	err = c.Create(ctx, md("airunway.ai/v1alpha2"))
	require.ErrorContains(t, err, `no matches for kind "ModelDeployment" in version "airunway.ai/v1alpha2"`)

	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "capabilities", "prod-eastus.yaml"))
	require.NoError(t, err)
	caps := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &caps.Object))
	require.NoError(t, c.Create(ctx, caps, client.FieldValidation("Strict")))
}

// splitDocs splits a multi-document YAML stream as kustomize prints it.
func splitDocs(s string) []string {
	var out []string
	for _, d := range strings.Split(s, "\n---\n") {
		if strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}
