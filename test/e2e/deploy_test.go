package e2e

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestKustomizeBuildDeployBase builds the status reporter's base with the
// real kustomize and checks what a cluster would get: everything in
// airunway-system, the image set, a hardened two-replica Deployment, and
// RBAC bound to the ServiceAccount the Deployment runs as, the conversion
// webhook's Service pointing at the Deployment's port and named by the CRD
// in the same namespace. (The reporter's envtest tests prove the RBAC
// suffices and denies other Secrets.)
func TestKustomizeBuildDeployBase(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "deploy", "base"))
	require.NoError(t, err)
	res := run(t, t.TempDir(), nil, kustomizeBin(t), "build", dir)
	require.Zero(t, res.exit, "kustomize build failed\nstderr:\n%s", res.stderr)
	objs := parseObjects(t, res.stdout)
	const ns, name = "airunway-system", "airunway-status-reporter"

	requireObject(t, objs, "v1", "Namespace", "", ns)
	mdCRD := requireObject(t, objs, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "modeldeployments.airunway.ai")
	svcRef, err := mdCRD.Pipe(yaml.Lookup("spec", "conversion", "webhook", "clientConfig", "service"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"name": name, "namespace": ns, "path": "/convert", "port": "443"}, map[string]string{
		"name": yaml.GetValue(svcRef.Field("name").Value), "namespace": yaml.GetValue(svcRef.Field("namespace").Value),
		"path": yaml.GetValue(svcRef.Field("path").Value), "port": yaml.GetValue(svcRef.Field("port").Value)})
	var svc corev1.Service
	decodeStrict(t, requireObject(t, objs, "v1", "Service", ns, name), &svc)
	require.Equal(t, "webhook", svc.Spec.Ports[0].TargetPort.StrVal)
	requireObject(t, objs, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "clustercapabilities.airunway.ai")
	var sa corev1.ServiceAccount
	decodeStrict(t, requireObject(t, objs, "v1", "ServiceAccount", ns, name), &sa)

	var dep appsv1.Deployment
	decodeStrict(t, requireObject(t, objs, "apps/v1", "Deployment", ns, name), &dep)
	require.Equal(t, int32(2), *dep.Spec.Replicas)
	pod := dep.Spec.Template.Spec
	require.Equal(t, name, pod.ServiceAccountName)
	require.True(t, *pod.SecurityContext.RunAsNonRoot)
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.Equal(t, "ghcr.io/airunway-render/airunway-status-reporter:v0.1.0", c.Image)
	require.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
	require.False(t, *c.SecurityContext.AllowPrivilegeEscalation)
	require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	require.False(t, c.Resources.Requests.Cpu().IsZero())
	require.False(t, c.Resources.Requests.Memory().IsZero())
	require.Contains(t, c.Ports, corev1.ContainerPort{Name: "webhook", ContainerPort: 9443})
	require.Equal(t, dep.Spec.Selector.MatchLabels, svc.Spec.Selector)

	var role rbacv1.ClusterRole
	decodeStrict(t, requireObject(t, objs, "rbac.authorization.k8s.io/v1", "ClusterRole", "", name), &role)
	for _, rule := range role.Rules {
		require.NotContains(t, rule.Resources, "secrets")
		require.NotContains(t, rule.Resources, "*")
		for _, verb := range rule.Verbs {
			require.Contains(t, []string{"get", "list", "watch", "patch"}, verb, "resources %v", rule.Resources)
			if verb == "patch" {
				require.Len(t, rule.Resources, 1, "a patch rule names one status subresource, or the one CRD whose caBundle the reporter keeps")
				if rule.Resources[0] == "customresourcedefinitions" {
					require.Equal(t, []string{"modeldeployments.airunway.ai"}, rule.ResourceNames)
					continue
				}
				require.Contains(t, []string{"modeldeployments/status", "clustercapabilities/status"}, rule.Resources[0])
			}
		}
	}
	var webhookRole rbacv1.Role
	decodeStrict(t, requireObject(t, objs, "rbac.authorization.k8s.io/v1", "Role", ns, name+"-webhook"), &webhookRole)
	require.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"airunway-status-reporter-webhook-tls"}, Verbs: []string{"get", "update"}},
	}, webhookRole.Rules, "the webhook may read and renew only its own Secret")
	for _, binding := range []struct{ kind, namespace, name string }{
		{"ClusterRoleBinding", "", name},
		{"RoleBinding", ns, name + "-leader-election"},
		{"RoleBinding", ns, name + "-webhook"},
	} {
		var b rbacv1.RoleBinding // same shape as a ClusterRoleBinding
		n := requireObject(t, objs, "rbac.authorization.k8s.io/v1", binding.kind, binding.namespace, binding.name)
		decodeStrict(t, n, &b)
		require.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}, b.Subjects)
	}
	require.Len(t, objs, 12, "objects: %v", identities(objs))
}
