package kaito

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// GPUs on a Dynamic Resource Allocation pool (capability file
// `gpu.deviceClassName`): nodes that offer no nvidia.com/gpu extended
// resource, only devices of a DeviceClass that pods claim.
//
// Presets: KAITO creates the model pods itself and gives them
// `nvidia.com/gpu` requests and limits (pkg/workspace/inference/
// preset_inferences.go, v0.6.2 to v0.12.0, and on main in August 2026;
// no release reads resource claims: a draft proposal,
// docs/proposals/20260709-byo-nodes-mig-support.md, names DRA as the
// long-term replacement only). Such pods would stay Pending, so a preset
// on a DRA pool is refused.
//
// llama.cpp templates: KAITO copies the pod template whole into its
// Deployment (0.6, 0.7) or StatefulSet (0.8 on), resource claims included
// (GenerateManifestWithPodTemplate, pkg/workspace/manifests/manifests.go),
// and the Workspace CRD keeps the template as it is
// (x-kubernetes-preserve-unknown-fields). Where KAITO provisions the
// nodes itself, it waits for their nvidia.com/gpu capacity before it
// creates the pods (checkNodePlugin, pkg/workspace/resource/node.go at
// v0.12.0): nodes of a DRA pool never offer it. So the template claims its
// GPUs on label-selected nodes (KAITO 0.8 and later, without node
// auto-provisioning), and is refused otherwise: KAITO before 0.8 provisions
// nodes of its instance type unless `preferredNodes` names them.

// checkDevices refuses what KAITO cannot run on a DRA pool.
func checkDevices(req *providers.Request, rel release, l *diag.List) {
	s := &req.MD.Spec
	placed := req.Placement.For(providers.ComponentMain)
	if placed.Devices == nil || s.GPUCount() <= 0 {
		return
	}
	switch {
	case req.Engine != hub.EngineLlamaCpp:
		l.Errorf("spec.resources.gpu.count", "cannot be served on node pool %q, which claims its GPUs as DRA devices (DeviceClass %q): %s creates the model pods of a preset itself and requests %s for them, which the pool's nodes do not offer, so the pods would stay Pending; use a provider that writes its own pods' resource claims (docs/placement.md#gpus-as-dra-devices), a pool without `deviceClassName`, or, where the DeviceClass serves %[4]s as an extended resource (Kubernetes 1.36 and later), say so with `gpu.extendedResource: true`", placed.Pool, placed.Devices.DeviceClassName, rel, PresetGPUResource)
	case !rel.labelBYO:
		l.Errorf("spec.resources.gpu.count", "cannot be served on node pool %q, which claims its GPUs as DRA devices (DeviceClass %q): %s runs the llama.cpp template on nodes it provisions for the Workspace's instance type, and waits for their %s capacity, which nodes of a DRA pool never offer; declare KAITO 0.8 or later, which selects existing nodes by label, or use another provider or a pool without `deviceClassName`", placed.Pool, placed.Devices.DeviceClassName, rel, PresetGPUResource)
	case req.Provider != nil && req.Provider.NodeAutoProvisioning != nil:
		l.Errorf("spec.resources.gpu.count", "cannot be served on node pool %q, which claims its GPUs as DRA devices (DeviceClass %q): with node auto-provisioning (the capability file's `nodeAutoProvisioning`), %s waits for the %s capacity of the nodes it provisions before it creates the pods, which nodes of a DRA pool never offer; run the model on existing nodes (no `nodeAutoProvisioning`), or use another provider or a pool without `deviceClassName`", placed.Pool, placed.Devices.DeviceClassName, rel, PresetGPUResource)
	}
}

// claimTemplate moves the llama.cpp container's GPUs into a claim when its
// pool is a DRA pool, and returns the ResourceClaimTemplate, nil otherwise.
func claimTemplate(req *providers.Request, ws *workspace) (providers.Object, error) {
	t := ws.Inference.Template
	if t == nil {
		return nil, nil
	}
	placed := req.Placement.For(providers.ComponentMain)
	n := placed.ClaimGPUs(&t.Spec, 0, req.MD.Name)
	if n == 0 {
		return nil, nil
	}
	return providers.ClaimTemplate(req, req.MD.Name, placed.Devices, n)
}
