package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airunway-render/airunway-render/api/hub"
)

// DeviceRequest is how a pod of a pool whose GPUs are Dynamic Resource
// Allocation devices asks for them: the pool's DeviceClass and CEL
// selectors (capability file `gpu.deviceClassName`, `gpu.selectors`).
type DeviceRequest struct {
	DeviceClassName string
	Selectors       []string
}

// GPUClaim names both the pod's resource claim and the one device request
// of its template: a pod has one claim for all its GPUs.
const GPUClaim = "gpu"

// claimTemplateSuffix ends the name of a pod owner's ResourceClaimTemplate.
const claimTemplateSuffix = "-gpu"

func deviceRequest(pool *hub.NodePool) *DeviceRequest {
	if !pool.ClaimsDevices() {
		return nil
	}
	return &DeviceRequest{DeviceClassName: pool.GPU.DeviceClassName, Selectors: slices.Clone(pool.GPU.Selectors)}
}

// ClaimTemplateName is the name of the ResourceClaimTemplate the pods of
// owner (a Deployment, a worker group, a service) claim count devices of d
// from: `<owner>-gpu-<8 hex digits of what it requests>`. The API server
// refuses every change to a template's spec (ValidateResourceClaimTemplateUpdate
// in kubernetes 1.37, pkg/apis/resource/validation), so a changed claim
// (another GPU count, another selector) must be a new template: its new
// name changes the pod template, which rolls out, and GitOps prunes the
// old template, where an in-place update would fail every sync.
func ClaimTemplateName(owner string, d *DeviceRequest, count int32) string {
	// JSON keeps the parts apart whatever the selectors contain.
	spec, _ := json.Marshal(struct {
		Class     string
		Count     int32
		Selectors []string
	}{d.DeviceClassName, count, d.Selectors})
	sum := sha256.Sum256(spec)
	return DerivedName(owner, claimTemplateSuffix+"-"+hex.EncodeToString(sum[:4]))
}

// ClaimGPUs turns the GPUs a container asks for as the pool's extended
// resource into a claim on the pool's devices when the pool is a DRA
// pool: the extended resource leaves the container's requests and limits
// (a DRA cluster has none to give), the pod gets a resource claim from
// the template ClaimTemplateName names, and the container uses it. It
// returns how many GPUs the template must allocate, 0 when nothing
// changed (not a DRA pool, or a container without GPUs).
func (pp *PoolPlacement) ClaimGPUs(spec *corev1.PodSpec, container int, owner string) int32 {
	if pp == nil || pp.Devices == nil || container < 0 || container >= len(spec.Containers) {
		return 0
	}
	c := &spec.Containers[container]
	count := pp.ClaimedGPUs(c)
	if count == 0 {
		return 0
	}
	name := corev1.ResourceName(pp.GPUResource)
	delete(c.Resources.Limits, name)
	delete(c.Resources.Requests, name)
	if len(c.Resources.Limits) == 0 {
		c.Resources.Limits = nil
	}
	if len(c.Resources.Requests) == 0 {
		c.Resources.Requests = nil
	}
	c.Resources.Claims = append(c.Resources.Claims, corev1.ResourceClaim{Name: GPUClaim})
	template := ClaimTemplateName(owner, pp.Devices, count)
	spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: GPUClaim, ResourceClaimTemplateName: &template})
	return count
}

// ClaimedGPUs is how many GPUs ClaimGPUs would move from a container into
// a claim: its limit (else request) of the pool's GPU resource on a DRA
// pool, 0 otherwise.
func (pp *PoolPlacement) ClaimedGPUs(c *corev1.Container) int32 {
	if pp == nil || pp.Devices == nil {
		return 0
	}
	name := corev1.ResourceName(pp.GPUResource)
	q, ok := c.Resources.Limits[name]
	if !ok {
		q, ok = c.Resources.Requests[name]
	}
	if !ok || q.Value() <= 0 {
		return 0
	}
	return int32(q.Value())
}

// ClaimTemplate renders the ResourceClaimTemplate the pods of owner claim
// count GPUs from: one request of exactly count devices of the pool's
// DeviceClass, each satisfying every selector. Each pod gets its own
// ResourceClaim from it (kube-controller-manager's resource-claim
// controller), so no two pods share a device.
func ClaimTemplate(req *Request, owner string, d *DeviceRequest, count int32) (Object, error) {
	md := req.MD
	var selectors []resourcev1.DeviceSelector
	for _, expr := range d.Selectors {
		selectors = append(selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: expr}})
	}
	t := &resourcev1.ResourceClaimTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        ClaimTemplateName(owner, d, count),
			Namespace:   md.Namespace,
			Labels:      BaseLabels(md, req.Engine),
			Annotations: GeneratedAnnotations(md, nil),
		},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{
				Name: GPUClaim,
				Exactly: &resourcev1.ExactDeviceRequest{
					DeviceClassName: d.DeviceClassName,
					AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
					Count:           int64(count),
					Selectors:       selectors,
				},
			}},
		}}},
	}
	return FromTyped(t)
}
