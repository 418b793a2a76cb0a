package dynamo

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/providers"
)

// PodGroups implements providers.PodCounter for a DynamoGraphDeployment,
// one group per service, as the operator (deploy/operator, 1.1 line)
// makes them:
//
//   - a single-node service is a Deployment of `replicas` pods; one with
//     `multinode.nodeCount` N is one LeaderWorkerSet per replica, a leader
//     and N-1 workers (dynamocomponentdeployment_controller.go);
//   - every pod of a service gets the service's `resources`, `gpu` under
//     `gpuType` (default nvidia.com/gpu) — per pod, so per node for a
//     multinode service (docs/kubernetes/deployment/multinode-deployment.md
//     "GPU Distribution"); on a DRA pool its `resources.claims` and the pod
//     claims of `extraPodSpec.resourceClaims` instead, again per pod;
//   - a rolling update brings up ceil(25% × replicas) more pods of a
//     single-node service and may take floor(25% × replicas) old ones
//     down first (the operator's managed rolling update, its defaults);
//     none for a multinode service (LeaderWorkerSet's default maxSurge 0).
//
// Multinode pods are gang-scheduled by Volcano, not kube-scheduler; they
// still take the nodes counted here.
func (Provider) PodGroups(obj *unstructured.Unstructured) ([]providers.PodGroup, bool, error) {
	if obj.GetAPIVersion() == RequestAPIVersion && obj.GetKind() == RequestKind {
		budget := "no GPU budget (`hardware.totalGpus`)"
		if n, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "hardware", "totalGpus"); ok {
			budget = fmt.Sprintf("a budget of %d GPUs (`hardware.totalGpus`)", n)
		}
		return []providers.PodGroup{{Note: "not counted: Dynamo's profiler chooses the graph and its GPUs at run time, within " + budget + ", and places its pods itself"}}, true, nil
	}
	if obj.GetAPIVersion() != APIVersion || obj.GetKind() != Kind {
		return nil, false, nil
	}
	services, _, err := unstructured.NestedMap(obj.Object, "spec", "services")
	if err != nil {
		return nil, true, fmt.Errorf("`spec.services`: %w", err)
	}
	var out []providers.PodGroup
	for _, name := range slices.Sorted(maps.Keys(services)) {
		svc, ok := services[name].(map[string]any)
		if !ok {
			return nil, true, fmt.Errorf("`spec.services.%s` must be an object", name)
		}
		g, err := serviceGroup(name, svc)
		if err != nil {
			return nil, true, err
		}
		out = append(out, g)
	}
	return out, true, nil
}

func serviceGroup(name string, svc map[string]any) (providers.PodGroup, error) {
	var spec corev1.PodSpec
	if extra, ok, _ := unstructured.NestedMap(svc, "extraPodSpec"); ok {
		delete(extra, "mainContainer")
		// The converter parses quantities unbounded: check them first.
		if err := hub.CheckQuantities(extra, &spec, "spec.services."+name+".extraPodSpec"); err != nil {
			return providers.PodGroup{}, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(extra, &spec); err != nil {
			return providers.PodGroup{}, fmt.Errorf("`spec.services.%s.extraPodSpec`: %w", name, err)
		}
	}
	req, err := serviceResources(name, svc)
	if err != nil {
		return providers.PodGroup{}, err
	}
	spec.Containers = []corev1.Container{{Name: "main", Resources: req}}
	g := providers.PodGroup{Component: name, Spec: spec}
	replicas := providers.ReplicaCount(svc, "replicas")
	nodes := int32(1)
	if _, ok := svc["multinode"]; ok {
		nodes = max(1, providers.ReplicaCount(svc, "multinode", "nodeCount"))
	}
	g.Pods = replicas * nodes
	if nodes == 1 {
		// ceil(25%): the operator's own worker rollout and the
		// Deployments of the other services surge alike.
		g.Surge = (replicas + 3) / 4
		// and take down floor(25%) old pods first: the defaults of the
		// operator's managed rolling update (docs/pages/kubernetes/
		// rolling-update.md, "Configuring maxSurge and maxUnavailable").
		g.Unavailable = replicas / 4
	}
	return g, nil
}

// serviceResources turns a service's `resources` (cpu, memory, gpu and
// gpuType under requests and limits) into a container's.
func serviceResources(name string, svc map[string]any) (corev1.ResourceRequirements, error) {
	var out corev1.ResourceRequirements
	for _, part := range []string{"requests", "limits"} {
		raw, ok, err := unstructured.NestedMap(svc, "resources", part)
		if err != nil {
			return out, fmt.Errorf("`spec.services.%s.resources.%s`: %w", name, part, err)
		}
		if !ok {
			continue
		}
		m := map[string]string{}
		for k, v := range raw {
			switch v.(type) {
			case string, int64, float64: // `gpu: 2` as the API server takes it
				m[k] = fmt.Sprint(v)
			}
		}
		list := corev1.ResourceList{}
		for key, field := range map[string]string{"cpu": "cpu", "memory": "memory", "gpu": gpuResourceName(m["gpuType"])} {
			if m[key] == "" {
				continue
			}
			q, err := hub.ParseQuantity(m[key])
			if err != nil {
				return out, fmt.Errorf("`spec.services.%s.resources.%s.%s`: %w", name, part, key, err)
			}
			list[corev1.ResourceName(field)] = q
		}
		if part == "requests" {
			out.Requests = list
		} else {
			out.Limits = list
		}
	}
	// The main container's resource claims (DRA): the operator appends
	// them to the container, and the pod's claims come in extraPodSpec.
	claims, _, err := unstructured.NestedSlice(svc, "resources", "claims")
	if err != nil {
		return out, fmt.Errorf("`spec.services.%s.resources.claims`: %w", name, err)
	}
	for i, raw := range claims {
		c, ok := raw.(map[string]any)
		if !ok {
			return out, fmt.Errorf("`spec.services.%s.resources.claims[%d]` must be an object", name, i)
		}
		claim, _ := c["name"].(string)
		request, _ := c["request"].(string)
		out.Claims = append(out.Claims, corev1.ResourceClaim{Name: claim, Request: request})
	}
	return out, nil
}

func gpuResourceName(gpuType string) string {
	if gpuType == "" {
		return hub.DefaultGPUResource
	}
	return gpuType
}
