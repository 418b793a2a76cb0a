package reporter_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/airunway-render/airunway-render/api/hub"
	v1 "github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/reporter"
)

// step is one status an operator writes on the primary object, and the
// ModelDeployment status the reporter must derive from it.
type step struct {
	name, status string
	want         want
}

const since = "2026-11-22T10:00:00Z"

// Statuses the operators write that several tests share.
const (
	deploymentAvailable = `{replicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{type: Available, status: "True", reason: MinimumReplicasAvailable}]}`
	rayServiceRunning   = `{conditions: [{type: Ready, status: "True", reason: NonZeroServeEndpoints, message: "", lastTransitionTime: "` + since + `"}], activeServiceStatus: {applicationStatuses: {llm: {status: RUNNING}}}}`
)

// TestProviderLifecycles applies each provider's rendered output (the
// golden files), drives the primary object's status as that provider's
// operator writes it (as far as its real CRD schema lets it), and checks
// the ModelDeployment's status after every step.
func TestProviderLifecycles(t *testing.T) {
	t.Parallel() // its own namespace and reporter: see cluster
	cases := []struct {
		golden, primaryKind, primary, operator string
		steps                                  []step
	}{{
		golden: "vllm-minimal", primaryKind: "Deployment", primary: "qwen3-0-6b", operator: "kube-controller-manager",
		steps: []step{
			{"rolling out", `{replicas: 1, conditions: [{type: Progressing, status: "True", reason: ReplicaSetUpdated}]}`,
				want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress}},
			{"available", `{replicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{type: Available, status: "True", reason: MinimumReplicasAvailable}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`,
				want{phase: "Running", ready: "True", reason: reporter.ReasonReady, replicas: &v1.ReplicaStatus{Desired: 1, Ready: 1, Available: 1}, endpoint: &v1.EndpointStatus{Service: "qwen3-0-6b", Port: 8000}}},
			{"deadline exceeded", `{replicas: 1, conditions: [{type: Available, status: "False", reason: MinimumReplicasUnavailable}, {type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: "ReplicaSet qwen3-0-6b-7d9 has timed out progressing."}]}`,
				want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed, messageHas: "timed out progressing"}},
		},
	}, {
		golden: "llmd-disaggregated", primaryKind: "Deployment", primary: "qwen3-32b-decode", operator: "kube-controller-manager",
		steps: []step{
			{"available", `{replicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: [{type: Available, status: "True", reason: MinimumReplicasAvailable}]}`,
				want{phase: "Running", ready: "True", replicas: &v1.ReplicaStatus{Desired: 2, Ready: 2, Available: 2}, endpoint: &v1.EndpointStatus{Service: "qwen3-32b-decode", Port: 8000}}},
		},
	}, {
		golden: "kaito-vllm-preset-v0-12", primaryKind: "Workspace", primary: "qwen3-0-6b", operator: "kaito-workspace",
		steps: []step{
			{"not ready", `{state: NotReady, conditions: [{type: ResourceReady, status: "True", reason: NodesReady, message: "", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress, replicas: &v1.ReplicaStatus{Desired: 1}}},
			{"ready", `{state: Ready, conditions: [{type: WorkspaceSucceeded, status: "True", reason: Succeeded, message: "", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Running", ready: "True", replicas: &v1.ReplicaStatus{Desired: 1, Ready: 1, Available: 1}, endpoint: &v1.EndpointStatus{Service: "qwen3-0-6b", Port: 80}}},
			{"failed", `{state: Failed, conditions: [{type: WorkspaceSucceeded, status: "False", reason: Failed, message: "inference pod crashed", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed}},
		},
	}, {
		// KAITO 0.12's InferenceSet, as its controller writes its status
		// (pkg/inferenceset/inferenceset_controller.go at v0.12.0): the
		// desired count in status.replicas, InferenceSetReady.
		golden: "kaito-inferenceset", primaryKind: "InferenceSet", primary: "qwen", operator: "kaito-inferenceset-controller",
		steps: []step{
			{"not ready", `{replicas: 2, readyReplicas: 1, selector: inferenceset.kaito.sh/created-by=qwen, conditions: [{type: InferenceSetReady, status: "False", reason: inferencesetNotReady, message: "inferenceset is not ready, 1/2 replicas are ready", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress, replicas: &v1.ReplicaStatus{Desired: 2, Ready: 1, Available: 1}, messageHas: "1/2 replicas are ready"}},
			{"ready", `{replicas: 2, readyReplicas: 2, selector: inferenceset.kaito.sh/created-by=qwen, conditions: [{type: InferenceSetReady, status: "True", reason: inferencesetReady, message: "", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Running", ready: "True", replicas: &v1.ReplicaStatus{Desired: 2, Ready: 2, Available: 2}, endpoint: &v1.EndpointStatus{Service: "qwen", Port: 80}}},
			{"failed", `{replicas: 2, readyReplicas: 2, conditions: [{type: InferenceSetReady, status: "False", reason: inferencesetFailed, message: "failed to reconcile the gateway", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed, messageHas: "failed to reconcile the gateway"}},
		},
	}, {
		golden: "dynamo-vllm-aggregated-frontend", primaryKind: "DynamoGraphDeployment", primary: "qwen3-8b", operator: "dynamo-operator",
		steps: []step{
			{"initializing", `{state: initializing}`,
				want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress, endpoint: &v1.EndpointStatus{Service: "qwen3-8b-frontend", Port: 8000}}},
			{"successful", `{state: successful, services: {Frontend: {componentKind: Deployment, componentName: qwen3-8b-frontend, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1}, VllmDecodeWorker: {componentKind: Deployment, componentName: qwen3-8b-vllmdecodeworker, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2}}}`,
				want{phase: "Running", ready: "True", replicas: &v1.ReplicaStatus{Desired: 3, Ready: 3, Available: 3}}},
			{"failed", `{state: failed}`,
				want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed}},
		},
	}, {
		// Dynamo's intent mode: the request's phases as PR #428 translates
		// them, replicas from status.deploymentInfo, the graph's Frontend
		// (status.dgdName) once deployed.
		golden: "dynamo-intent", primaryKind: "DynamoGraphDeploymentRequest", primary: "qwen3-32b", operator: "dynamo-operator",
		steps: []step{
			{"profiling", `{phase: Profiling, conditions: [{type: Profiling, status: "True", reason: ProfilingRunning, message: "profiling job qwen3-32b-profiling is running", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress, messageHas: "profiling job qwen3-32b-profiling is running"}},
			{"deployed", `{phase: Deployed, dgdName: qwen3-32b, deploymentInfo: {replicas: 2, availableReplicas: 2}}`,
				want{phase: "Running", ready: "True", replicas: &v1.ReplicaStatus{Desired: 2, Ready: 2, Available: 2}, endpoint: &v1.EndpointStatus{Service: "qwen3-32b-frontend", Port: 8000}}},
			{"failed", `{phase: Failed, conditions: [{type: Profiling, status: "False", reason: ProfilingFailed, message: "no configuration meets the SLA", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed, messageHas: "no configuration meets the SLA"}},
		},
	}, {
		golden: "kuberay-aggregated-1-7", primaryKind: "RayService", primary: "qwen3-32b", operator: "kuberay-operator",
		steps: []step{
			{"not ready", `{conditions: [{type: Ready, status: "False", reason: Initializing, message: "waiting for the Serve applications", lastTransitionTime: "` + since + `"}]}`,
				want{phase: "Deploying", ready: "False", messageHas: "waiting for the Serve applications"}},
			{"running", rayServiceRunning,
				want{phase: "Running", ready: "True", replicas: &v1.ReplicaStatus{Desired: 1, Ready: 1, Available: 1}, endpoint: &v1.EndpointStatus{Service: "qwen3-32b-serve-svc", Port: 8000}}},
			{"deploy failed", `{conditions: [{type: Ready, status: "True", reason: NonZeroServeEndpoints, message: "", lastTransitionTime: "` + since + `"}], activeServiceStatus: {applicationStatuses: {llm: {status: DEPLOY_FAILED, message: "CUDA out of memory"}}}}`,
				want{phase: "Failed", ready: "False", reason: reporter.ReasonFailed, messageHas: "CUDA out of memory"}},
		},
	}}
	c := cluster(t)
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			ns, objs, md := c.model(t, "life", tc.golden)
			run(t, c.cfg, testOptions(ns))

			// The model is applied before its provider objects (Argo CD
			// sync waves can order it so): Pending, nothing to read yet.
			c.apply(t, md)
			s := c.waitFor(t, key(md), want{phase: "Pending", ready: "False", reason: reporter.ReasonNotFound})
			require.NotNil(t, s.Provider)
			require.Equal(t, tc.primaryKind, s.Provider.ResourceKind)
			require.Equal(t, tc.primary, s.Provider.ResourceName)
			require.Equal(t, md.GetAnnotations()["render.airunway.ai/provider"], s.Provider.Name)
			require.Equal(t, md.GetAnnotations()["render.airunway.ai/engine"], s.Engine.Type)
			requireConditions(t, md, s, map[string]string{"Ready": "False", "Reconciling": "True"})

			var rest []*unstructured.Unstructured
			for _, o := range objs {
				if o != md {
					rest = append(rest, o)
				}
			}
			c.apply(t, rest...)
			c.waitFor(t, key(md), want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress})

			var primary *unstructured.Unstructured
			for _, o := range pick(objs, tc.primaryKind) {
				if o.GetName() == tc.primary {
					primary = o
				}
			}
			require.NotNil(t, primary, "no %s %s in the rendered output", tc.primaryKind, tc.primary)
			for _, st := range tc.steps {
				c.setStatus(t, primary, tc.operator, st.status)
				s := c.waitFor(t, key(md), st.want)
				switch st.want.phase {
				case "Running":
					requireConditions(t, md, s, map[string]string{"Ready": "True"})
				case "Failed":
					requireConditions(t, md, s, map[string]string{"Ready": "False", "Stalled": "True"})
				default:
					requireConditions(t, md, s, map[string]string{"Ready": "False", "Reconciling": "True"})
				}
			}
		})
	}
}

// requireConditions checks the exact set of condition types and statuses,
// and that each carries the observed generation. HardwareCompatible is
// expected as the model's memory-fit annotation says: True when it fits,
// Unknown when not checked, absent without one.
func requireConditions(t *testing.T, md *unstructured.Unstructured, s v1.ModelDeploymentStatus, want map[string]string) {
	t.Helper()
	switch md.GetAnnotations()[hub.AnnotationHardwareFit] {
	case "":
	case "not-checked":
		want[reporter.ConditionHardwareCompatible] = "Unknown"
	default:
		want[reporter.ConditionHardwareCompatible] = "True"
	}
	got := map[string]string{}
	for _, c := range s.Conditions {
		got[c.Type] = string(c.Status)
		require.Equal(t, s.ObservedGeneration, c.ObservedGeneration, "condition %s", c.Type)
	}
	require.Equal(t, want, got)
}

// TestPendingDeployingRunningStale is the life of one rendered model: not
// applied yet, rolling out, running, then not ready while its operator
// stays silent, which the reporter reports as Ready=Unknown.
func TestPendingDeployingRunningStale(t *testing.T) {
	t.Parallel() // its own namespace and reporter: see cluster
	c := cluster(t)
	ns, objs, md := c.model(t, "stale", "vllm-minimal")
	deployment := pick(objs, "Deployment")[0]
	o := testOptions(ns)
	o.StaleAfter = 4 * time.Second
	rep, _ := run(t, c.cfg, o)

	c.apply(t, md)
	c.waitFor(t, key(md), want{phase: "Pending", ready: "False", reason: reporter.ReasonNotFound})
	c.apply(t, objs...)
	c.waitFor(t, key(md), want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress})
	c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
	// Running does not go stale: nothing to wait for when all is well,
	// past the time a not-ready model would have turned stale.
	require.Eventually(t, func() bool { return rep.Writes() == 3 }, hangBound, 50*time.Millisecond, "Pending, Deploying, Running: three writes")
	require.Never(t, func() bool { return rep.Writes() != 3 }, o.StaleAfter+time.Second, 100*time.Millisecond, "a running model changed status while nothing happened")

	// A pod is lost; the controller says so once and then falls silent.
	c.setStatus(t, deployment, "kube-controller-manager", `{replicas: 1, readyReplicas: 0, availableReplicas: 0, conditions: [{type: Available, status: "False", reason: MinimumReplicasUnavailable}, {type: Progressing, status: "True", reason: ReplicaSetUpdated}]}`)
	c.waitFor(t, key(md), want{phase: "Deploying", ready: "False", reason: reporter.ReasonInProgress})
	// Not stale before StaleAfter has passed since the operator's write
	// (as the API server stamped it, to the second), less a second for a
	// poll of the status to answer. A loaded machine may be past that
	// already: then there is nothing left to check.
	staleFrom := lastWrite(t, c, deployment).Add(o.StaleAfter)
	if early := time.Until(staleFrom.Add(-time.Second)); early > 0 {
		require.Never(t, func() bool {
			s, live, err := c.readModelStatus(key(md))
			return err == nil && want{reason: reporter.ReasonStale}.matches(s, live.GetGeneration())
		}, early, 100*time.Millisecond, "stale too early")
	}
	s := c.waitFor(t, key(md), want{ready: "Unknown", reason: reporter.ReasonStale, messageHas: "has not updated it since"})
	requireConditions(t, md, s, map[string]string{"Ready": "Unknown", "Reconciling": "True"})

	// The operator speaks again: the status is trusted again.
	c.setStatus(t, deployment, "kube-controller-manager", deploymentAvailable)
	c.waitFor(t, key(md), want{phase: "Running", ready: "True"})
}

// lastWrite is when anyone last wrote obj, as the API server stamped it
// in its managed fields: what the reporter counts StaleAfter from.
func lastWrite(t *testing.T, c *controlPlane, obj *unstructured.Unstructured) time.Time {
	t.Helper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	require.NoError(t, c.admin.Get(context.Background(), key(obj), live))
	last := live.GetCreationTimestamp().Time
	for _, f := range live.GetManagedFields() {
		if f.Time != nil && f.Time.After(last) {
			last = f.Time.Time
		}
	}
	return last
}

// TestGatewayStatus: with the gateway objects rendered, the status says
// which model name the route matches, in which API formats (a field of
// upstream main's CRD the API server keeps), and the Gateway's address;
// HardwareCompatible carries the renderer's memory fit.
func TestGatewayStatus(t *testing.T) {
	c := cluster(t)
	ns, objs, md := c.model(t, "gw", "gateway-vllm-v1")
	route := pick(objs, "HTTPRoute")[0]
	parents, _, _ := unstructured.NestedSlice(route.Object, "spec", "parentRefs")
	require.Len(t, parents, 1)
	parent := parents[0].(map[string]any)
	gwName, gwNS := parent["name"].(string), parent["namespace"].(string)
	require.NotEmpty(t, gwNS, "the golden route names its Gateway's namespace")
	// The route's parent namespace is shared by tests; make it once.
	ensureNamespace(t, c, gwNS)
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": gwName, "namespace": gwNS},
		"spec": map[string]any{"gatewayClassName": "istio", "listeners": []any{
			map[string]any{"name": "http", "port": int64(80), "protocol": "HTTP"}}},
	}}
	c.apply(t, gw)
	run(t, c.cfg, testOptions(ns))
	c.apply(t, objs...)
	modelName := "Qwen/Qwen3-0.6B"
	formats := []string{hub.APIFormatOpenAIChat, hub.APIFormatOpenAIResponses, hub.APIFormatAnthropicMessages}
	c.waitFor(t, key(md), want{phase: "Deploying", gateway: &v1.GatewayStatus{ModelName: modelName, GatewayNamespace: gwNS, APIFormats: formats},
		hardware: "True/" + reporter.ReasonMemoryFits})
	c.setStatus(t, gw, "istio", `{addresses: [{type: IPAddress, value: 203.0.113.7}, {type: Hostname, value: gateway.example.com}]}`)
	c.waitFor(t, key(md), want{gateway: &v1.GatewayStatus{ModelName: modelName, GatewayNamespace: gwNS, Endpoint: "203.0.113.7", APIFormats: formats}})
}

func ensureNamespace(t *testing.T, c *controlPlane, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	c.apply(t, ns)
}
