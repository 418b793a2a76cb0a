package twin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/internal/testing/argolua"
)

// argoHealth runs the shipped health check (deploy/argocd/health.lua) on a
// live object as Argo CD runs a script from argocd-cm (argolua: without
// the open libraries, the object as the global `obj`, the returned table's
// status and message read back as ExecuteHealthLua reads them). It stands
// in for a full Argo CD run where one would only add its sync loop's
// minutes; deploy/argocd's tests pin that harness to Argo CD's Lua setup
// and TestGitOpsArgoCD runs the real Argo CD with the script.
func argoHealth(t *testing.T, obj *unstructured.Unstructured) argolua.Health {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "argocd", "health.lua"))
	require.NoError(t, err)
	health, err := argolua.RunHealth(t, false, string(script), obj.Object)
	require.NoError(t, err)
	return health
}
