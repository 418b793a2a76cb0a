package twin_test

import (
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

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
// whose pods from the case before it has not yet forgotten.
func (c agreementCase) capabilities(pool string) string {
	return fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: agreement}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: %s
    selector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    gpu: {product: NVIDIA-H100-80GB-HBM3, perNode: %d}
    nodes: {count: %d}
`, pool, c.gpusPerNode, c.nodes)
}

// TestPlanAgreesWithScheduler holds `airunway-render plan` to the real
// kube-scheduler: for every generated pool shape and model set, the plan
// fits exactly when the scheduler binds every pod, and the plan's pending
// pods are the pods the scheduler leaves Pending. The models are applied
// largest first, each settled (every pod bound, or Pending with the
// scheduler's reason) before the next, the order the plan packs in.
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

	fits, short := 0, 0
	for i, c := range cases {
		t.Run(fmt.Sprintf("case-%d", i), func(t *testing.T) {
			dir := t.TempDir()
			caps := filepath.Join(dir, "capabilities.yaml")
			require.NoError(t, os.WriteFile(caps, []byte(c.capabilities(fmt.Sprintf("agree%d", i))), 0o644))
			var paths []string
			for j, m := range c.models {
				paths = append(paths, oneModel(t, fmt.Sprintf("m%d", j), fmt.Sprintf("  model: {id: Qwen/Qwen3-8B}\n  engine: {type: vllm}\n  resources: {gpu: {count: %d}}\n  scaling: {replicas: %d}\n", m.gpus, m.replicas)))
			}
			p := planJSON(t, caps, paths)

			// Every node Ready first: a pod the scheduler finds no Ready node
			// for is marked unschedulable and retried only later.
			waitNodesReady(t, useCluster(t, caps))
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
				fits++
			} else {
				short++
			}
			addRow("vllm | plan agreement: %s | generated | gpu | %d/%d bound, %d Pending; plan: %d node(s) needed, %d pending | - | -", c, bound, total, pendingPods, p.NodesNeeded, p.PendingPods)
		})
	}
	require.Positive(t, fits, "the generated cases must include pools that hold their models")
	require.Positive(t, short, "the generated cases must include pools that are short")
}

// poolPlan is what the test reads of the plan's JSON.
type poolPlan struct {
	NodesNeeded int  `json:"nodesNeeded"`
	PendingPods int  `json:"pendingPods"`
	Fits        bool `json:"fits"`
}

// planJSON runs `airunway-render plan -o json`: exit 0 when it fits, 3
// when it does not, and the one pool's figures.
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
		Fits  bool       `json:"fits"`
		Pools []poolPlan `json:"pools"`
	}
	require.NoError(t, json.Unmarshal(out, &p), "plan: %s", stderr.String())
	require.Len(t, p.Pools, 1)
	require.Equal(t, p.Fits, p.Pools[0].Fits)
	if p.Fits {
		require.Equal(t, 0, code, stderr.String())
	} else {
		require.Equal(t, 3, code, "plan exits 3 when a pool is short: %s", stderr.String())
	}
	return p.Pools[0]
}

// waitNodesReady waits until KWOK has made every node Ready.
func waitNodesReady(t *testing.T, nodes []corev1.Node) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, n := range nodes {
		for {
			got := &corev1.Node{}
			require.NoError(t, cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(&n), got))
			if nodeReady(got) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s is not Ready after a minute", n.Name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
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

// verdictQuiet is how long a namespace's pods must stay as they are before
// settle believes a pod the scheduler marked unschedulable. The scheduler
// may try a pod before its cache holds a node just created, or while it
// still counts a deleted pod; the node or pod event that follows requeues
// the pod, which is retried after its backoff (1 s, then 2 s).
const verdictQuiet = 5 * time.Second

// settle waits until the namespace has total pods, each bound or marked
// unschedulable by the scheduler, and returns how many are which. A bound
// pod is final; a pod marked unschedulable counts once nothing has changed
// for verdictQuiet.
func settle(t *testing.T, ns string, total int) (bound, unschedulable int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var quietSince time.Time
	lastBound := -1
	for {
		pods := &corev1.PodList{}
		require.NoError(t, cluster.Client.List(context.Background(), pods, client.InNamespace(ns)))
		bound, unschedulable = 0, 0
		for _, p := range pods.Items {
			switch {
			case p.Spec.NodeName != "":
				bound++
			case podUnschedulable(&p):
				unschedulable++
			}
		}
		if len(pods.Items) == total && bound+unschedulable == total {
			if unschedulable == 0 {
				return bound, 0
			}
			if bound != lastBound {
				lastBound, quietSince = bound, time.Now()
			}
			if time.Since(quietSince) >= verdictQuiet {
				return bound, unschedulable
			}
		} else {
			lastBound = -1
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d pods bound or unschedulable, have %d pods, %d bound, %d unschedulable:\n%s", total, len(pods.Items), bound, unschedulable, podSummary(pods.Items))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func podUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}
