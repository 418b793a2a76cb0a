package dynamo

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// GPUs on a Dynamic Resource Allocation pool. A worker's pods claim them
// through Dynamo's own fields, which every supported release passes to
// the pods (read at the main branch's 1.1 to 1.4 branch points, the
// mirror having no tags):
//
//   - `resources.claims`: GenerateBasePodSpec (deploy/operator/internal/
//     dynamo/graph.go) appends the Resources' claims to the main
//     container (GetResourcesConfig, internal/controller_common/
//     resource.go) in 1.1; from 1.2 the operator works on v1beta1, and the
//     conversion puts them into the main container of `podTemplate`
//     (resourcesToNative, api/v1alpha1/shared_spec_conversion.go);
//   - `extraPodSpec.resourceClaims`: the extra PodSpec is merged into the
//     pod's (mergo, graph.go) in 1.1, and copied whole into
//     `podTemplate.spec` by the conversion from 1.2.
//
// Without `resources.limits.gpu` the operator requests no extended
// resource, which is the point; a single-node worker needs it for nothing
// else (the vLLM, SGLang and TensorRT-LLM backends read it only to launch
// a worker across nodes). The operator's own GPU Memory Service templates
// are named `<graph>-<service>-gpu` and deleted for every service without
// it (reconcileGMSResourceClaimTemplates): ours carry a hash after `-gpu`
// (providers.ClaimTemplateName), so the two never meet.

// claimsAcrossNodesSince is, per engine, the first release that can run
// a worker spread over several nodes whose GPUs are claimed. vLLM and
// TensorRT-LLM: "support vLLM multinode with GPU DRA" (ai-dynamo/dynamo
// #12166, before the 1.4 branch point) resolves the main container's
// count through its ResourceClaimTemplate (ResolveGPUCount,
// deploy/operator/internal/dra/dra.go); before it the multinode launchers
// size themselves from `resources.limits.gpu` only: vLLM starts Ray or its
// multiprocessing backend across the nodes only when tensor × pipeline
// parallel exceeds it (needsTensorParallelMultinodeLaunch, backend_vllm.go),
// and TensorRT-LLM runs `mpirun -n nodes × gpu` (backend_trtllm.go).
// SGLang's launcher never reads the count, but until "remove lws worker gpu
// pre-validation" (#11115, before the 1.3 branch point) the
// LeaderWorkerSet path refused a worker without `resources.limits.gpu`
// ("GPU limit is not set for LWS worker pod"), and the renderer cannot
// tell whether the cluster runs that path or Grove's.
var claimsAcrossNodesSince = map[string]*version.Version{
	hub.EngineVLLM:   hub.MustParseRelease("1.4.0"),
	hub.EngineTRTLLM: hub.MustParseRelease("1.4.0"),
	hub.EngineSGLang: hub.MustParseRelease("1.3.0"),
}

// multinodeSizing says why a release cannot run a claiming multinode
// worker of an engine.
var multinodeSizing = map[string]string{
	hub.EngineVLLM:   "sizes a vLLM worker across nodes from `resources.limits.gpu` alone (it starts Ray across the nodes only when the parallel size exceeds it)",
	hub.EngineTRTLLM: "sizes a TensorRT-LLM worker across nodes from `resources.limits.gpu` alone (`mpirun -n <nodes × gpu>`)",
	hub.EngineSGLang: "refuses a multinode worker without `resources.limits.gpu` on its LeaderWorkerSet path",
}

// workerClaim is a worker service whose pods claim count devices.
type workerClaim struct {
	owner   string
	devices *providers.DeviceRequest
	count   int32
}

// claimOwner names a worker's ResourceClaimTemplate after the graph and
// the service.
func claimOwner(md *hub.ModelDeployment, role string) string {
	service := map[string]string{
		providers.ComponentMain:    ServiceWorker,
		providers.ComponentPrefill: ServicePrefillWorker,
		providers.ComponentDecode:  ServiceDecodeWorker,
	}[role]
	return md.Name + "-" + strings.ToLower(service)
}

// claimGPUs moves a worker's GPUs from Dynamo's `gpu` count (which the
// operator turns into the extended resource) to a claim when its pool is
// a DRA pool: `resources.claims` for the main container, the pod's claim
// in `extraPodSpec.resourceClaims`. Every pod of the service, each node of
// a multinode one, gets its own claim of the service's GPUs.
func (r *renderer) claimGPUs(role string, w *service) {
	placed := r.req.Placement.For(role)
	if placed.Devices == nil || w.Resources == nil {
		return
	}
	count := serviceGPUs(w.Resources)
	if count <= 0 {
		return
	}
	for _, item := range []**resourceItem{&w.Resources.Limits, &w.Resources.Requests} {
		if *item == nil {
			continue
		}
		(*item).GPU, (*item).GPUType = "", ""
		if (*item).empty() {
			*item = nil
		}
	}
	owner := claimOwner(r.md, role)
	name := providers.ClaimTemplateName(owner, placed.Devices, count)
	w.Resources.Claims = []corev1.ResourceClaim{{Name: providers.GPUClaim}}
	w.ExtraPodSpec.ResourceClaims = append(w.ExtraPodSpec.ResourceClaims, corev1.PodResourceClaim{Name: providers.GPUClaim, ResourceClaimTemplateName: &name})
	r.claims = append(r.claims, workerClaim{owner: owner, devices: placed.Devices, count: count})
}

// serviceGPUs is the `gpu` count of a service's limits, else requests.
func serviceGPUs(res *resources) int32 {
	for _, item := range []*resourceItem{res.Limits, res.Requests} {
		if item == nil || item.GPU == "" {
			continue
		}
		if n, err := strconv.ParseInt(item.GPU, 10, 32); err == nil {
			return int32(n)
		}
	}
	return 0
}

// checkMultinodeClaims refuses a worker spread over several nodes of a DRA
// pool where the declared release cannot run it with claimed GPUs.
func checkMultinodeClaims(req *providers.Request, l *diag.List) {
	md := req.MD
	since, known := claimsAcrossNodesSince[req.Engine]
	if hub.IsMocker(md) || !known {
		return
	}
	v, err := hub.ParseRelease(req.Provider.Version)
	if err != nil || v.AtLeast(since) {
		return
	}
	for _, w := range workerServices(md) {
		nodes := (Provider{}).NodesPerPod(md, w.component)
		placed := req.Placement.For(w.component)
		if nodes <= 1 || placed.Devices == nil || replicaGPUs(md, req.Engine, w.component).GPUs <= 0 {
			continue
		}
		l.Errorf("spec.provider.overrides.spec.services."+w.service+".multinode.nodeCount", "is %d, on node pool %q, which claims its GPUs as DRA devices (DeviceClass %q): Dynamo %s %s, which a worker claiming its GPUs does not have, so its pods would not serve together; Dynamo %s runs it: declare that release or later, run the worker on one node, or use a pool without `deviceClassName`", nodes, placed.Pool, placed.Devices.DeviceClassName, v, multinodeSizing[req.Engine], since)
	}
}
