package twin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestGitOpsArgoCDAutoscaling syncs, with the real Argo CD (automated,
// prune and self-heal on), a cluster overlay of an autoscaled v1alpha2
// model and a fixed v1alpha1 one, through the airunway-render plugin.
// The autoscaled Deployment is rendered without replicas, beside a
// HorizontalPodAutoscaler the twin's real HPA controller runs. Scaled
// through its scale subresource, as an autoscaler does, it stays at the
// new count and the Application stays Synced, through a refresh and a
// sync. The negative control: the fixed Deployment, scaled the same way,
// is taken back to its count from Git by self-heal, so the check can fail.
func TestGitOpsArgoCDAutoscaling(t *testing.T) {
	startArgoCD(t)
	const name, path = "models-autoscaling", "examples/kustomize/clusters/autoscaling"
	useCluster(t, filepath.Join("test", "twin", "testdata", "autoscaling", "capabilities.yaml"))
	r := usePlatformRepo(t)
	require.NoError(t, os.CopyFS(filepath.Join(r.work, filepath.FromSlash(path)), os.DirFS(filepath.Join("testdata", "autoscaling"))))
	require.NoError(t, r.commitAll("an autoscaled model"))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exampleNamespace}}
	t.Cleanup(func() { deleteNamespace(t, ns) })

	argoCluster(t, "autoscaling")
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": argoNamespace},
		"spec": map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": r.URL, "targetRevision": "main", "path": path, "plugin": map[string]any{"name": "airunway-render"}},
			"destination": map[string]any{"name": "autoscaling", "namespace": exampleNamespace},
			"syncPolicy": map[string]any{
				"automated":   map[string]any{"prune": true, "selfHeal": true},
				"syncOptions": []any{"CreateNamespace=true"},
			},
		},
	}}
	ctx := context.Background()
	require.NoError(t, cluster.Client.Create(ctx, app))
	t.Cleanup(func() { _ = cluster.Client.Delete(ctx, app) })
	h := &healthTimeline{}
	waitApp(t, name, h, 3*time.Minute, func(s appState) bool { return s.sync == "Synced" && s.phase == "Succeeded" })

	hpa := &unstructured.Unstructured{}
	hpa.SetAPIVersion("autoscaling/v2")
	hpa.SetKind("HorizontalPodAutoscaler")
	require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: exampleNamespace, Name: "chat"}, hpa), "the autoscaler is applied")
	require.Equal(t, int32(1), replicas(t, "chat"), "without replicas in Git, the API server's default")

	// The autoscaler's move: 3 replicas through the scale subresource.
	scale(t, "chat", 3)
	refreshApp(t, name)
	s, _ := readApp(t, name)
	require.Equal(t, "Synced", s.sync, "Argo CD reports the autoscaled count as drift")
	first := s.started
	requestSync(t, name, "main")
	s = waitApp(t, name, h, time.Minute, func(s appState) bool { return s.started != first && s.phase == "Succeeded" })
	require.Equal(t, "Synced", s.sync)
	require.Equal(t, int32(3), replicas(t, "chat"), "a sync wrote the replica count back over the autoscaler's")

	// The control: the same move on the model whose count Git owns is
	// reverted by self-heal.
	scale(t, "batch", 3)
	deadline := time.Now().Add(2 * time.Minute)
	for replicas(t, "batch") != 1 {
		require.True(t, time.Now().Before(deadline), "Argo CD did not take the fixed Deployment back to its count from Git: the drift check cannot fail")
		time.Sleep(250 * time.Millisecond)
	}
	require.Equal(t, int32(3), replicas(t, "chat"), "self-heal left the autoscaled count alone")
	addGitOpsRow("argocd (real) | %s (%s) | autoscaled Deployment scaled 1 → 3 through /scale: Synced after a refresh and a sync, still 3; the fixed one reverted 3 → 1 by self-heal | %s | -", name, path, h)
}

// replicas is a Deployment's spec.replicas in the example namespace.
func replicas(t *testing.T, name string) int32 {
	t.Helper()
	d := &appsv1.Deployment{}
	require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: exampleNamespace, Name: name}, d))
	if d.Spec.Replicas == nil {
		return 0
	}
	return *d.Spec.Replicas
}

// scale sets a Deployment's replicas through its scale subresource, as the
// HorizontalPodAutoscaler controller and KEDA do.
func scale(t *testing.T, name string, n int32) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: exampleNamespace, Name: name}}
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Namespace: exampleNamespace, Name: name}, Spec: autoscalingv1.ScaleSpec{Replicas: n}}
	require.NoError(t, cluster.Client.SubResource("scale").Update(context.Background(), d, client.WithSubResourceBody(s)))
}

// refreshApp asks Argo CD to compare the live state with Git again, as the
// UI's Refresh does, and waits until it has.
func refreshApp(t *testing.T, name string) {
	t.Helper()
	_, app := readApp(t, name)
	patch := client.MergeFrom(app.DeepCopy())
	annotations := app.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["argocd.argoproj.io/refresh"] = "normal"
	app.SetAnnotations(annotations)
	require.NoError(t, cluster.Client.Patch(context.Background(), app, patch))
	deadline := time.Now().Add(time.Minute)
	for {
		_, app = readApp(t, name)
		if _, pending := app.GetAnnotations()["argocd.argoproj.io/refresh"]; !pending {
			return
		}
		require.True(t, time.Now().Before(deadline), "Argo CD did not refresh %s", name)
		time.Sleep(250 * time.Millisecond)
	}
}
