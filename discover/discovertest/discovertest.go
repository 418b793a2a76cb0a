// Package discovertest builds discover.Cluster snapshots for tests: Nodes,
// CRDs, operator Deployments and Gateways as the platforms and Helm charts
// make them, and the cluster a capability file describes; and serves them
// as a fake API server on loopback (APIServer) for discover.Read and the
// CLI.
package discovertest

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/discover"
)

// KV is a set of labels, annotations or resources.
type KV = map[string]string

// Node is a Linux node with 16 CPUs and 64Gi, plus the allocatable
// resources given.
func Node(name string, labels KV, allocatable KV, taints ...corev1.Taint) corev1.Node {
	all := KV{"kubernetes.io/os": "linux", "kubernetes.io/hostname": name}
	maps.Copy(all, labels)
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi")}
	for k, v := range allocatable {
		alloc[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Allocatable: alloc},
	}
}

// Taint is a node taint.
func Taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

// GFD is GPU Feature Discovery's labels of a node with count GPUs.
func GFD(product, memoryMiB, count string) KV {
	return KV{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product, "nvidia.com/gpu.memory": memoryMiB, "nvidia.com/gpu.count": count}
}

// With merges label sets.
func With(sets ...KV) KV {
	out := KV{}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	return out
}

// CRD is a CustomResourceDefinition's metadata.
func CRD(name string, annotations KV) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

// GatewayCRDs are three Gateway API CRDs of a bundle, annotated as the
// Gateway API releases annotate them.
func GatewayCRDs(version, channel string) []metav1.PartialObjectMetadata {
	a := KV{"gateway.networking.k8s.io/bundle-version": version, "gateway.networking.k8s.io/channel": channel}
	return []metav1.PartialObjectMetadata{
		CRD("gatewayclasses.gateway.networking.k8s.io", a),
		CRD("gateways.gateway.networking.k8s.io", a),
		CRD("httproutes.gateway.networking.k8s.io", a),
	}
}

// Gateway is a Gateway's metadata.
func Gateway(namespace, name string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// Deployment has one container running image with args.
func Deployment(namespace, name string, labels KV, image string, args ...string) appsv1.Deployment {
	return appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "manager", Image: image, Args: args}},
		}}},
	}
}

// OperatorImages are the image repositories of the operators' releases,
// to which the release is appended.
var OperatorImages = map[string]string{
	hub.ProviderKAITO:   "mcr.microsoft.com/aks/kaito/workspace:",
	hub.ProviderDynamo:  "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:",
	hub.ProviderKubeRay: "quay.io/kuberay/operator:v",
}

// Example is the cluster a capability file describes: its Nodes as
// `capabilities nodes` generates them, the CRDs of its providers and
// gateway, the operators' Deployments (named <provider>-operator) at the
// declared releases, and its parent Gateway.
func Example(t testing.TB, file string) (*hub.ClusterCapabilities, *discover.Cluster) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	caps, problems := capabilities.Decode(data)
	require.False(t, problems.HasErrors(), "%v", problems)
	r, problems := capabilities.Resolve(caps)
	require.False(t, problems.HasErrors(), "%v", problems)
	c := &discover.Cluster{Nodes: r.Nodes()}
	// The twin serves resource.k8s.io/v1: its DRA pools' nodes publish
	// their devices as a DRA driver would (capabilities.Resolved).
	WithDRA(t, c, r.DeviceClasses(), r.ResourceSlices()...)
	for _, p := range caps.Spec.Providers {
		if crd := discover.ProviderCRD(p.Name); crd != "" {
			c.CRDs = append(c.CRDs, CRD(crd, nil))
			c.Deployments = append(c.Deployments, Deployment(p.Name+"-system", p.Name+"-operator", nil, OperatorImages[p.Name]+p.Version))
		}
	}
	if g := caps.Spec.Gateway; g != nil {
		c.CRDs = append(c.CRDs, GatewayCRDs(g.GatewayAPIVersion, g.Channel)...)
		c.CRDs = append(c.CRDs, CRD("inferencepools.inference.networking.k8s.io", KV{"inference.networking.k8s.io/bundle-version": "v1.5.0"}))
		c.Gateways = append(c.Gateways, Gateway(g.ParentRef.Namespace, g.ParentRef.Name))
	}
	return caps, c
}

// Golden compares got with testdata/name, or rewrites it first when
// update is true. Each test package that calls it defines its own -update
// flag and passes it: a package imported by tests must not define a
// global flag, which would collide with a test package's own.
func Golden(t *testing.T, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "go test -update rewrites %s", path)
}
