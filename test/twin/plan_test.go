package twin_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/internal/testing/twin"
)

// agreementSeed seeds the generated model sets and pool shapes of
// TestPlanAgreesWithScheduler; testdata/plan-agreement.golden holds what
// it generates, so a change of generator shows in review.
const agreementSeed = 2026_11_26

// agreementCase is one pool shape and the models placed on it.
type agreementCase struct {
	gpusPerNode, nodes int
	models             []agreementModel
}

type agreementModel struct{ gpus, replicas int }

// agreementCases draws pool shapes (1, 2, 4 or 8 GPUs a node, 1 to 4
// nodes) and 1 to 3 vLLM models a pool, each of 1 or 2 replicas of a power
// of two GPUs that a node holds (tensor parallelism takes powers of two).
func agreementCases() []agreementCase {
	r := rand.New(rand.NewPCG(agreementSeed, 24))
	var out []agreementCase
	for range 10 {
		c := agreementCase{gpusPerNode: []int{1, 2, 4, 8}[r.IntN(4)], nodes: 1 + r.IntN(4)}
		var sizes []int
		for g := 1; g <= c.gpusPerNode; g *= 2 {
			sizes = append(sizes, g)
		}
		for range 1 + r.IntN(3) {
			c.models = append(c.models, agreementModel{gpus: sizes[r.IntN(len(sizes))], replicas: 1 + r.IntN(2)})
		}
		out = append(out, c)
	}
	return out
}

func (c agreementCase) String() string {
	var ms []string
	for _, m := range c.models {
		ms = append(ms, fmt.Sprintf("%d×%d GPU", m.replicas, m.gpus))
	}
	return fmt.Sprintf("%d node(s) of %d GPU: %s", c.nodes, c.gpusPerNode, strings.Join(ms, ", "))
}

// capabilities is the case's capability file. Its pool, and so its
// nodes, are named after the case: the scheduler never meets a node name
// whose pods from the case before it has not yet forgotten. With dra the
// pool's GPUs are DRA devices of gpu.nvidia.com (the twin publishes a
// ResourceSlice per node), which the pods claim instead of requesting
// nvidia.com/gpu.
func (c agreementCase) capabilities(pool string, dra bool) string {
	devices := ""
	if dra {
		devices = "deviceClassName: gpu.nvidia.com, "
	}
	return fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: agreement}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: %s
    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {%sproduct: NVIDIA-H100-80GB-HBM3, perNode: %d}
    nodes: {count: %d}
`, pool, devices, c.gpusPerNode, c.nodes)
}

// TestPlanAgreesWithScheduler holds `airunway-render plan` to the real
// kube-scheduler: for every generated pool shape and model set, the plan
// fits exactly when the scheduler binds every pod, and the plan's pending
// pods are the pods the scheduler leaves Pending. The models are applied
// largest first, each settled (every pod bound, or Pending with the
// scheduler's reason) before the next, the order the plan packs in. The
// cases run with GPUs as the extended resource, and three of them
// (draAgreementCases) again as DRA devices the pods claim: the plan counts
// claimed devices, the scheduler's DynamicResources plugin allocates them.
func TestPlanAgreesWithScheduler(t *testing.T) {
	cases := agreementCases()
	var gen strings.Builder
	for i, c := range cases {
		fmt.Fprintf(&gen, "case %d: %s\n", i, c)
	}
	golden := filepath.Join("testdata", "plan-agreement.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(gen.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), gen.String(), "the generator changed: go test ./test/twin -run TestPlanAgreesWithScheduler -update")

	for _, dra := range []bool{false, true} {
		fits, short := 0, 0
		for i, c := range cases {
			if dra && !slices.Contains(draAgreementCases, i) {
				continue
			}
			agreeWithScheduler(t, i, c, dra, &fits, &short)
		}
		require.Positive(t, fits, "the generated cases must include pools that hold their models (DRA: %t)", dra)
		require.Positive(t, short, "the generated cases must include pools that are short (DRA: %t)", dra)
	}
}

// draAgreementCases are the generated cases that run again with DRA
// devices, one of each situation the DRA plan meets (the other cases
// repeat one of them, and each case takes seconds: the first eight took
// 18 s of a run, these three 8 s):
//   - 1, short of devices: 2 nodes of 2 GPUs for 1×1, 1×2 and 1×2 GPU; the
//     two 2-GPU claims take every device, so the plan's one pending pod
//     must be the one the scheduler cannot allocate for.
//   - 2, fits across nodes with whole-node claims: 4 nodes of 8 GPUs for
//     2×2 and 2×8 GPU; each 8-GPU replica claims all of a node's devices
//     (a ResourceSlice's every device), the plan needs 3 nodes.
//   - 3, fits with several pods to a node: 2 nodes of 8 GPUs for 1×2,
//     1×1 and 2×2 GPU; the plan packs the four pods' claims (a replica's
//     each) of mixed sizes on one node, the scheduler must allocate every
//     one from the nodes' devices, no device twice.
var draAgreementCases = []int{1, 2, 3}

// agreeWithScheduler runs one case of TestPlanAgreesWithScheduler.
func agreeWithScheduler(t *testing.T, i int, c agreementCase, dra bool, fits, short *int) {
	name, pool, kind := fmt.Sprintf("case-%d", i), fmt.Sprintf("agree%d", i), "gpu"
	if dra {
		name, pool, kind = "dra-"+name, "dagree"+fmt.Sprint(i), "gpu (DRA)"
	}
	t.Run(name, func(t *testing.T) {
		dir := t.TempDir()
		caps := filepath.Join(dir, "capabilities.yaml")
		require.NoError(t, os.WriteFile(caps, []byte(c.capabilities(pool, dra)), 0o644))
		var paths []string
		for j, m := range c.models {
			paths = append(paths, oneModel(t, fmt.Sprintf("m%d", j), fmt.Sprintf("  model: {id: Qwen/Qwen3-8B}\n  engine: {type: vllm}\n  resources: {gpu: {count: %d}}\n  scaling: {replicas: %d}\n", m.gpus, m.replicas)))
		}
		p := planJSON(t, caps, paths)

		// The scheduler sees every node and its devices before the first
		// pod: its first verdict on a pod is then its last.
		waitSchedulerSees(t, resolveCaps(t, caps), useCluster(t, caps))
		idx := make([]int, len(c.models))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return c.models[b].gpus - c.models[a].gpus })
		ns := ""
		total, bound, pendingPods := 0, 0, 0
		for _, j := range idx {
			objs := render(t, caps, paths[j])
			if ns == "" {
				ns, _ = deploy(t, objs)
			} else {
				applyIn(t, ns, objs)
			}
			total += c.models[j].replicas
			bound, pendingPods = settle(t, ns, total)
		}
		t.Logf("%s: plan needs %d node(s), %d pending, fits=%v; the scheduler bound %d and left %d Pending",
			c, p.NodesNeeded, p.PendingPods, p.Fits, bound, pendingPods)
		if p.PendingPods != pendingPods {
			t.Logf("the scheduler's reasons:\n%s", schedulerEvents(t, ns))
		}
		require.Equal(t, p.PendingPods, pendingPods, "pods Pending: the plan against the scheduler")
		require.Equal(t, p.Fits, pendingPods == 0, "fits: the plan against the scheduler")
		require.Equal(t, total-pendingPods, bound)
		if p.Fits {
			*fits++
		} else {
			*short++
		}
		addRow("vllm | plan agreement: %s | generated | %s | %d/%d bound, %d Pending; plan: %d node(s) needed, %d pending | - | -", c, kind, bound, total, pendingPods, p.NodesNeeded, p.PendingPods)
	})
}

// poolPlan is what the test reads of the plan's JSON.
type poolPlan struct {
	NodesNeeded int  `json:"nodesNeeded"`
	PendingPods int  `json:"pendingPods"`
	Fits        bool `json:"fits"`
}

// planExitFor is the exit status plan documents for what its JSON says:
// 3 when the pods do not fit, 4 when they do but a rolling update stalls,
// 0 otherwise.
func planExitFor(fits, rolloutsProceed bool) int {
	switch {
	case !fits:
		return 3
	case !rolloutsProceed:
		return 4
	}
	return 0
}

// planJSON runs `airunway-render plan -o json`: its exit status as
// planExitFor says, and the one pool's figures.
func planJSON(t *testing.T, caps string, paths []string) poolPlan {
	t.Helper()
	cmd := exec.Command(renderBin(t), append([]string{"plan", "-o", "json", "--capabilities", caps}, paths...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	var p struct {
		Fits            bool       `json:"fits"`
		RolloutsProceed bool       `json:"rolloutsProceed"`
		Pools           []poolPlan `json:"pools"`
	}
	require.NoError(t, json.Unmarshal(out, &p), "plan: %s", stderr.String())
	require.Len(t, p.Pools, 1)
	require.Equal(t, p.Fits, p.Pools[0].Fits)
	require.Equal(t, planExitFor(p.Fits, p.RolloutsProceed), code, "the exit status against `fits` and `rolloutsProceed`: %s", stderr.String())
	return p.Pools[0]
}

// waitNodesReady waits until KWOK has made every node Ready.
func waitNodesReady(t *testing.T, nodes []corev1.Node) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, n := range nodes {
			got := &corev1.Node{}
			require.NoError(c, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(&n), got))
			assert.True(c, nodeReady(got), "node %s is not Ready", n.Name)
		}
	}, twin.HangBound, 100*time.Millisecond, "KWOK did not make every node Ready")
}

// applyIn creates rendered objects in an existing namespace.
func applyIn(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			continue
		}
		o.SetNamespace(ns)
		require.NoError(t, cluster.Client.Create(context.Background(), o), "%s/%s", o.GetKind(), o.GetName())
	}
}

// settle waits until the namespace has total pods, each bound or marked
// unschedulable by the scheduler, and returns how many are which. The
// scheduler's verdict on a pod is its last when it had the whole cluster
// in view (waitSchedulerSees, before the pods): no pod it marked
// unschedulable is bound while it gets another look (verdictHeld; its
// first retry of a pod that a later event requeued comes after 1 s).
func settle(t *testing.T, ns string, total int) (bound, unschedulable int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pods, err := podsIn(ns)
		require.NoError(c, err)
		bound, unschedulable = 0, 0
		for _, p := range pods {
			switch {
			case p.Spec.NodeName != "":
				bound++
			case podUnschedulable(&p):
				unschedulable++
			}
		}
		if len(pods) != total || bound+unschedulable != total {
			c.Errorf("want %d pods bound or unschedulable, have %d pods, %d bound, %d unschedulable:\n%s", total, len(pods), bound, unschedulable, podSummary(pods))
		}
	}, twin.HangBound, 200*time.Millisecond, "the %d pods of %s are not each bound or unschedulable", total, ns)
	if unschedulable > 0 {
		// Never runs its condition off the test's goroutine: no t in it.
		require.Never(t, func() bool {
			pods, err := podsIn(ns)
			return err != nil || boundOf(pods) != bound
		}, verdictHeld, 200*time.Millisecond, "the scheduler bound a pod of %s it had marked unschedulable (or the pods could not be listed)", ns)
	}
	return bound, unschedulable
}

// verdictHeld is how long settle holds the scheduler to its verdict: what
// must not happen, which a slow machine only makes less likely to be seen.
const verdictHeld = 2 * time.Second

func podsIn(ns string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	err := cluster.Client.List(context.Background(), pods, client.InNamespace(ns))
	return pods.Items, err
}

func boundOf(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

func podUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// selectorlessCase is a cluster without a CPU pool and a KubeRay model
// behind a gateway: the Ray head and the endpoint picker are rendered
// without a node selector (issue 35), and the scheduler puts them on any
// node whose taints they tolerate and that has room for their requests.
type selectorlessCase struct {
	name string
	// pools are the capability file's node pools, each named after the
	// case (see agreementCase.capabilities).
	pools string
	gpus  int
	// want is where the plan puts the head and the endpoint picker ("":
	// no pool takes it), and why the scheduler leaves Pending what no pool
	// takes.
	head, epp, why string
}

func selectorlessCases() []selectorlessCase {
	const l4 = `  - name: %[1]s-l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
%[2]s    gpu: {resourceName: nvidia.com/gpu, product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
    nodes: {count: 2}
`
	const a100 = `  - name: %[1]s-a100
    selector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {resourceName: nvidia.com/gpu, product: NVIDIA-A100-SXM4-80GB, memoryMiB: 81920, perNode: 2}
    nodes: {count: 1}
`
	const taint = "    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n"
	return []selectorlessCase{
		// Issue 35's cluster: untainted L4 nodes hold the head and the picker.
		{name: "sel0", pools: fmt.Sprintf(l4, "sel0", ""), gpus: 1, head: "sel0-l4", epp: "sel0-l4"},
		// The worker on the tainted A100 pool; the head and the picker
		// tolerate no taint, so only the L4 pool takes them.
		{name: "sel1", pools: fmt.Sprintf(a100, "sel1") + fmt.Sprintf(l4, "sel1", ""), gpus: 2, head: "sel1-l4", epp: "sel1-l4"},
		// Every pool tainted: nothing takes them, and they stay Pending.
		{name: "sel2", pools: fmt.Sprintf(l4, "sel2", taint), gpus: 1, why: "untolerated taint"},
		// L4 nodes of 2 cpu: the picker (no requests) fits, the head (4 cpu)
		// is larger than every node.
		{name: "sel3", pools: fmt.Sprintf(l4, "sel3", "    capacity: {cpu: \"2\"}\n"), gpus: 1, epp: "sel3-l4", why: "Insufficient cpu"},
	}
}

func (c selectorlessCase) capabilities() string {
	return `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: selectorless}
spec:
  providers:
  - {name: kuberay, version: "` + kuberayVersion + `"}
  - {name: vllm}
  gateway:
    inferencePoolVersion: inference.networking.k8s.io/v1
    inferenceExtensionVersion: v1.5.0
    gatewayAPIVersion: v1.5.1
    channel: standard
    parentRef: {name: inference-gateway, namespace: gateway-system}
  nodePools:
` + c.pools
}

// TestPlanAgreesWithSchedulerOnPodsWithoutSelector holds the plan's
// packing of pods without a node selector to the real kube-scheduler (and
// the real KubeRay operator and Deployment controller that make the
// pods): every pod group the plan places by the scheduler's rules is
// bound on nodes of the pool the plan names, every group it leaves
// unplaced stays Pending, and the plan fits (exit 0) exactly when no pod
// is Pending (else exit 3).
func TestPlanAgreesWithSchedulerOnPodsWithoutSelector(t *testing.T) {
	for _, c := range selectorlessCases() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			caps := filepath.Join(dir, "capabilities.yaml")
			require.NoError(t, os.WriteFile(caps, []byte(c.capabilities()), 0o644))
			model := oneModel(t, "m", fmt.Sprintf("  model: {id: Qwen/Qwen3-0.6B}\n  provider: {name: kuberay}\n  resources: {gpu: {count: %d}}\n", c.gpus))
			p := selectorlessPlanOf(t, caps, model)
			requirePlanPlaces(t, p, map[string]string{"RayService/m head": c.head, "Deployment/m-epp": c.epp})

			nodes := useCluster(t, caps)
			waitSchedulerSees(t, resolveCaps(t, caps), nodes)
			objs := render(t, caps, model)
			ns, _, _ := deployConsumed(t, objs)
			bound, pendingPods := settle(t, ns, p.pods())
			pods := &corev1.PodList{}
			require.NoError(t, cluster.Client.List(context.Background(), pods, client.InNamespace(ns)))
			where := podPools(pods.Items, nodes)
			t.Logf("plan: %+v; the scheduler: %v", p, where)
			for _, g := range p.Floating {
				require.Equal(t, slices.Repeat([]string{g.Pool}, g.Pods), where[g.key()], "%s: the plan's pool against the scheduler's nodes", g.key())
			}
			for _, g := range p.Unplaced {
				require.Equal(t, slices.Repeat([]string{"Pending"}, g.Pods), where[g.key()], "%s: unplaced in the plan, Pending on the twin", g.key())
			}
			if pendingPods > 0 {
				require.Contains(t, schedulerEvents(t, ns), c.why)
			}
			require.Equal(t, p.Fits, pendingPods == 0, "fits: the plan against the scheduler (%d bound, %d Pending)", bound, pendingPods)
			addRow("kuberay (real operator %s) + gateway | plan agreement, pods without a node selector: %s | generated | %s | %d/%d bound, %d Pending; plan: %s | - | -",
				kuberayVersion, c.name, cmp.Or(c.head, "none"), bound, bound+pendingPods, pendingPods, p)
		})
	}
}

// selectorlessPlan is what the test reads of `airunway-render plan -o
// json`, checking its exit status against its `fits`.
type selectorlessPlan struct {
	Fits            bool `json:"fits"`
	RolloutsProceed bool `json:"rolloutsProceed"`
	Pools           []struct {
		Name string `json:"name"`
		Pods int    `json:"pods"`
	} `json:"pools"`
	Floating []planGroup `json:"floating"`
	Unplaced []planGroup `json:"unplaced"`
}

type planGroup struct {
	Object    string `json:"object"`
	Component string `json:"component"`
	Pods      int    `json:"pods"`
	Pool      string `json:"pool"`
}

// key names a pod group as podPools does.
func (g planGroup) key() string { return strings.TrimSpace(g.Object + " " + g.Component) }

func (p selectorlessPlan) pods() int {
	n := 0
	for _, pl := range p.Pools {
		n += pl.Pods
	}
	for _, g := range p.Unplaced {
		n += g.Pods
	}
	return n
}

func (p selectorlessPlan) String() string {
	var parts []string
	for _, g := range p.Floating {
		parts = append(parts, fmt.Sprintf("%s on %s", g.key(), g.Pool))
	}
	for _, g := range p.Unplaced {
		parts = append(parts, g.key()+" unplaced")
	}
	return fmt.Sprintf("fits=%v, %s", p.Fits, strings.Join(parts, ", "))
}

func selectorlessPlanOf(t *testing.T, caps string, paths ...string) selectorlessPlan {
	t.Helper()
	cmd := exec.Command(renderBin(t), append([]string{"plan", "-o", "json", "--capabilities", caps}, paths...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	var p selectorlessPlan
	require.NoError(t, json.Unmarshal(out, &p), "plan: %s", stderr.String())
	require.Equal(t, planExitFor(p.Fits, p.RolloutsProceed), code, "the exit status against `fits` and `rolloutsProceed`: %s", stderr.String())
	return p
}

// requirePlanPlaces: the plan puts each pod group on the pool want names
// for it, or ("") leaves it unplaced.
func requirePlanPlaces(t *testing.T, p selectorlessPlan, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, g := range p.Floating {
		got[g.key()] = g.Pool
	}
	for _, g := range p.Unplaced {
		got[g.key()] = ""
	}
	require.Equal(t, want, got, "%s", p)
}

// podPools says where each pod group's pods are: the pool of each pod's
// node, or Pending. A pod's group is named as the plan names it: the Ray
// head and worker groups by their RayService (the model's name) and
// group, a Deployment's pods by the Deployment (their ReplicaSet's name
// without the template hash).
func podPools(pods []corev1.Pod, nodes []corev1.Node) map[string][]string {
	pools := map[string]string{}
	for i := range nodes {
		pools[nodes[i].Name] = poolOf(&nodes[i])
	}
	out := map[string][]string{}
	for _, pod := range pods {
		where := "Pending"
		if pod.Spec.NodeName != "" {
			where = pools[pod.Spec.NodeName]
		}
		key := ""
		switch pod.Labels["ray.io/node-type"] {
		case "head":
			key = "RayService/" + pod.Labels[hub.LabelModelDeployment] + " head"
		case "worker":
			key = "RayService/" + pod.Labels[hub.LabelModelDeployment] + " " + pod.Labels["ray.io/group"]
		}
		for _, o := range pod.OwnerReferences {
			if o.Kind == "ReplicaSet" {
				key = "Deployment/" + strings.TrimSuffix(o.Name, "-"+pod.Labels["pod-template-hash"])
			}
		}
		out[key] = append(out[key], where)
	}
	return out
}
