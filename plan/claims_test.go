package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/plan"
)

// draCluster has an H100 pool whose GPUs are DRA devices of
// gpu.nvidia.com beside an L4 pool of the extended resource and a CPU
// pool: the two ways of counting GPUs in one cluster.
const draCluster = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: dra}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: h100
    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {deviceClassName: gpu.nvidia.com, product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, perNode: 8}
    nodes: {count: %d}
    pricePerNodeHour: {amount: 98.32, currency: USD}
  - name: l4
    selector: {cloud.google.com/gke-accelerator: nvidia-l4}
    gpu: {resourceName: nvidia.com/gpu, product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
    nodes: {count: 2}
  - name: cpu
    selector: {node.kubernetes.io/pool: cpu}
    capacity: {cpu: "16", memory: 64Gi}
    nodes: {count: 1}
`

const h100Selector = "{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}"

// claimingDeployment is a rendered Deployment of model name whose pods
// select nodes by selector and claim GPUs through claims (the pod's
// `resourceClaims`, as YAML flow).
func claimingDeployment(name string, replicas int, selector, claims string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: ml
  annotations: {render.airunway.ai/generated-from: %[1]s}
spec:
  replicas: %[2]d
  strategy: {type: Recreate}
  template:
    spec:
      nodeSelector: %[3]s
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      resourceClaims: %[4]s
      containers:
      - name: server
        resources:
          requests: {cpu: "4", memory: 32Gi}
          claims: [{name: gpu}]
`, name, replicas, selector, claims)
}

// claimTemplate is a rendered ResourceClaimTemplate whose one request is
// request (the YAML of `exactly` or `firstAvailable`).
func claimTemplate(name, request string) string {
	return fmt.Sprintf(`apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: %s
  namespace: ml
  annotations: {render.airunway.ai/generated-from: x}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        %s
`, name, request)
}

func exactly(class string, count int) string {
	return fmt.Sprintf("exactly: {deviceClassName: %s, allocationMode: ExactCount, count: %d}", class, count)
}

// templateClaim is a pod's claim of the template name.
func templateClaim(name string) string {
	return fmt.Sprintf("[{name: gpu, resourceClaimTemplateName: %s}]", name)
}

func computeItems(t *testing.T, capsText string, docs ...string) (*plan.Plan, error) {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(strings.Join(docs, "---\n"))}).Read()
	require.NoError(t, err)
	return plan.Compute(items, resolve(t, capsText))
}

func mustCompute(t *testing.T, capsText string, docs ...string) *plan.Plan {
	t.Helper()
	p, err := computeItems(t, capsText, docs...)
	require.NoError(t, err)
	return p
}

// The renderer's own output: a vLLM model on the DRA pool claims its
// GPUs, and the plan counts them as it counts the extended resource on
// the L4 pool beside it.
func TestRenderedClaimsCountAsGPUs(t *testing.T) {
	caps := fmt.Sprintf(draCluster, 2)
	models := strings.Replace(model("big", "vllm", 4, 2, ""), "  scaling:", "  nodeSelector: "+h100Selector+"\n  scaling:", 1) + "---\n" +
		strings.Replace(model("small", "vllm", 1, 2, ""), "  scaling:", "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  scaling:", 1)
	items := renderItems(t, resolve(t, caps), models)
	templates := 0
	for _, n := range items {
		if n.GetKind() == "ResourceClaimTemplate" {
			templates++
		}
	}
	require.Equal(t, 1, templates, "the renderer claims the H100s, not the L4s")
	p, err := plan.Compute(items, resolve(t, caps))
	require.NoError(t, err)
	h := pool(t, p, "h100")
	require.Equal(t, "gpu.nvidia.com", h.DeviceClassName)
	require.Equal(t, int32(2), h.Pods)
	require.Equal(t, int64(8), h.GPUsRequested)
	require.Equal(t, int32(1), *h.NodesNeeded)
	require.Equal(t, int64(0), h.IdleGPUs)
	require.Equal(t, []plan.Model{{Namespace: "ml", Name: "big", Pods: 2, GPUs: 8}}, h.Models)
	l4 := pool(t, p, "l4")
	require.Empty(t, l4.DeviceClassName)
	require.Equal(t, int64(2), l4.GPUsRequested)
	require.Equal(t, int32(2), *l4.NodesNeeded)
	require.Empty(t, p.Unplaced)
	require.True(t, p.Fits)
}

// Two models on one DRA pool are packed onto nodes by the devices they
// claim, as by the extended resource: a 5-device and a 3-device pod share
// a node of 8, two of each need two nodes, a third 5 a third node.
func TestClaimedDevicesPackOntoNodes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fives, threes int
		nodes         int32
		idle          int64
		pending       int32
		fits          bool
	}{
		{"5+3 share nodes", 2, 2, 2, 0, 0, true},
		{"a third 5 needs a third node", 3, 2, 3, 3, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, fmt.Sprintf(draCluster, 2),
				claimingDeployment("five", tc.fives, h100Selector, templateClaim("five-gpu")),
				claimTemplate("five-gpu", exactly("gpu.nvidia.com", 5)),
				claimingDeployment("three", tc.threes, h100Selector, templateClaim("three-gpu")),
				claimTemplate("three-gpu", exactly("gpu.nvidia.com", 3)))
			h := pool(t, p, "h100")
			require.Equal(t, int32(tc.fives+tc.threes), h.Pods)
			require.Equal(t, int64(5*tc.fives+3*tc.threes), h.GPUsRequested)
			require.Equal(t, tc.nodes, *h.NodesNeeded)
			require.Equal(t, tc.idle, h.IdleGPUs)
			require.Equal(t, tc.pending, h.PendingPods)
			require.Equal(t, tc.fits, h.Fits)
			require.Equal(t, []plan.Model{
				{Namespace: "ml", Name: "five", Pods: int32(tc.fives), GPUs: int64(5 * tc.fives)},
				{Namespace: "ml", Name: "three", Pods: int32(tc.threes), GPUs: int64(3 * tc.threes)},
			}, h.Models)
		})
	}
}

// What the plan cannot count leaves the pods unplaced, the plan not
// fitting, with the pod and the claim named: never a pod counted as one
// that takes no GPUs.
func TestUncountableClaimsAreUnplaced(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs []string
		want []string
	}{
		{"template not among the objects",
			[]string{claimingDeployment("m", 2, h100Selector, templateClaim("elsewhere"))},
			[]string{`its resource claim "gpu" names ResourceClaimTemplate "elsewhere", which is not among the objects planned in namespace "ml"`}},
		{"template in another namespace",
			[]string{claimingDeployment("m", 2, h100Selector, templateClaim("m-gpu")),
				strings.Replace(claimTemplate("m-gpu", exactly("gpu.nvidia.com", 1)), "namespace: ml", "namespace: other", 1)},
			[]string{`names ResourceClaimTemplate "m-gpu", which is not among the objects planned in namespace "ml"`}},
		{"shared claim",
			[]string{claimingDeployment("m", 2, h100Selector, "[{name: gpu, resourceClaimName: shared-h100s}]")},
			[]string{`its resource claim "gpu" is the shared ResourceClaim "shared-h100s" (` + "`resourceClaimName`)"}},
		{"class no pool declares",
			[]string{claimingDeployment("m", 2, h100Selector, templateClaim("m-gpu")), claimTemplate("m-gpu", exactly("gpu.amd.com", 1))},
			[]string{`it selects pool "h100" but its resource claim "gpu" claims devices of DeviceClass "gpu.amd.com", which the pool does not offer (its ` + "`gpu.deviceClassName`" + ` is "gpu.nvidia.com"; no pool declares it)`}},
		{"DRA devices on the extended-resource pool",
			[]string{claimingDeployment("m", 2, "{cloud.google.com/gke-accelerator: nvidia-l4}", templateClaim("m-gpu")), claimTemplate("m-gpu", exactly("gpu.nvidia.com", 1))},
			[]string{`it selects pool "l4" but its resource claim "gpu" claims devices of DeviceClass "gpu.nvidia.com", which the pool does not offer (its GPUs are not DRA devices (no ` + "`gpu.deviceClassName`" + `); pool "h100" declares it)`}},
		{"DRA devices on the CPU pool",
			[]string{claimingDeployment("m", 2, "{node.kubernetes.io/pool: cpu}", templateClaim("m-gpu")), claimTemplate("m-gpu", exactly("gpu.nvidia.com", 1))},
			[]string{`it selects pool "cpu" but its resource claim "gpu" claims devices of DeviceClass "gpu.nvidia.com", which the pool does not offer (it has no GPUs; pool "h100" declares it)`}},
		{"no pool selected, no pool with the class",
			[]string{claimingDeployment("m", 2, "{}", templateClaim("m-gpu")), claimTemplate("m-gpu", exactly("gpu.amd.com", 1))},
			[]string{"pool \"h100\" has no devices of DeviceClass \"gpu.amd.com\" (`gpu.deviceClassName`), which its resource claim \"gpu\" claims",
				`pool "l4" has no devices of DeviceClass "gpu.amd.com"`, `pool "cpu" has no devices of DeviceClass "gpu.amd.com"`,
				"add a pool whose `gpu.deviceClassName` is \"gpu.amd.com\" to the capability file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustCompute(t, fmt.Sprintf(draCluster, 2), tc.docs...)
			require.False(t, p.Fits)
			require.Len(t, p.Unplaced, 1)
			g := p.Unplaced[0]
			require.Equal(t, "Deployment/m", g.Object)
			require.Equal(t, int32(2), g.Pods)
			for _, w := range tc.want {
				require.Contains(t, g.Reason, w)
			}
			require.Zero(t, pool(t, p, "h100").Pods, "unplaced pods count on no pool")
		})
	}
}

// A pod without a node selector that claims DRA devices goes to the pool
// that has them, not to the CPU pool or the extended-resource pool.
func TestFloatingClaimGoesToItsDeviceClass(t *testing.T) {
	p := mustCompute(t, fmt.Sprintf(draCluster, 2),
		claimingDeployment("m", 1, "{}", templateClaim("m-gpu")), claimTemplate("m-gpu", exactly("gpu.nvidia.com", 2)))
	require.Empty(t, p.Unplaced)
	require.Len(t, p.Floating, 1)
	require.Equal(t, "h100", p.Floating[0].Pool)
	require.False(t, p.Floating[0].CPUOnGPUPool)
	require.Equal(t, int64(2), pool(t, p, "h100").GPUsRequested)
}

// allocationMode All takes every device of the node (the pool's
// perNode); firstAvailable is counted at its first alternative; each says
// so. Several claims and requests of a pod add up.
func TestClaimModesAreCountedAndNoted(t *testing.T) {
	p := mustCompute(t, fmt.Sprintf(draCluster, 2),
		claimingDeployment("all", 1, h100Selector, templateClaim("all-gpu")),
		claimTemplate("all-gpu", "exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}"),
		claimingDeployment("first", 1, h100Selector, templateClaim("first-gpu")),
		claimTemplate("first-gpu", "firstAvailable: [{name: big, deviceClassName: gpu.nvidia.com, count: 4}, {name: small, deviceClassName: gpu.nvidia.com, count: 2}]"),
		claimingDeployment("two", 1, h100Selector, "[{name: a, resourceClaimTemplateName: one-gpu}, {name: b, resourceClaimTemplateName: one-gpu}]"),
		claimTemplate("one-gpu", "exactly: {deviceClassName: gpu.nvidia.com}"))
	h := pool(t, p, "h100")
	require.Equal(t, []plan.Model{
		{Namespace: "ml", Name: "all", Pods: 1, GPUs: 8},
		{Namespace: "ml", Name: "first", Pods: 1, GPUs: 4},
		{Namespace: "ml", Name: "two", Pods: 1, GPUs: 2},
	}, h.Models)
	require.Equal(t, int32(2), *h.NodesNeeded)
	require.Contains(t, p.Notes, `Deployment/all (model "all"): resource claim "gpu", request "gpu" of ResourceClaimTemplate "all-gpu" allocates every device of DeviceClass "gpu.nvidia.com" on its node (`+"`allocationMode: All`"+`): the plan counts the GPUs of a node of its pool (`+"`gpu.perNode`)")
	require.Contains(t, p.Notes, `Deployment/first (model "first"): resource claim "gpu", request "gpu" of ResourceClaimTemplate "first-gpu" takes the first of its 2 `+"`firstAvailable`"+` alternatives that the node has; the plan counts the first, 4 devices of DeviceClass "gpu.nvidia.com"`)
}

// A template the API server would refuse is an error in the inputs,
// naming the object, the claim and the field.
func TestMalformedClaimTemplateIsAnError(t *testing.T) {
	for _, tc := range []struct{ request, want string }{
		{exactly("gpu.nvidia.com", 0), "`spec.spec.devices.requests[0].exactly.count` must be between 1 and 32, got 0"},
		{"exactly: {count: 1}", "`spec.spec.devices.requests[0].exactly.deviceClassName` must name a DeviceClass"},
		{"exactly: {deviceClassName: gpu.nvidia.com, allocationMode: Some}", "`spec.spec.devices.requests[0].exactly.allocationMode` must be \"ExactCount\" or \"All\", got \"Some\""},
		{"firstAvailable: []", "`spec.spec.devices.requests[0].firstAvailable` must be a list of at least one subrequest"},
	} {
		_, err := computeItems(t, fmt.Sprintf(draCluster, 2),
			claimingDeployment("m", 1, h100Selector, templateClaim("m-gpu")), claimTemplate("m-gpu", tc.request))
		require.ErrorContains(t, err, `Deployment "m" in namespace "ml": ResourceClaimTemplate "m-gpu" in namespace "ml", of the pod's resource claim "gpu": `+tc.want)
	}
}

// The v1beta1 shape, whose requests carry the device fields themselves,
// is counted too.
func TestV1beta1ClaimTemplate(t *testing.T) {
	tmpl := strings.Replace(claimTemplate("m-gpu", "deviceClassName: gpu.nvidia.com\n        count: 3"), "resource.k8s.io/v1", "resource.k8s.io/v1beta1", 1)
	p := mustCompute(t, fmt.Sprintf(draCluster, 2), claimingDeployment("m", 1, h100Selector, templateClaim("m-gpu")), tmpl)
	require.Equal(t, int64(3), pool(t, p, "h100").GPUsRequested)
}

// Every provider's pods are read the same way: a Ray worker group's pod
// template and a Dynamo service's `extraPodSpec` claim devices as a
// Deployment's pods do (the head and the frontend claim none).
func TestClaimsOfProviderObjects(t *testing.T) {
	ray := `apiVersion: ray.io/v1
kind: RayService
metadata:
  name: ray
  namespace: ml
  annotations: {render.airunway.ai/generated-from: ray}
spec:
  upgradeStrategy: {type: None}
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          nodeSelector: {node.kubernetes.io/pool: cpu}
          containers: [{name: head, resources: {requests: {cpu: "2", memory: 8Gi}}}]
    workerGroupSpecs:
    - groupName: gpu
      replicas: 3
      template:
        spec:
          nodeSelector: ` + h100Selector + `
          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
          resourceClaims: [{name: gpu, resourceClaimTemplateName: ray-gpu}]
          containers: [{name: worker, resources: {claims: [{name: gpu}]}}]
`
	dynamo := `apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: dyn
  namespace: ml
  annotations: {render.airunway.ai/generated-from: dyn}
spec:
  services:
    Frontend:
      replicas: 1
      extraPodSpec:
        nodeSelector: {node.kubernetes.io/pool: cpu}
    VllmWorker:
      replicas: 2
      resources: {requests: {cpu: "8", memory: 64Gi}}
      extraPodSpec:
        nodeSelector: ` + h100Selector + `
        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
        resourceClaims: [{name: gpu, resourceClaimTemplateName: dyn-vllmworker-gpu}]
        mainContainer:
          resources: {claims: [{name: gpu}]}
`
	p := mustCompute(t, fmt.Sprintf(draCluster, 2), ray, claimTemplate("ray-gpu", exactly("gpu.nvidia.com", 2)),
		dynamo, claimTemplate("dyn-vllmworker-gpu", exactly("gpu.nvidia.com", 4)))
	require.Empty(t, p.Unplaced)
	h := pool(t, p, "h100")
	require.Equal(t, []plan.Model{
		{Namespace: "ml", Name: "dyn", Pods: 2, GPUs: 8},
		{Namespace: "ml", Name: "ray", Pods: 3, GPUs: 6},
	}, h.Models)
	require.Equal(t, int32(2), *h.NodesNeeded, "4+4 and 2+2+2")
	require.Equal(t, int32(2), pool(t, p, "cpu").Pods, "the head and the frontend")
}

// The nodes of a DRA pool have no GPU extended resource: a pod that
// requests one there stays Pending, so it is unplaced when it selects the
// pool, and one that selects no pool goes to the pool that has it.
func TestExtendedResourceOnADRAPool(t *testing.T) {
	requesting := func(name, selector string) string {
		return strings.Replace(strings.Replace(claimingDeployment(name, 1, selector, "[]"),
			"requests: {cpu: \"4\", memory: 32Gi}", "requests: {cpu: \"4\", memory: 32Gi, nvidia.com/gpu: 1}", 1),
			"          claims: [{name: gpu}]\n", "", 1)
	}
	p := mustCompute(t, fmt.Sprintf(draCluster, 2), requesting("pinned", h100Selector), requesting("free", "{}"))
	require.Len(t, p.Unplaced, 1)
	require.Equal(t, "Deployment/pinned", p.Unplaced[0].Object)
	require.Equal(t, `it selects pool "h100" but requests 1 nvidia.com/gpu, which the nodes of pool "h100" do not have: their GPUs are DRA devices of DeviceClass "gpu.nvidia.com", claimed through a ResourceClaimTemplate`, p.Unplaced[0].Reason)
	require.Len(t, p.Floating, 1)
	require.Equal(t, "l4", p.Floating[0].Pool)
	require.Zero(t, pool(t, p, "h100").Pods)
}
