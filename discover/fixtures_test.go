package discover_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/airunway-render/airunway-render/discover"
	. "github.com/airunway-render/airunway-render/discover/discovertest"
)

// The fixtures follow what each platform and component sets: AKS's
// agentpool labels, EKS managed node groups', GKE's, Karpenter's; GPU
// Feature Discovery's labels; the operators' Helm charts (Deployment
// names, labels, image repositories).

// fixtures are clusters as the platforms build them.
func fixtures(testingTB testing.TB) map[string]*discover.Cluster {
	gpuTaint := Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule)
	aks := func(pool string) KV {
		return KV{"kubernetes.azure.com/agentpool": pool, "agentpool": pool, "node.kubernetes.io/instance-type": "Standard_NC48ads_A100_v4"}
	}
	return map[string]*discover.Cluster{
		// AKS: a tainted system pool, a GPU pool with KAITO installed by
		// its Helm chart, one node mid-upgrade (a transient taint).
		"aks": {
			Nodes: []corev1.Node{
				Node("aks-system-0", aks("system"), nil, Taint("CriticalAddonsOnly", "true", corev1.TaintEffectNoSchedule)),
				Node("aks-system-1", aks("system"), nil, Taint("CriticalAddonsOnly", "true", corev1.TaintEffectNoSchedule)),
				Node("aks-gpua100-0", With(aks("gpua100"), GFD("NVIDIA-A100-PCIE-80GB", "81920", "2")), KV{"nvidia.com/gpu": "2"}, gpuTaint),
				Node("aks-gpua100-1", With(aks("gpua100"), GFD("NVIDIA-A100-PCIE-80GB", "81920", "2")), KV{"nvidia.com/gpu": "2"}, gpuTaint,
					Taint("node.kubernetes.io/unschedulable", "", corev1.TaintEffectNoSchedule)),
			},
			CRDs: []metav1.PartialObjectMetadata{CRD("workspaces.kaito.sh", KV{"controller-gen.kubebuilder.io/version": "v0.20.1"})},
			Deployments: []appsv1.Deployment{
				Deployment("kaito-workspace", "kaito-workspace", KV{"app.kubernetes.io/name": "workspace", "app.kubernetes.io/version": "0.10.0", "helm.sh/chart": "workspace-0.10.0"}, "mcr.microsoft.com/aks/kaito/workspace:0.10.0"),
			},
		},
		// EKS: a managed CPU node group and a Karpenter NodePool that
		// launched two GPU shapes; KubeRay and Dynamo (its image by
		// digest, its release in the manager's argument); the Gateway API
		// with one CRD from another bundle, the Inference Extension's v1
		// InferencePool, two Gateways.
		"eks-karpenter": {
			Nodes: []corev1.Node{
				Node("ip-10-0-1-1", KV{"eks.amazonaws.com/nodegroup": "system"}, nil),
				Node("ip-10-0-2-1", With(KV{"karpenter.sh/nodepool": "gpu"}, GFD("NVIDIA-L4", "23034", "1")), KV{"nvidia.com/gpu": "1"}, gpuTaint),
				Node("ip-10-0-2-2", With(KV{"karpenter.sh/nodepool": "gpu"}, GFD("NVIDIA-L40S", "46068", "4")), KV{"nvidia.com/gpu": "4"}, gpuTaint),
				Node("ip-10-0-2-3", With(KV{"karpenter.sh/nodepool": "gpu"}, GFD("NVIDIA-L4", "23034", "1")), KV{"nvidia.com/gpu": "1"}, gpuTaint,
					Taint("karpenter.sh/disrupted", "", corev1.TaintEffectNoSchedule)),
			},
			CRDs: append(GatewayCRDs("v1.5.1", "standard"),
				CRD("tcproutes.gateway.networking.k8s.io", KV{"gateway.networking.k8s.io/bundle-version": "v1.4.0", "gateway.networking.k8s.io/channel": "experimental"}),
				CRD("inferencepools.inference.networking.k8s.io", KV{"inference.networking.k8s.io/bundle-version": "v1.0.1"}),
				CRD("rayservices.ray.io", nil),
				CRD("dynamographdeployments.nvidia.com", nil)),
			Deployments: []appsv1.Deployment{
				Deployment("ray-system", "kuberay-operator", KV{"app.kubernetes.io/name": "kuberay-operator", "helm.sh/chart": "kuberay-operator-1.3.0"}, "quay.io/kuberay/operator:v1.3.0"),
				Deployment("dynamo-system", "dynamo-platform-dynamo-operator-controller-manager", KV{"control-plane": "controller-manager"},
					"nvcr.io/nvidia/ai-dynamo/kubernetes-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "--operator-version=1.1.1"),
			},
			Gateways: []metav1.PartialObjectMetadata{Gateway("gateway-system", "inference-gateway"), Gateway("team-a", "internal")},
		},
		// GKE: a time-sliced pool and a MIG (mixed strategy) pool; the
		// Gateway API without the Inference Extension.
		"gke-shared": {
			Nodes: []corev1.Node{
				Node("gke-shared-0", With(KV{"cloud.google.com/gke-nodepool": "shared-l4", "cloud.google.com/gke-accelerator": "nvidia-l4", "nvidia.com/gpu.replicas": "4"},
					GFD("NVIDIA-L4-SHARED", "23034", "1")), KV{"nvidia.com/gpu": "4"}, gpuTaint),
				Node("gke-mig-0", With(KV{"cloud.google.com/gke-nodepool": "mig"}, GFD("NVIDIA-A100-SXM4-40GB", "40960", "8")), KV{"nvidia.com/mig-1g.5gb": "56"}, gpuTaint),
				Node("gke-default-0", KV{"cloud.google.com/gke-nodepool": "default-pool"}, nil),
			},
			CRDs: GatewayCRDs("v1.3.0", "experimental"),
		},
		// GPUs as DRA devices (NVIDIA's DRA driver, no device plugin): an
		// H100 pool with GPU Feature Discovery's labels, an L4 pool without,
		// one node that runs the device plugin too, a slice of devices
		// shared by a node selector, and a MIG device that is no whole GPU.
		"dra": func() *discover.Cluster {
			gpuTaint := Taint("nvidia.com/gpu", "present", corev1.TaintEffectNoSchedule)
			c := &discover.Cluster{
				Nodes: []corev1.Node{
					Node("h100-0", With(KV{"karpenter.sh/nodepool": "h100"}, GFD("NVIDIA-H100-80GB-HBM3", "81559", "8")), nil, gpuTaint),
					Node("h100-1", With(KV{"karpenter.sh/nodepool": "h100"}, GFD("NVIDIA-H100-80GB-HBM3", "81559", "8")), nil, gpuTaint),
					Node("l4-0", KV{"karpenter.sh/nodepool": "l4"}, nil, gpuTaint),
					Node("legacy-0", With(KV{"karpenter.sh/nodepool": "legacy"}, GFD("NVIDIA-L4", "23034", "1")), KV{"nvidia.com/gpu": "1"}, gpuTaint),
					Node("system-0", KV{"karpenter.sh/nodepool": "system"}, nil),
				},
				Deployments: []appsv1.Deployment{
					Deployment("llm-d", "infra-inference-scheduler", nil, "ghcr.io/llm-d/llm-d-inference-scheduler:v0.6.0"),
				},
			}
			mig := GPUSlice("h100-1", 1, H100)
			mig.Name = "h100-1-mig"
			mig.Spec.Devices[0].Name = "gpu-0-mig-1g10gb-0"
			mig.Spec.Devices[0].Attributes["type"] = resourcev1.DeviceAttribute{StringValue: ptr.To("mig")}
			shared := GPUSlice("unused", 2, L4)
			shared.Name = "fabric-gpus"
			shared.Spec.NodeName = nil
			shared.Spec.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "fabric", Operator: corev1.NodeSelectorOpExists}}}}}
			WithDRA(testingTB, c, NVIDIAClasses(), GPUSlice("h100-0", 8, H100), GPUSlice("h100-1", 8, H100), mig, GPUSlice("l4-0", 1, L4), GPUSlice("legacy-0", 1, L4), shared)
			return c
		}(),
		// No node-pool labels at all (a bare-metal cluster): GPU nodes by
		// product, an AMD node, the rest one CPU pool; KAITO's CRD without
		// its operator; llm-d's scheduler, and the renderer's own endpoint
		// picker, which is not llm-d being installed.
		"bare": {
			Nodes: []corev1.Node{
				Node("gpu-a", GFD("NVIDIA-H100-80GB-HBM3", "81559", "8"), KV{"nvidia.com/gpu": "8"}),
				Node("gpu-b", GFD("NVIDIA-H100-80GB-HBM3", "81559", "8"), KV{"nvidia.com/gpu": "8"}),
				Node("amd-a", KV{"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM", "amd.com/gpu.vram": "192G"}, KV{"amd.com/gpu": "8"}),
				Node("cpu-a", nil, nil),
				Node("cpu-b", nil, nil),
			},
			CRDs: []metav1.PartialObjectMetadata{CRD("workspaces.kaito.sh", nil)},
			Deployments: []appsv1.Deployment{
				Deployment("llm-d", "infra-inference-scheduler", nil, "ghcr.io/llm-d/llm-d-inference-scheduler:v0.6.0"),
				func() appsv1.Deployment {
					d := Deployment("inference", "qwen3-epp", nil, "ghcr.io/llm-d/llm-d-inference-scheduler:v0.6.0")
					d.Annotations = KV{"render.airunway.ai/generated-from": "ModelDeployment/qwen3"}
					return d
				}(),
			},
		},
	}
}
