package discover

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The fixtures follow what each platform and component sets, as recorded
// in docs/discover.md: AKS's agentpool labels, EKS managed node groups',
// GKE's, Karpenter's; GPU Feature Discovery's labels; the operators' Helm
// charts (Deployment names, labels, image repositories).

type kv = map[string]string

func node(name string, l kv, allocatable kv, taints ...corev1.Taint) corev1.Node {
	all := kv{"kubernetes.io/os": "linux", "kubernetes.io/hostname": name}
	maps.Copy(all, l)
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

func taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

// gfd is GPU Feature Discovery's labels of a node with count GPUs.
func gfd(product, memoryMiB, count string) kv {
	return kv{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product, "nvidia.com/gpu.memory": memoryMiB, "nvidia.com/gpu.count": count}
}

func with(ls ...kv) kv {
	out := kv{}
	for _, l := range ls {
		maps.Copy(out, l)
	}
	return out
}

func crd(name string, annotations kv) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
}

func gatewayCRDs(version, channel string) []metav1.PartialObjectMetadata {
	a := kv{bundleVersionKey: version, channelKey: channel}
	return []metav1.PartialObjectMetadata{
		crd("gatewayclasses.gateway.networking.k8s.io", a),
		crd("gateways.gateway.networking.k8s.io", a),
		crd("httproutes.gateway.networking.k8s.io", a),
	}
}

func gateway(namespace, name string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

func deployment(namespace, name string, l kv, image string, args ...string) appsv1.Deployment {
	return appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: l},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "manager", Image: image, Args: args}},
		}}},
	}
}

// fixtures are clusters as the platforms build them.
func fixtures() map[string]*Cluster {
	gpuTaint := taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule)
	aks := func(pool string) kv {
		return kv{"kubernetes.azure.com/agentpool": pool, "agentpool": pool, "node.kubernetes.io/instance-type": "Standard_NC48ads_A100_v4"}
	}
	return map[string]*Cluster{
		// AKS: a tainted system pool, a GPU pool with KAITO installed by
		// its Helm chart, one node mid-upgrade (a transient taint).
		"aks": {
			Nodes: []corev1.Node{
				node("aks-system-0", aks("system"), nil, taint("CriticalAddonsOnly", "true", corev1.TaintEffectNoSchedule)),
				node("aks-system-1", aks("system"), nil, taint("CriticalAddonsOnly", "true", corev1.TaintEffectNoSchedule)),
				node("aks-gpua100-0", with(aks("gpua100"), gfd("NVIDIA-A100-PCIE-80GB", "81920", "2")), kv{"nvidia.com/gpu": "2"}, gpuTaint),
				node("aks-gpua100-1", with(aks("gpua100"), gfd("NVIDIA-A100-PCIE-80GB", "81920", "2")), kv{"nvidia.com/gpu": "2"}, gpuTaint,
					taint("node.kubernetes.io/unschedulable", "", corev1.TaintEffectNoSchedule)),
			},
			CRDs: []metav1.PartialObjectMetadata{crd("workspaces.kaito.sh", kv{"controller-gen.kubebuilder.io/version": "v0.20.1"})},
			Deployments: []appsv1.Deployment{
				deployment("kaito-workspace", "kaito-workspace", kv{"app.kubernetes.io/name": "workspace", "app.kubernetes.io/version": "0.10.0", "helm.sh/chart": "workspace-0.10.0"}, "mcr.microsoft.com/aks/kaito/workspace:0.10.0"),
			},
		},
		// EKS: a managed CPU node group and a Karpenter NodePool that
		// launched two GPU shapes; KubeRay and Dynamo (its image by
		// digest, its release in the manager's argument); the Gateway API
		// with one CRD from another bundle, the Inference Extension's v1
		// InferencePool, two Gateways.
		"eks-karpenter": {
			Nodes: []corev1.Node{
				node("ip-10-0-1-1", kv{"eks.amazonaws.com/nodegroup": "system"}, nil),
				node("ip-10-0-2-1", with(kv{"karpenter.sh/nodepool": "gpu"}, gfd("NVIDIA-L4", "23034", "1")), kv{"nvidia.com/gpu": "1"}, gpuTaint),
				node("ip-10-0-2-2", with(kv{"karpenter.sh/nodepool": "gpu"}, gfd("NVIDIA-L40S", "46068", "4")), kv{"nvidia.com/gpu": "4"}, gpuTaint),
				node("ip-10-0-2-3", with(kv{"karpenter.sh/nodepool": "gpu"}, gfd("NVIDIA-L4", "23034", "1")), kv{"nvidia.com/gpu": "1"}, gpuTaint,
					taint("karpenter.sh/disrupted", "", corev1.TaintEffectNoSchedule)),
			},
			CRDs: append(gatewayCRDs("v1.5.1", "standard"),
				crd("tcproutes.gateway.networking.k8s.io", kv{bundleVersionKey: "v1.4.0", channelKey: "experimental"}),
				crd(inferencePoolV1, kv{inferenceBundleKey: "v1.0.1"}),
				crd("rayservices.ray.io", nil),
				crd("dynamographdeployments.nvidia.com", nil)),
			Deployments: []appsv1.Deployment{
				deployment("ray-system", "kuberay-operator", kv{"app.kubernetes.io/name": "kuberay-operator", "helm.sh/chart": "kuberay-operator-1.3.0"}, "quay.io/kuberay/operator:v1.3.0"),
				deployment("dynamo-system", "dynamo-platform-dynamo-operator-controller-manager", kv{"control-plane": "controller-manager"},
					"nvcr.io/nvidia/ai-dynamo/kubernetes-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "--operator-version=1.1.1"),
			},
			Gateways: []metav1.PartialObjectMetadata{gateway("gateway-system", "inference-gateway"), gateway("team-a", "internal")},
		},
		// GKE: a time-sliced pool and a MIG (mixed strategy) pool; the
		// Gateway API without the Inference Extension.
		"gke-shared": {
			Nodes: []corev1.Node{
				node("gke-shared-0", with(kv{"cloud.google.com/gke-nodepool": "shared-l4", "cloud.google.com/gke-accelerator": "nvidia-l4", "nvidia.com/gpu.replicas": "4"},
					gfd("NVIDIA-L4-SHARED", "23034", "1")), kv{"nvidia.com/gpu": "4"}, gpuTaint),
				node("gke-mig-0", with(kv{"cloud.google.com/gke-nodepool": "mig"}, gfd("NVIDIA-A100-SXM4-40GB", "40960", "8")), kv{"nvidia.com/mig-1g.5gb": "56"}, gpuTaint),
				node("gke-default-0", kv{"cloud.google.com/gke-nodepool": "default-pool"}, nil),
			},
			CRDs: gatewayCRDs("v1.3.0", "experimental"),
		},
		// No node-pool labels at all (a bare-metal cluster): GPU nodes by
		// product, an AMD node, the rest one CPU pool; KAITO's CRD without
		// its operator; llm-d's scheduler, and the renderer's own endpoint
		// picker, which is not llm-d being installed.
		"bare": {
			Nodes: []corev1.Node{
				node("gpu-a", gfd("NVIDIA-H100-80GB-HBM3", "81559", "8"), kv{"nvidia.com/gpu": "8"}),
				node("gpu-b", gfd("NVIDIA-H100-80GB-HBM3", "81559", "8"), kv{"nvidia.com/gpu": "8"}),
				node("amd-a", kv{"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM", "amd.com/gpu.vram": "192G"}, kv{"amd.com/gpu": "8"}),
				node("cpu-a", nil, nil),
				node("cpu-b", nil, nil),
			},
			CRDs: []metav1.PartialObjectMetadata{crd("workspaces.kaito.sh", nil)},
			Deployments: []appsv1.Deployment{
				deployment("llm-d", "infra-inference-scheduler", nil, "ghcr.io/llm-d/llm-d-inference-scheduler:v0.6.0"),
				func() appsv1.Deployment {
					d := deployment("inference", "qwen3-epp", nil, "ghcr.io/llm-d/llm-d-inference-scheduler:v0.6.0")
					d.Annotations = kv{"render.airunway.ai/generated-from": "ModelDeployment/qwen3"}
					return d
				}(),
			},
		},
	}
}
