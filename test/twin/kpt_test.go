package twin_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/internal/testing/ownci"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// TestKptRenderAppliesServerSide: what `kpt fn render` writes into the kpt
// example (docs/gitops.md's command) is applied to the twin with
// server-side apply, as `kubectl apply --server-side` or a GitOps engine
// would: the API server accepts every object, and the model's pods land
// on the pool it was rendered for.
func TestKptRenderAppliesServerSide(t *testing.T) {
	if _, err := exec.LookPath("kpt"); err != nil {
		ownci.Skip(t, "kpt is not on PATH (it cannot be installed from the module proxy); skipping kpt test")
	}
	const caps = "examples/kpt/capabilities.yaml"
	nodes := useCluster(t, caps)
	pkg := filepath.Join(t.TempDir(), "kpt")
	require.NoError(t, os.CopyFS(pkg, os.DirFS(filepath.Join(repoRoot, "examples", "kpt"))))
	bin := t.TempDir()
	require.NoError(t, os.Symlink(renderBin(t), filepath.Join(bin, "airunway-render")))
	cmd := exec.Command("kpt", "fn", "render", pkg, "--allow-exec")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kpt fn render: %s", out)

	var applied []string
	var models, objs []*unstructured.Unstructured
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exampleNamespace}}
	require.NoError(t, createIgnoringExisting(context.Background(), ns))
	t.Cleanup(func() { deleteNamespace(t, ns) })
	start := time.Now()
	err = filepath.WalkDir(pkg, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, o := range decodeObjects(t, data) {
			if o.GetKind() == "Kptfile" || o.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
				continue
			}
			if err := cluster.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("kpt-example"), client.ForceOwnership); err != nil {
				return err
			}
			rel, _ := filepath.Rel(pkg, p)
			applied = append(applied, o.GetKind()+" "+o.GetName()+" ("+rel+")")
			objs = append(objs, o)
			if o.GetKind() == "ModelDeployment" {
				models = append(models, o)
			}
		}
		return nil
	})
	require.NoError(t, err, "server-side apply")
	require.Len(t, applied, 3, "the ModelDeployment and the Deployment and Service kpt wrote beside it: %v", applied)

	got := waitPlaced(t, exampleNamespace, models, deploymentPods(objs), start, twin.HangBound)
	for _, p := range got {
		on := requireOnPool(t, p, nodes)
		addRow("vllm (kpt fn render, server-side apply) | examples/kpt %s | %s | %s | %d/%d | %s | %s", p.model, caps, p.pool, len(on), len(p.pods), strings.Join(on, ","), p.readyAfter.Round(100*time.Millisecond))
	}
}
