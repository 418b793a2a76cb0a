package twin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// The DRA tests run models whose GPUs are Dynamic Resource Allocation
// devices: the Nodes of a DRA pool have no GPU extended resource, the
// twin publishes a ResourceSlice per node and the pool's DeviceClass
// (useCluster, from capabilities.Resolved.ResourceSlices and
// DeviceClasses), kube-controller-manager's resource-claim controller makes
// each pod's ResourceClaim from the rendered ResourceClaimTemplate, and the
// real scheduler's DynamicResources plugin allocates it (twin.Start
// verifies the plugin is on and resource.k8s.io/v1 served).
// Nothing prepares the devices: KWOK runs no kubelet, so no DRA driver is
// called, and the pods run nothing.

// draCaps is the shipped capability file of a DRA cluster: h100 (2 nodes
// of 8 devices), l4 (4 nodes of 1) and cpu (3 nodes).
const draCaps = "examples/capabilities/dra-h100.yaml"

// draVariant writes a copy of draCaps with each old string replaced by
// the new one after it (each must occur), and returns its path.
func draVariant(t *testing.T, oldNew ...string) string {
	t.Helper()
	return capsVariant(t, draCaps, oldNew...)
}

// capsVariant writes a copy of a capability file with each old string
// replaced by the new one after it (each must occur), and returns its path.
func capsVariant(t *testing.T, file string, oldNew ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	require.NoError(t, err)
	s := string(data)
	for i := 0; i+1 < len(oldNew); i += 2 {
		require.Contains(t, s, oldNew[i])
		s = strings.Replace(s, oldNew[i], oldNew[i+1], 1)
	}
	path := filepath.Join(t.TempDir(), "capabilities.yaml")
	require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
	return path
}

// device names one allocated device as the scheduler does.
type device struct{ driver, pool, name string }

func (d device) String() string { return d.driver + "/" + d.pool + "/" + d.name }

// podClaim is one pod's ResourceClaim, read back from the twin.
type podClaim struct {
	pod      corev1.Pod
	claim    *resourcev1.ResourceClaim
	template *resourcev1.ResourceClaimTemplate
	// want is the number of devices the template asks for.
	want int64
}

// claimsOf reads the ResourceClaim of every pod of ns that claims devices
// (the resource-claim controller's, named in the pod's status), with the
// template it was made from.
func claimsOf(t tb, ns string) []podClaim {
	t.Helper()
	ctx := context.Background()
	pods := &corev1.PodList{}
	require.NoError(t, cluster.Client.List(ctx, pods, client.InNamespace(ns)))
	var out []podClaim
	for _, pod := range pods.Items {
		for _, rc := range pod.Spec.ResourceClaims {
			require.NotNil(t, rc.ResourceClaimTemplateName, "pod %s claim %s: the renderer claims through a template", pod.Name, rc.Name)
			pc := podClaim{pod: pod, template: &resourcev1.ResourceClaimTemplate{}}
			require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: *rc.ResourceClaimTemplateName}, pc.template))
			for _, r := range pc.template.Spec.Spec.Devices.Requests {
				require.NotNil(t, r.Exactly, "template %s request %s", pc.template.Name, r.Name)
				require.Equal(t, resourcev1.DeviceAllocationModeExactCount, r.Exactly.AllocationMode)
				pc.want += r.Exactly.Count
			}
			for _, s := range pod.Status.ResourceClaimStatuses {
				if s.Name == rc.Name && s.ResourceClaimName != nil {
					pc.claim = &resourcev1.ResourceClaim{}
					require.NoError(t, cluster.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: *s.ResourceClaimName}, pc.claim))
				}
			}
			out = append(out, pc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pod.Name < out[j].pod.Name })
	return out
}

// requireAllocated checks the claims of every bound pod of ns: the
// resource-claim controller made the pod's claim from its template (owned
// by the pod, the template's spec), the scheduler allocated exactly the
// template's number of devices, every one of the pod's node's
// ResourceSlice (driver, pool and a device the twin published for that
// node), and reserved the claim for the pod; the node is of a pool the
// model's node-pool annotation names. No device is allocated twice. It
// returns the devices per pod name.
func requireAllocated(t *testing.T, ns string, published *capabilities.Resolved, nodes []corev1.Node, models []*unstructured.Unstructured) map[string][]device {
	t.Helper()
	slices := map[string]resourcev1.ResourceSlice{}
	for _, s := range published.ResourceSlices() {
		slices[*s.Spec.NodeName] = s
	}
	poolOfNode := map[string]string{}
	for i := range nodes {
		poolOfNode[nodes[i].Name] = poolOf(&nodes[i])
	}
	intended := map[string]map[string]bool{}
	for _, m := range models {
		pools := map[string]bool{}
		for _, pair := range strings.Split(m.GetAnnotations()[hub.AnnotationNodePool], ",") {
			_, pool, found := strings.Cut(pair, "=")
			if !found {
				pool = pair
			}
			pools[pool] = true
		}
		intended[m.GetName()] = pools
	}
	out := map[string][]device{}
	seen := map[device]string{}
	for _, pc := range claimsOf(t, ns) {
		pod := pc.pod
		if pod.Spec.NodeName == "" {
			continue
		}
		require.Zero(t, gpuRequest(&pod), "pod %s claims DRA devices and requests a GPU extended resource too", pod.Name)
		require.True(t, containerUsesClaims(&pod), "no container of pod %s uses its claims %v", pod.Name, pod.Spec.ResourceClaims)
		model := pc.template.Labels[hub.LabelModelDeployment]
		require.Contains(t, intended[model], poolOfNode[pod.Spec.NodeName], "pod %s of model %s (template %s) is bound to %s of pool %q; the renderer chose %v",
			pod.Name, model, pc.template.Name, pod.Spec.NodeName, poolOfNode[pod.Spec.NodeName], intended[model])
		require.NotNil(t, pc.claim, "bound pod %s has no ResourceClaim in its status", pod.Name)
		claim := pc.claim
		require.True(t, metaOwnedBy(claim.OwnerReferences, pod.UID), "claim %s is owned by pod %s", claim.Name, pod.Name)
		require.Equal(t, pc.template.Spec.Spec, claim.Spec, "claim %s is the template %s's spec", claim.Name, pc.template.Name)
		require.NotNil(t, claim.Status.Allocation, "claim %s of bound pod %s is not allocated", claim.Name, pod.Name)
		results := claim.Status.Allocation.Devices.Results
		require.Len(t, results, int(pc.want), "claim %s of pod %s: the template asks for %d devices", claim.Name, pod.Name, pc.want)
		slice, ok := slices[pod.Spec.NodeName]
		require.True(t, ok, "no ResourceSlice was published for node %s", pod.Spec.NodeName)
		for _, r := range results {
			require.Equal(t, slice.Spec.Driver, r.Driver, "claim %s", claim.Name)
			require.Equal(t, slice.Spec.Pool.Name, r.Pool, "claim %s of pod %s on %s: a device of another node's pool", claim.Name, pod.Name, pod.Spec.NodeName)
			require.True(t, hasDevice(slice, r.Device), "claim %s: device %s is not in %s", claim.Name, r.Device, slice.Name)
			d := device{r.Driver, r.Pool, r.Device}
			require.NotContains(t, seen, d, "device %s allocated to claim %s and to claim %s", d, claim.Name, seen[d])
			seen[d] = claim.Namespace + "/" + claim.Name
			out[pod.Name] = append(out[pod.Name], d)
		}
		reserved := false
		for _, ref := range claim.Status.ReservedFor {
			reserved = reserved || ref.UID == pod.UID
		}
		require.True(t, reserved, "claim %s is not reserved for pod %s: %v", claim.Name, pod.Name, claim.Status.ReservedFor)
	}
	return out
}

// containerUsesClaims reports whether every claim of the pod is used by
// one of its containers (resources.claims), as the kubelet would hand the
// devices to it.
func containerUsesClaims(p *corev1.Pod) bool {
	used := map[string]bool{}
	for _, c := range p.Spec.Containers {
		for _, rc := range c.Resources.Claims {
			used[rc.Name] = true
		}
	}
	for _, rc := range p.Spec.ResourceClaims {
		if !used[rc.Name] {
			return false
		}
	}
	return true
}

func hasDevice(s resourcev1.ResourceSlice, name string) bool {
	for _, d := range s.Spec.Devices {
		if d.Name == name {
			return true
		}
	}
	return false
}

// waitAllBound waits until ns has total pods, every one bound and Ready.
func waitAllBound(t *testing.T, ns string, total int, within time.Duration) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	waitUntil(t, within, 250*time.Millisecond, func(c *assert.CollectT) {
		require.NoError(c, cluster.Client.List(context.Background(), &pods, client.InNamespace(ns)))
		ready := 0
		for i := range pods.Items {
			if pods.Items[i].Spec.NodeName != "" && podReady(&pods.Items[i]) {
				ready++
			}
		}
		if len(pods.Items) != total || ready != total {
			c.Errorf("want %d pods bound and Ready, have %d pods, %d bound and Ready:\n%s", total, len(pods.Items), ready, podSummary(pods.Items))
		}
	}, func() string { return schedulerEvents(t, ns) + "\n" + nodeSummary(t) + "\n" + cluster.Logs(15) }, "pods of %s not all bound and Ready within %s", ns, within)
	return pods.Items
}

// unschedulable returns the PodScheduled condition of a Pending pod once
// the scheduler has given a reason that contains want (an earlier reason
// may differ: the claim not yet made from its template, say).
func unschedulable(t *testing.T, ns, pod, want string) corev1.PodCondition {
	t.Helper()
	var cond corev1.PodCondition
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p := &corev1.Pod{}
		require.NoError(c, cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: pod}, p))
		require.Empty(c, p.Spec.NodeName, "pod %s was bound to %s", pod, p.Spec.NodeName)
		for _, pc := range p.Status.Conditions {
			if pc.Type == corev1.PodScheduled && pc.Status == corev1.ConditionFalse && strings.Contains(pc.Message, want) {
				cond = pc
				return
			}
		}
		c.Errorf("pod %s has no PodScheduled=False condition saying %q: %v", pod, want, p.Status.Conditions)
	}, twin.HangBound, 250*time.Millisecond, "the scheduler did not say why pod %s is Pending", pod)
	return cond
}

// pendingPods are the pods of ns not bound to a node.
func pendingPods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	require.NoError(t, cluster.Client.List(context.Background(), pods, client.InNamespace(ns)))
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			out = append(out, p)
		}
	}
	return out
}

// TestDRAModels: the DRA golden cases' models, vLLM (Llama 3.1 70B, one
// pod of 4 devices) and llm-d disaggregated (Qwen3 32B: 4 prefill pods
// of 1 device, 2 decode pods of 4), rendered together for the DRA
// cluster and run at once: every pod bound to the h100 pool the renderer
// chose, its claim allocated with its template's number of devices, all
// from the slice of its node, no device twice. The h100 pool has 3 nodes
// here, not the shipped file's 2: the 16 devices the models claim would
// fill 2 nodes of 8 only if the scheduler packed the 4-device pods
// beside the 1-device ones, which it need not (spread prefill pods leave
// no node 4 free devices); with 3 nodes any spread fits. The status
// reporter then reads the vLLM model Ready.
func TestDRAModels(t *testing.T) {
	caps := draVariant(t, "    nodes: {count: 2}\n    pricePerNodeHour: {amount: 98.32", "    nodes: {count: 3}\n    pricePerNodeHour: {amount: 98.32")
	nodes := useCluster(t, caps)
	inputs := []string{"golden/testdata/dra-vllm/modeldeployment.yaml", "golden/testdata/dra-llmd-disaggregated/modeldeployment.yaml"}
	objs := render(t, caps, inputs...)
	require.Empty(t, nvidiaGPURequests(objs), "a DRA pool's pods request no GPU extended resource")
	start := time.Now()
	ns, models := deploy(t, objs)
	pods := waitAllBound(t, ns, 1+4+2, twin.HangBound)
	took := time.Since(start)
	got := requireAllocated(t, ns, resolveCaps(t, caps), nodes, models)
	require.Len(t, got, len(pods), "every pod claims devices")
	perModel := map[string]int{}
	var all []string
	for _, pc := range claimsOf(t, ns) {
		perModel[pc.template.Labels[hub.LabelModelDeployment]] += len(got[pc.pod.Name])
		for _, d := range got[pc.pod.Name] {
			all = append(all, d.pool+"/"+d.name)
		}
	}
	require.Equal(t, map[string]int{"llama-70b": 4, "qwen3-32b": 4*1 + 2*4}, perModel)
	sort.Strings(all)
	addRow("vllm + llm-d (real controllers, DRA) | dra-vllm llama-70b + dra-llmd-disaggregated qwen3-32b | %s (h100: 3 nodes) | h100 | %d/%d, claims allocated: 16 distinct devices | %s | %s",
		draCaps, len(pods), len(pods), nodesOf(pods), took.Round(100*time.Millisecond))

	startReporter(t, ns)
	addRow("vllm (DRA) + status reporter | llama-70b | %s | h100 | reporter: Ready %s | - | -", draCaps, waitReady(t, ns, "llama-70b", "True", twin.HangBound).Round(100*time.Millisecond))
}

// TestDRASelectorUnsatisfied: the twin publishes the devices of the
// shipped DRA file (H100s), the model is rendered for a file whose h100
// pool says its devices are H200s (selector and declared attributes; the
// node labels agree, so the pod is sent to the same nodes). No published
// device satisfies the claim: the pod stays Pending, its claim
// unallocated, and the scheduler says why in the pod's PodScheduled
// condition. The status reporter reports the model not Ready (Deploying,
// from the Deployment), and health.lua maps that status to Progressing.
func TestDRASelectorUnsatisfied(t *testing.T) {
	nodes := useCluster(t, draCaps)
	h200 := draVariant(t,
		`device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`, `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"`,
		"productName: NVIDIA H100 80GB HBM3", "productName: NVIDIA H200")
	objs := render(t, h200, "golden/testdata/dra-vllm/modeldeployment.yaml")
	ns, models := deploy(t, objs)
	require.Len(t, models, 1)
	require.Equal(t, "h100", models[0].GetAnnotations()[hub.AnnotationNodePool])
	pending(t, ns, 0, 1)
	pod := pendingPods(t, ns)[0]
	// The scheduler's DynamicResources plugin names the claims.
	cond := unschedulable(t, ns, pod.Name, "cannot allocate all claims")
	require.Equal(t, corev1.PodReasonUnschedulable, cond.Reason)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, schedulerEvents(c, ns), "cannot allocate all claims")
	}, twin.HangBound, 250*time.Millisecond, "the scheduler's FailedScheduling event")
	claims := claimsOf(t, ns)
	require.Len(t, claims, 1)
	require.NotNil(t, claims[0].claim, "the resource-claim controller made the pod's claim")
	require.Nil(t, claims[0].claim.Status.Allocation, "no device satisfies the claim")
	requireAllocated(t, ns, resolveCaps(t, draCaps), nodes, models) // nothing bound, nothing allocated

	startReporter(t, ns)
	status := waitPhase(t, ns, "llama-70b", "Deploying", twin.HangBound)
	health := argoHealth(t, status)
	require.Equal(t, "Progressing", health.Status, "health.lua on the model's status: %+v", health)
	addRow("vllm (DRA) | selector no device satisfies (rendered for H200, H100s published) | %s | h100 | 0/1 (Pending: %q); reporter: Ready=False, phase Deploying, %q; health.lua: %s | - | -",
		draCaps, cond.Message, conditionMessage(status, "Ready"), health.Status)
}

// TestDRADevicesRunOut: two models of 1-device pods on the l4 pool (4
// nodes of 1 device): 2 and 3 replicas, one more pod than devices. Four
// pods are bound, each claim allocated its node's one device, no device
// twice; the fifth pod stays Pending for want of a device rather than
// sharing one.
func TestDRADevicesRunOut(t *testing.T) {
	nodes := useCluster(t, draCaps)
	spec := "  model: {id: Qwen/Qwen3-0.6B}\n  engine: {type: vllm}\n  provider: {name: vllm}\n  resources: {gpu: {count: 1}}\n  scaling: {replicas: %d}\n"
	objs := render(t, draCaps, oneModel(t, "small-a", fmt.Sprintf(spec, 2)), oneModel(t, "small-b", fmt.Sprintf(spec, 3)))
	ns, models := deploy(t, objs)
	for _, m := range models {
		require.Equal(t, "l4", m.GetAnnotations()[hub.AnnotationNodePool], m.GetName())
	}
	pending(t, ns, 4, 1)
	got := requireAllocated(t, ns, resolveCaps(t, draCaps), nodes, models)
	require.Len(t, got, 4)
	var devices []string
	for _, ds := range got {
		require.Len(t, ds, 1)
		devices = append(devices, ds[0].pool+"/"+ds[0].name)
	}
	sort.Strings(devices)
	require.Equal(t, []string{"l4-0/gpu-0", "l4-1/gpu-0", "l4-2/gpu-0", "l4-3/gpu-0"}, devices, "every L4 device once")
	left := pendingPods(t, ns)
	require.Len(t, left, 1)
	cond := unschedulable(t, ns, left[0].Name, "cannot allocate all claims")
	require.Equal(t, corev1.PodReasonUnschedulable, cond.Reason)
	for _, pc := range claimsOf(t, ns) {
		if pc.pod.Name == left[0].Name {
			require.NotNil(t, pc.claim)
			require.Nil(t, pc.claim.Status.Allocation, "the Pending pod's claim holds no device")
		}
	}
	addRow("vllm (DRA) | 2 models, 2+3 pods of 1 device | %s | l4 | 4/5, devices %s each once; 1 Pending: %q | l4-0..3 | -", draCaps, strings.Join(devices, ","), cond.Message)
}

// kuberayDRAVersion is the KubeRay release the DRA test runs: a worker
// group's pods carry a ResourceClaimTemplate's name since 1.3.1 (the
// provider refuses 1.3.0, whose CRDs prune it), and 1.6.0 is the newest
// release the Go module proxy serves (the DRA golden case's 1.7.0 is not:
// "This module version is not available").
const kuberayDRAVersion = "1.6.0"

// TestDRAKubeRay: the DRA golden case of KubeRay (Llama 3.1 70B, 2 Ray
// workers of 4 claimed H100s, the head on the CPU pool), with its
// capability file at KubeRay 1.6.0, run by the real KubeRay 1.6.0
// operator with its CRDs: the RayService keeps the workers' claim (the
// CRD's schema does not prune it), the operator makes the RayCluster and
// its pods with the claim, the resource-claim controller a claim per
// worker, and the scheduler allocates 4 devices of the worker's node to
// each; the head claims nothing and runs on the CPU pool.
func TestDRAKubeRay(t *testing.T) {
	caps := capsVariant(t, "golden/testdata/dra-kuberay/functionConfig/capabilities.yaml", `version: "1.7.0"`, `version: "`+kuberayDRAVersion+`"`)
	nodes := useCluster(t, caps)
	objs := render(t, caps, "golden/testdata/dra-kuberay/modeldeployment.yaml")
	require.Empty(t, nvidiaGPURequests(objs), "a DRA pool's pods request no GPU extended resource")
	useKubeRay(t, kuberayDRAVersion)
	start := time.Now()
	ns, models := deploy(t, objs)
	want := 0
	for _, n := range rayPods(objs) {
		want += n
	}
	require.Equal(t, 3, want, "the head and 2 workers")
	pods := waitAllBound(t, ns, want, twin.HangBound)
	took := time.Since(start)
	got := requireAllocated(t, ns, resolveCaps(t, caps), nodes, models)
	require.Len(t, got, 2, "the 2 workers claim devices, the head does not")
	cpu := cpuPoolSelectors(t, caps)
	for _, p := range pods {
		if claimsDevices(&p) {
			require.Len(t, got[p.Name], 4, "worker %s", p.Name)
			continue
		}
		require.Contains(t, p.Labels["ray.io/node-type"], "head", "pod %s claims nothing: the head", p.Name)
		for i := range nodes {
			if nodes[i].Name == p.Spec.NodeName {
				require.Contains(t, cpu, poolOf(&nodes[i]), "the head runs on the CPU pool")
			}
		}
	}
	addRow("kuberay (real operator %s, DRA) | dra-kuberay llama-70b | golden/testdata/dra-kuberay (KubeRay %s) | h100 | 2/3 workers' claims allocated 4 devices each, head on the CPU pool | %s | %s",
		kuberayDRAVersion, kuberayDRAVersion, nodesOf(pods), took.Round(100*time.Millisecond))
}

// TestDRADynamo: the DRA golden case of Dynamo (Qwen3 32B disaggregated:
// 2 prefill workers of 2 claimed H100s, 1 decode worker of 4, a frontend)
// through the Dynamo stand-in, which passes the service's
// `resources.claims` to the main container and `extraPodSpec.resourceClaims`
// to the pod as the operator does (dynamo_test.go): every worker's claim
// allocated on its node's slice with its template's devices, no device
// twice, the frontend on the CPU pool without a claim; the status reporter
// reads the graph Ready.
func TestDRADynamo(t *testing.T) {
	const dir = "golden/testdata/dra-dynamo-vllm-disaggregated"
	caps := dir + "/functionConfig/capabilities.yaml"
	nodes := useCluster(t, caps)
	objs := render(t, caps, dir+"/modeldeployment.yaml")
	ns, models, start := deployConsumed(t, objs)
	want := 0
	for _, n := range dynamoPods(objs) {
		want += n
	}
	pods := waitAllBound(t, ns, want, twin.HangBound)
	took := time.Since(start)
	got := requireAllocated(t, ns, resolveCaps(t, caps), nodes, models)
	perRole := map[string][]int{}
	for _, p := range pods {
		role := p.Labels[subComponentTypeLabel]
		if role == "" {
			require.False(t, claimsDevices(&p), "pod %s without a worker role claims devices", p.Name)
			continue
		}
		perRole[role] = append(perRole[role], len(got[p.Name]))
	}
	require.Equal(t, map[string][]int{"prefill": {2, 2}, "decode": {4}}, perRole, "devices per worker pod, by role")
	startReporter(t, ns)
	ready := waitReady(t, ns, models[0].GetName(), "True", twin.HangBound)
	addRow("dynamo (stand-in, DRA) + status reporter | dra-dynamo-vllm-disaggregated qwen3-32b | %s | prefill=h100,decode=h100 | %d/%d, claims allocated: prefill 2+2, decode 4 devices, distinct; reporter: Ready %s | %s | %s",
		caps, len(got), len(pods), ready.Round(100*time.Millisecond), nodesOf(pods), took.Round(100*time.Millisecond))
}

// TestDRAKAITO: the DRA golden case of KAITO (a llama.cpp template on a
// DRA pool, KAITO 0.12.0 on bring-your-own nodes) through the KAITO
// stand-in, which copies the Workspace's pod template whole, claims
// included, as KAITO's GenerateManifestWithPodTemplate does
// (kaito_test.go; docs/providers.md): the pod's claim is allocated one
// device of its node's slice, and the status reporter reads the Workspace
// Ready. Presets, which KAITO gives nvidia.com/gpu itself, are refused by
// the renderer (golden dra-kaito-error), so none runs here.
func TestDRAKAITO(t *testing.T) {
	const dir = "golden/testdata/dra-kaito-llamacpp"
	caps := dir + "/functionConfig/capabilities.yaml"
	nodes := useCluster(t, caps)
	objs := render(t, caps, dir+"/modeldeployment.yaml")
	require.Empty(t, nvidiaGPURequests(objs), "a DRA pool's pods request no GPU extended resource")
	ns, models, start := deployConsumed(t, objs)
	pods := waitAllBound(t, ns, 1, twin.HangBound)
	took := time.Since(start)
	got := requireAllocated(t, ns, resolveCaps(t, caps), nodes, models)
	require.Len(t, got[pods[0].Name], 1)
	startReporter(t, ns)
	ready := waitReady(t, ns, models[0].GetName(), "True", twin.HangBound)
	addRow("kaito (stand-in, DRA) + status reporter | dra-kaito-llamacpp %s | %s | %s | 1/1, claim allocated %s; reporter: Ready %s | %s | %s",
		models[0].GetName(), caps, models[0].GetAnnotations()[hub.AnnotationNodePool], got[pods[0].Name][0], ready.Round(100*time.Millisecond), nodesOf(pods), took.Round(100*time.Millisecond))
}

// nvidiaGPURequests lists the containers of rendered pod templates that
// request nvidia.com/gpu.
func nvidiaGPURequests(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		data, _ := o.MarshalJSON()
		if strings.Contains(string(data), `"nvidia.com/gpu":`) {
			out = append(out, o.GetKind()+"/"+o.GetName())
		}
	}
	return out
}

// nodesOf lists the nodes pods are bound to, sorted, once each.
func nodesOf(pods []corev1.Pod) string {
	set := map[string]bool{}
	for _, p := range pods {
		set[p.Spec.NodeName] = true
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// waitPhase waits until the model's status has the phase want and returns
// the ModelDeployment.
func waitPhase(t *testing.T, ns, name, want string, within time.Duration) *unstructured.Unstructured {
	t.Helper()
	md := &unstructured.Unstructured{}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		md.SetAPIVersion("airunway.ai/v1alpha1")
		md.SetKind(hub.KindModelDeployment)
		require.NoError(c, cluster.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, md))
		phase, _, _ := unstructured.NestedString(md.Object, "status", "phase")
		assert.Equal(c, want, phase)
		assert.Equal(c, "False", conditionStatus(md, "Ready"))
	}, within, 200*time.Millisecond, "ModelDeployment %s/%s does not reach phase %s", ns, name, want)
	return md
}

// metaOwnedBy reports whether the owner references name the UID.
func metaOwnedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}
