package deploy

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/v1alpha2"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/internal/testing/conversiontest"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
	"github.com/airunway-render/airunway-render/reporter"
)

const v1alpha2Model = `apiVersion: airunway.ai/v1alpha2
kind: ModelDeployment
metadata:
  name: qwen
  namespace: default
  labels: {team: search}
spec:
  model: {id: Qwen/Qwen3-8B, servedName: qwen3}
  engine: {type: vllm, args: {max-model-len: "8192"}}
  resources: {gpu: {count: 1}}
  adapters:
  - {name: sql, source: "hf://my-org/qwen3-sql-lora"}
  - {name: legal, source: "hf://my-org/qwen3-legal-lora"}
  scaling:
    autoscaling: {minReplicas: 0, maxReplicas: 4, metric: kvCacheUsage, target: 70, scaleDownDelaySeconds: 600}
  gateway:
    parentRef: {name: team-a-gateway, namespace: gateway-system}
`

// TestModelDeploymentConversionOnAPIServer installs base/'s ModelDeployment
// CRD (v1alpha1 stored, v1alpha2 served) on a real API server, its
// conversion webhook served by the status reporter's handler on
// 127.0.0.1, and converts for real: a v1alpha2 object is stored as
// v1alpha1 with its fields in the annotation and comes back whole, through
// writes in either version, and every shipped v1alpha1 model reads the
// same as v1alpha2.
func TestModelDeploymentConversionOnAPIServer(t *testing.T) {
	webhook, err := conversiontest.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = webhook.Close() })
	data, err := os.ReadFile(filepath.Join("base", "airunway.ai_modeldeployments.yaml"))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, crd))
	webhook.Point(crd)
	// Installed after the start: envtest drops the conversion of the CRDs
	// it installs itself unless their Go types are in its scheme.
	cfg, c := startAPIServer(t, shippedCRD(t))
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}, MaxTime: 3 * time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	live := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, c.Get(ctx, types.NamespacedName{Name: crd.Name}, live))
	require.Equal(t, apiextensionsv1.WebhookConverter, live.Spec.Conversion.Strategy)

	applied := object(t, v1alpha2Model)
	require.NoError(t, c.Create(ctx, applied.DeepCopy(), client.FieldValidation("Strict")))
	key := types.NamespacedName{Namespace: "default", Name: "qwen"}
	read := func(version string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(hub.Group + "/" + version)
		u.SetKind(hub.KindModelDeployment)
		require.NoError(t, c.Get(ctx, key, u))
		return u
	}

	t.Run("v1alpha2 is stored as v1alpha1 with the annotation", func(t *testing.T) {
		old := read(v1.Version)
		spec := old.Object["spec"].(map[string]any)
		require.NotContains(t, spec, "adapters")
		require.NotContains(t, spec["scaling"], "autoscaling")
		require.Empty(t, spec["gateway"], "gateway held only parentRef")
		js, err := json.Marshal(old.Object)
		require.NoError(t, err)
		_, problems := v1.DecodeModelDeployment(js)
		require.Empty(t, problems, "the stored form is strict v1alpha1")
		require.JSONEq(t, `{"adapters":[{"name":"sql","source":"hf://my-org/qwen3-sql-lora"},{"name":"legal","source":"hf://my-org/qwen3-legal-lora"}],
			"scaling":{"autoscaling":{"minReplicas":0,"maxReplicas":4,"metric":"kvCacheUsage","target":70,"scaleDownDelaySeconds":600}},
			"gateway":{"parentRef":{"name":"team-a-gateway","namespace":"gateway-system"}}}`, old.GetAnnotations()[v1.AnnotationV1alpha2Fields])
	})

	requireSameModel := func(t *testing.T, got *unstructured.Unstructured) {
		t.Helper()
		spec := got.Object["spec"].(map[string]any)
		for _, field := range []string{"adapters", "scaling", "gateway"} {
			require.Equal(t, applied.Object["spec"].(map[string]any)[field], spec[field], field)
		}
		require.NotContains(t, got.GetAnnotations(), v1.AnnotationV1alpha2Fields)
		require.Equal(t, hubOf(t, applied), hubOf(t, got), "the renderer reads the same model")
	}

	t.Run("read back as v1alpha2, nothing lost", func(t *testing.T) {
		requireSameModel(t, read(v1alpha2.Version))
	})

	t.Run("writes in v1alpha1 keep the v1alpha2 fields", func(t *testing.T) {
		old := read(v1.Version)
		patch := []byte(`{"metadata":{"labels":{"tier":"gold"}},"spec":{"engine":{"args":{"max-model-len":"16384"}}}}`)
		require.NoError(t, c.Patch(ctx, old, client.RawPatch(types.MergePatchType, patch)))
		status := []byte(`{"status":{"phase":"Running","replicas":{"ready":2}}}`)
		require.NoError(t, c.Status().Patch(ctx, old, client.RawPatch(types.MergePatchType, status)))
		now := read(v1alpha2.Version)
		require.Equal(t, "gold", now.GetLabels()["tier"])
		args, _, _ := unstructured.NestedString(now.Object, "spec", "engine", "args", "max-model-len")
		require.Equal(t, "16384", args)
		phase, _, _ := unstructured.NestedString(now.Object, "status", "phase")
		require.Equal(t, "Running", phase, "status passes through conversion")
		require.NoError(t, unstructured.SetNestedField(applied.Object, "16384", "spec", "engine", "args", "max-model-len"))
		requireSameModel(t, now)
	})

	t.Run("v1alpha2 refuses a replica count beside autoscaling", func(t *testing.T) {
		u := object(t, v1alpha2Model)
		u.SetName("both")
		require.NoError(t, unstructured.SetNestedField(u.Object, int64(2), "spec", "scaling", "replicas"))
		require.ErrorContains(t, c.Create(ctx, u), "replicas must not be set with autoscaling")
	})

	t.Run("shipped v1alpha1 models read the same as v1alpha2", func(t *testing.T) {
		n := 0
		for _, file := range shippedModels(t) {
			u := object(t, file)
			u.SetNamespace("default")
			js, err := json.Marshal(u.Object)
			require.NoError(t, err)
			if _, l := versions.DecodeModelDeployment(v1.APIVersion, js); l.HasErrors() {
				continue
			}
			u.SetName("shipped-" + u.GetName())
			if err := c.Create(ctx, u.DeepCopy()); err != nil {
				continue // a name the API server refuses; not this test's concern
			}
			got := &unstructured.Unstructured{}
			got.SetAPIVersion(v1alpha2.APIVersion)
			got.SetKind(hub.KindModelDeployment)
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(u), got))
			require.Equal(t, hubOf(t, u), hubOf(t, got), u.GetName())
			n++
		}
		require.Greater(t, n, 10)
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(v1alpha2.APIVersion)
		list.SetKind(hub.KindModelDeployment + "List")
		require.NoError(t, c.List(ctx, list, client.InNamespace("default")))
		require.Equal(t, n+1, len(list.Items), "a list converts every item")
	})
}

// object decodes a YAML manifest.
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(manifest))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(js))
	return u
}

// hubOf is the model as the renderer reads it: its served version's
// decoding, conversion and defaults, without metadata the cluster adds.
func hubOf(t *testing.T, u *unstructured.Unstructured) hub.ModelDeploymentSpec {
	t.Helper()
	js, err := json.Marshal(map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": map[string]any{"name": u.GetName()}, "spec": u.Object["spec"]})
	require.NoError(t, err)
	md, l := versions.DecodeModelDeployment(u.GetAPIVersion(), js)
	require.False(t, l.HasErrors(), "%v", l)
	return md.Spec
}

// shippedModels are the example models, one manifest each.
func shippedModels(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "kustomize", "base", "*.yaml"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(repoRoot, "golden", "testdata", "*", "modeldeployment.yaml"))
	require.NoError(t, err)
	var out []string
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, doc := range strings.Split(string(data), "\n---") {
			var m map[string]any
			if yaml.Unmarshal([]byte(doc), &m) != nil || m["kind"] != hub.KindModelDeployment || m["apiVersion"] != v1.APIVersion {
				continue
			}
			out = append(out, doc)
		}
	}
	return out
}

// TestReporterKeepsItsWebhook runs the status reporter as the
// ServiceAccount deploy/base creates, with only the RBAC it ships, serving
// the conversion webhook with a certificate it keeps itself: it creates
// the Secret, writes its CA into the CRD, which the API server then uses
// to convert for real, and puts the CA back when the CRD is applied again
// without it, as a GitOps engine applies it from Git.
func TestReporterKeepsItsWebhook(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("base", "airunway.ai_modeldeployments.yaml"))
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, crd))
	// The CRD as Git has it, but pointing at 127.0.0.1 instead of the
	// Service (nothing here routes to a Service): no caBundle.
	// The reporter serves a listener opened here on port 0: the port is
	// known before the CRD names it, and no other process can take it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	url := "https://" + addr + "/convert"
	crd.Spec.Conversion.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{URL: &url}
	cfg, admin := startAPIServer(t, shippedCRD(t))
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}, MaxTime: 3 * time.Minute})
	require.NoError(t, err)
	ctx := context.Background()
	const system = "airunway-system"
	for _, file := range []string{"namespace.yaml", "rbac.yaml"} {
		raw, err := os.ReadFile(filepath.Join("base", file))
		require.NoError(t, err)
		for _, doc := range strings.Split(string(raw), "\n---") {
			u := object(t, doc)
			if u.GetKind() == "Role" || u.GetKind() == "RoleBinding" || u.GetKind() == "ServiceAccount" {
				u.SetNamespace(system) // as the kustomization does
			}
			require.NoError(t, admin.Create(ctx, u))
		}
	}

	applyCRD := func() {
		gitops := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, yaml.UnmarshalStrict(data, gitops))
		gitops.Spec.Conversion.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{URL: &url}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(gitops)
		require.NoError(t, err)
		require.NoError(t, admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u}), client.FieldOwner("argocd-controller"), client.ForceOwnership))
	}
	applyCRD()

	sa := rest.CopyConfig(cfg)
	sa.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + system + ":airunway-status-reporter",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + system, "system:authenticated"},
	}
	rep, err := reporter.New(sa, reporter.Options{MetricsAddr: "0", ProbeAddr: "0", Logger: testr.New(t), Conversion: reporter.ConversionOptions{
		Addr: addr, Listener: ln, Secret: types.NamespacedName{Namespace: system, Name: reporter.DefaultConversionSecret}, Hosts: []string{"127.0.0.1"},
	}})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rep.Start(runCtx) }()
	t.Cleanup(func() { stop(); require.NoError(t, <-done) })

	caBundle := func() []byte {
		live := &apiextensionsv1.CustomResourceDefinition{}
		require.NoError(t, admin.Get(ctx, types.NamespacedName{Name: crd.Name}, live))
		return live.Spec.Conversion.Webhook.ClientConfig.CABundle
	}
	require.Eventually(t, func() bool { return len(caBundle()) > 0 }, twin.HangBound, 100*time.Millisecond, "the reporter writes its CA into the CRD")
	secret := &corev1.Secret{}
	require.NoError(t, admin.Get(ctx, types.NamespacedName{Namespace: system, Name: reporter.DefaultConversionSecret}, secret))
	require.Equal(t, secret.Data["ca.crt"], caBundle())

	md := object(t, v1alpha2Model)
	require.Eventually(t, func() bool { return admin.Create(ctx, md.DeepCopy()) == nil }, twin.HangBound, 200*time.Millisecond,
		"the API server converts through the reporter's webhook")
	got := &unstructured.Unstructured{}
	got.SetAPIVersion(v1alpha2.APIVersion)
	got.SetKind(hub.KindModelDeployment)
	require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(md), got))
	require.Equal(t, md.Object["spec"].(map[string]any)["adapters"], got.Object["spec"].(map[string]any)["adapters"])

	// Applied again from Git by another field manager: the caBundle the
	// reporter owns stays.
	applyCRD()
	require.Equal(t, secret.Data["ca.crt"], caBundle(), "a GitOps apply without caBundle keeps the reporter's")
}
