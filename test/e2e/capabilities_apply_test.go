package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/testing/schemacheck"
)

// TestCapabilitiesApplyRecipe builds docs/discover.md's recipe for applying
// a capability file from Git with the real kustomize: without the patch,
// kustomize drops the local-config object; with it, the ClusterCapabilities
// comes out whole, without the annotation, and valid against deploy/base's
// CRD.
func TestCapabilitiesApplyRecipe(t *testing.T) {
	dir := t.TempDir()
	caps, err := os.ReadFile(filepath.Join(repoRoot, "examples", "kustomize", "clusters", "prod", "capabilities.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "capabilities.yaml"), caps, 0o644))
	write := func(kustomization string) []byte {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644))
		out, err := exec.Command(kustomizeBin(t), "build", dir).Output()
		require.NoError(t, err)
		return out
	}
	require.Empty(t, string(write("resources: [capabilities.yaml]\n")), "kustomize drops a local-config object")

	out := write(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- capabilities.yaml
patches:
- target: {kind: ClusterCapabilities}
  patch: |-
    - op: remove
      path: /metadata/annotations/config.kubernetes.io~1local-config
`)
	var got, want map[string]any
	require.NoError(t, sigsyaml.Unmarshal(out, &got))
	require.NoError(t, sigsyaml.Unmarshal(caps, &want))
	require.Equal(t, want["spec"], got["spec"])
	require.Equal(t, map[string]any{"name": "prod"}, got["metadata"], "the annotation is gone, nothing else is added")

	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "base", "airunway.ai_clustercapabilities.yaml"))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, sigsyaml.Unmarshal(data, crd))
	v, err := schemacheck.ForCRD(crd, "v1alpha1")
	require.NoError(t, err)
	require.Empty(t, v.Validate(got))
}
