package twin_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/internal/testing/twin"
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
	const name, path = "models-autoscaling", autoscalingOverlay
	useCluster(t, filepath.Join("test", "twin", "testdata", "autoscaling", "capabilities.yaml"))
	r := useAutoscalingOverlay(t)
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
	waitApp(t, name, h, twin.HangBound, func(s appState) bool { return s.sync == "Synced" && s.phase == "Succeeded" })

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
	s = syncAgain(t, name)
	require.Equal(t, "Synced", s.sync)
	require.Equal(t, int32(3), replicas(t, "chat"), "a sync wrote the replica count back over the autoscaler's")

	// The control: the same move on the model whose count Git owns is
	// reverted by self-heal.
	scale(t, "batch", 3)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, int32(1), replicas(c, "batch"), "batch's spec.replicas")
	}, twin.HangBound, 250*time.Millisecond, "Argo CD did not take the fixed Deployment back to its count from Git: the drift check cannot fail")
	require.Equal(t, int32(3), replicas(t, "chat"), "self-heal left the autoscaled count alone")
	addGitOpsRow("argocd (real) | %s (%s) | autoscaled Deployment scaled 1 → 3 through /scale: Synced after a refresh and a sync, still 3; the fixed one reverted 3 → 1 by self-heal | %s | -", name, path, h)
}

// syncAgain requests a sync of the Application and returns its state once
// that sync (known by requestSync's mark) has succeeded. A request the
// application controller drops (seen once, in a cold make test: no
// operation pending and none started for a minute) is made again: the
// controller keeps a requested operation in the Application until the
// operation ends, and its state has the request's mark from the start,
// so an Application with no operation pending whose last operation is
// not the one requested has lost the request (the Application is read
// from the API server, not a cache). The log says so; the sync's outcome
// is still the caller's to check.
func syncAgain(t *testing.T, name string) appState {
	t.Helper()
	request := requestSync(t, name, "main")
	var last appState
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		s, app := readApp(c, name)
		last = s
		if s.request == request && s.phase == "Succeeded" {
			return
		}
		if _, pending, _ := unstructured.NestedMap(app.Object, "operation"); !pending && s.request != request {
			t.Logf("the requested sync %s of %s was dropped (no operation pending, the last one is not it); requesting it again", request, name)
			request = requestSync(c, name, "main")
		}
		c.Errorf("the requested sync %s has not succeeded: %+v", request, s)
	}, twin.HangBound, 250*time.Millisecond, "the requested sync of %s did not succeed", name)
	return last
}

// autoscalingOverlay is where the autoscaling tests' overlay
// (testdata/autoscaling) lives in the platform repository.
const autoscalingOverlay = "examples/kustomize/clusters/autoscaling"

var overlayOnce sync.Once

// useAutoscalingOverlay commits testdata/autoscaling into the platform
// repository as a cluster overlay, once.
func useAutoscalingOverlay(t *testing.T) *platformRepo {
	t.Helper()
	r := usePlatformRepo(t)
	var err error
	overlayOnce.Do(func() {
		if err = os.CopyFS(filepath.Join(r.work, filepath.FromSlash(autoscalingOverlay)), os.DirFS(filepath.Join("testdata", "autoscaling"))); err == nil {
			err = r.commitAll("an autoscaled model")
		}
	})
	require.NoError(t, err)
	return r
}

// TestGitOpsFluxAutoscaling applies the same overlay, rendered into a
// directory as for Flux (examples/flux), with the real Flux controllers
// (server-side apply, reconciling every 5 s): the autoscaled Deployment,
// scaled through /scale, keeps its count through a reconcile, the
// Kustomization Ready; the fixed one is taken back to its count from Git.
func TestGitOpsFluxAutoscaling(t *testing.T) {
	startFlux(t)
	useCluster(t, filepath.Join("test", "twin", "testdata", "autoscaling", "capabilities.yaml"))
	r := useAutoscalingOverlay(t)
	const rendered = "examples/flux/rendered/autoscaling"
	out := runRender(t, "build", filepath.Join(r.work, filepath.FromSlash(autoscalingOverlay)))
	dir := filepath.Join(r.work, filepath.FromSlash(rendered))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	namespace := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + exampleNamespace + "\n---\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "models.yaml"), append([]byte(namespace), out...), 0o644))
	require.NoError(t, r.commitAll("the autoscaling overlay, rendered"))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exampleNamespace}}
	t.Cleanup(func() { deleteNamespace(t, ns) })

	ctx := context.Background()
	require.NoError(t, createIgnoringExisting(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fluxNamespace}}))
	const name = "autoscaling"
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
			"metadata": map[string]any{"name": name, "namespace": fluxNamespace},
			"spec":     map[string]any{"interval": "5s", "url": r.URL, "ref": map[string]any{"branch": "main"}}}},
		{Object: map[string]any{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
			"metadata": map[string]any{"name": name, "namespace": fluxNamespace},
			"spec": map[string]any{"interval": "5s", "retryInterval": "5s", "timeout": "30s", "prune": true,
				"path": "./" + rendered, "sourceRef": map[string]any{"kind": "GitRepository", "name": name}}}},
	}
	for _, o := range objs {
		require.NoError(t, cluster.Client.Create(ctx, o))
		t.Cleanup(func() { _ = cluster.Client.Delete(ctx, o) })
	}
	h := &healthTimeline{}
	waitKustomization(t, name, h, twin.HangBound, func(s string) bool { return s == "True" })
	require.Equal(t, int32(1), replicas(t, "chat"), "without replicas in Git, the API server's default")

	scale(t, "chat", 3)
	reconcileKustomization(t, name)
	status, msg, _ := kustomizationReady(t, name)
	require.Equal(t, "True", status, msg)
	require.Equal(t, int32(3), replicas(t, "chat"), "a reconcile wrote the replica count back over the autoscaler's")

	scale(t, "batch", 3)
	reconcileKustomization(t, name)
	require.Equal(t, int32(1), replicas(t, "batch"), "Flux did not take the fixed Deployment back to its count from Git: the drift check cannot fail")
	require.Equal(t, int32(3), replicas(t, "chat"))
	addGitOpsRow("flux (real) | %s (%s) | autoscaled Deployment scaled 1 → 3 through /scale: still 3 after a reconcile, Ready; the fixed one reverted 3 → 1 | %s | -", name, rendered, h)
}

// reconcileKustomization asks kustomize-controller to apply again now, as
// `flux reconcile kustomization` does, and waits until it has.
func reconcileKustomization(t *testing.T, name string) {
	t.Helper()
	_, _, k := kustomizationReady(t, name)
	at := time.Now().Format(time.RFC3339Nano)
	patch := client.MergeFrom(k.DeepCopy())
	annotations := k.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["reconcile.fluxcd.io/requestedAt"] = at
	k.SetAnnotations(annotations)
	require.NoError(t, cluster.Client.Patch(context.Background(), k, patch))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, _, k := kustomizationReady(c, name)
		handled, _, _ := unstructured.NestedString(k.Object, "status", "lastHandledReconcileAt")
		assert.Equal(c, at, handled, "status.lastHandledReconcileAt")
	}, twin.HangBound, 250*time.Millisecond, "kustomize-controller did not reconcile %s", name)
}

// replicas is a Deployment's spec.replicas in the example namespace.
func replicas(t tb, name string) int32 {
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

// requestRefresh sets Argo CD's refresh annotation on the Application
// ("normal" or "hard"); Argo CD removes it once it has refreshed.
func requestRefresh(t *testing.T, name, kind string) {
	t.Helper()
	_, app := readApp(t, name)
	patch := client.MergeFrom(app.DeepCopy())
	annotations := app.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["argocd.argoproj.io/refresh"] = kind
	app.SetAnnotations(annotations)
	require.NoError(t, cluster.Client.Patch(context.Background(), app, patch))
}

// refreshApp asks Argo CD to compare the live state with Git again, as the
// UI's Refresh does, and waits until it has.
func refreshApp(t *testing.T, name string) {
	t.Helper()
	requestRefresh(t, name, "normal")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, app := readApp(c, name)
		assert.NotContains(c, app.GetAnnotations(), "argocd.argoproj.io/refresh", "the refresh request is still pending")
	}, twin.HangBound, 250*time.Millisecond, "Argo CD did not refresh %s", name)
}
