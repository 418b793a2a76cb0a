package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/airunway-render/airunway-render/api/hub"
)

// A pod on a pool whose GPUs are Dynamic Resource Allocation devices
// (`gpu.deviceClassName`) requests no extended resource: it names a
// ResourceClaimTemplate in `spec.resourceClaims`, and the resource-claim
// controller makes it a ResourceClaim of its own, whose devices the
// scheduler allocates on the node it picks. The plan counts those devices
// as the pod's GPUs, from the template rendered beside the pod, against
// the pool whose DeviceClass they are of; what it cannot count (a template
// that is not among the objects, a shared ResourceClaim) leaves the pod
// unplaced with the reason, so that a plan never counts a pod that claims
// GPUs as one that takes none.

// claimed is what a pod's resource claims ask of one DeviceClass.
type claimed struct {
	class string
	// count devices with allocationMode ExactCount.
	count int64
	// all: a request with allocationMode All, every matching device of
	// the node the pod lands on; a GPU pool's are its `gpu.perNode`.
	all bool
	// claim is the first of the pod's claims that asks for the class,
	// for messages.
	claim string
}

// deviceRequest is one request of a ResourceClaimTemplate, as the plan
// counts it.
type deviceRequest struct {
	name  string
	class string
	count int64
	all   bool
	// firstAvailable: the request's alternatives; the plan counts the
	// first, the scheduler's preference.
	firstAvailable int
	// adminAccess: the devices stay allocatable to other pods.
	adminAccess bool
}

// templateRequests reads a template's device requests: resource.k8s.io/v1
// and v1beta2 (`exactly`, `firstAvailable`), and v1beta1, whose requests
// carry the fields of `exactly` themselves.
func templateRequests(obj *unstructured.Unstructured) ([]deviceRequest, error) {
	raw, _, err := unstructured.NestedSlice(obj.Object, "spec", "spec", "devices", "requests")
	if err != nil {
		return nil, fmt.Errorf("`spec.spec.devices.requests` must be a list: %w", err)
	}
	var out []deviceRequest
	for i, r := range raw {
		field := fmt.Sprintf("spec.spec.devices.requests[%d]", i)
		req, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("`%s` must be an object", field)
		}
		name, _ := req["name"].(string)
		var d deviceRequest
		switch {
		case req["exactly"] != nil:
			exactly, ok := req["exactly"].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("`%s.exactly` must be an object", field)
			}
			if d, err = deviceCount(exactly, field+".exactly"); err != nil {
				return nil, err
			}
		case req["firstAvailable"] != nil:
			subs, ok := req["firstAvailable"].([]any)
			if !ok || len(subs) == 0 {
				return nil, fmt.Errorf("`%s.firstAvailable` must be a list of at least one subrequest", field)
			}
			first, ok := subs[0].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("`%s.firstAvailable[0]` must be an object", field)
			}
			if d, err = deviceCount(first, field+".firstAvailable[0]"); err != nil {
				return nil, err
			}
			d.firstAvailable = len(subs)
		default: // v1beta1
			if d, err = deviceCount(req, field); err != nil {
				return nil, err
			}
		}
		d.name = name
		out = append(out, d)
	}
	return out, nil
}

// deviceCount reads a request's (or subrequest's) class, allocation mode
// and count, with the API server's defaults: ExactCount, one device.
func deviceCount(m map[string]any, field string) (deviceRequest, error) {
	d := deviceRequest{count: 1}
	d.class, _ = m["deviceClassName"].(string)
	if d.class == "" {
		return d, fmt.Errorf("`%s.deviceClassName` must name a DeviceClass", field)
	}
	d.adminAccess, _ = m["adminAccess"].(bool)
	mode, _ := m["allocationMode"].(string)
	switch mode {
	case "", "ExactCount":
	case "All":
		d.all, d.count = true, 0
		return d, nil
	default:
		// The API: clients must refuse to handle requests with unknown
		// modes.
		return d, fmt.Errorf("`%s.allocationMode` must be \"ExactCount\" or \"All\", got %q", field, mode)
	}
	switch c := m["count"].(type) {
	case nil:
	case int64:
		d.count = c
	case float64:
		if c != float64(int64(c)) {
			return d, fmt.Errorf("`%s.count` must be a whole number of devices, got %v", field, c)
		}
		d.count = int64(c)
	default:
		return d, fmt.Errorf("`%s.count` must be a number of devices, got %v", field, c)
	}
	// The API server's bound: a claim allocates at most 32 devices.
	if d.count < 1 || d.count > resourcev1.AllocationResultsMaxSize {
		return d, fmt.Errorf("`%s.count` must be between 1 and %d, got %d", field, resourcev1.AllocationResultsMaxSize, d.count)
	}
	return d, nil
}

// podClaims resolves a pod's resource claims to what they ask of each
// DeviceClass. unplaced is why the plan cannot count them (a template
// not among the items, a shared claim), "" when it can; notes say what it
// assumed (allocationMode All, firstAvailable, admin access). what and
// model name the pods in the notes.
func podClaims(spec *corev1.PodSpec, namespace string, templates map[types.NamespacedName]*unstructured.Unstructured, what, model string) (devices []claimed, notes []string, unplaced string, err error) {
	var cannot []string
	for _, c := range spec.ResourceClaims {
		switch {
		case c.ResourceClaimName != nil:
			cannot = append(cannot, fmt.Sprintf("its resource claim %q is the shared ResourceClaim %q (`resourceClaimName`): its devices are allocated once, outside the objects planned, to every pod that names it, so the plan cannot count them; claim GPUs from a ResourceClaimTemplate (`resourceClaimTemplateName`), one claim per pod, as the renderer does", c.Name, *c.ResourceClaimName))
			continue
		case c.ResourceClaimTemplateName == nil:
			return nil, nil, "", fmt.Errorf("the pod's resource claim %q must name a `resourceClaimTemplateName` or a `resourceClaimName`", c.Name)
		}
		name := *c.ResourceClaimTemplateName
		t := templates[types.NamespacedName{Namespace: namespace, Name: name}]
		if t == nil {
			cannot = append(cannot, fmt.Sprintf("its resource claim %q names ResourceClaimTemplate %q, which is not among the objects planned in namespace %q, so the plan cannot count the devices it claims; add the template to the inputs", c.Name, name, namespace))
			continue
		}
		reqs, err := templateRequests(t)
		if err != nil {
			return nil, nil, "", fmt.Errorf("ResourceClaimTemplate %q in namespace %q, of the pod's resource claim %q: %w", name, namespace, c.Name, err)
		}
		for _, r := range reqs {
			source := fmt.Sprintf("%s (model %q): resource claim %q, request %q of ResourceClaimTemplate %q", what, model, c.Name, r.name, name)
			if r.adminAccess {
				notes = append(notes, source+" asks for admin access (`adminAccess`): the devices stay allocatable to other pods, so the plan does not count them")
				continue
			}
			if r.firstAvailable > 1 {
				notes = append(notes, fmt.Sprintf("%s takes the first of its %d `firstAvailable` alternatives that the node has; the plan counts the first, %s of DeviceClass %q", source, r.firstAvailable, devicesOf(r), r.class))
			}
			if r.all {
				notes = append(notes, fmt.Sprintf("%s allocates every device of DeviceClass %q on its node (`allocationMode: All`): the plan counts the GPUs of a node of its pool (`gpu.perNode`)", source, r.class))
			}
			devices = addClaimed(devices, claimed{class: r.class, count: r.count, all: r.all, claim: c.Name})
		}
	}
	return devices, notes, strings.Join(cannot, "; "), nil
}

func devicesOf(r deviceRequest) string {
	switch {
	case r.all:
		return "every device"
	case r.count == 1:
		return "1 device"
	}
	return fmt.Sprintf("%d devices", r.count)
}

// addClaimed adds one request's devices to the pod's, per class, in the
// order of the classes' names.
func addClaimed(list []claimed, c claimed) []claimed {
	i, found := slices.BinarySearchFunc(list, c.class, func(e claimed, class string) int { return cmp.Compare(e.class, class) })
	if !found {
		return slices.Insert(list, i, c)
	}
	list[i].count += c.count
	list[i].all = list[i].all || c.all
	return list
}

// claimedGPUs is what one pod of the group claims of the pool's devices:
// its DeviceClass's count, every GPU of the node for allocationMode All.
func (s shape) claimedGPUs(g Group) int64 {
	if s.deviceClass == "" {
		return 0
	}
	for _, c := range g.devices {
		if c.class != s.deviceClass {
			continue
		}
		if c.all {
			return s.gpus
		}
		return c.count
	}
	return 0
}

// undeclaredClass is the first DeviceClass the group's pods claim that
// the pool's nodes do not offer (ok false: none).
func undeclaredClass(g Group, np *hub.NodePool) (c claimed, ok bool) {
	for _, c := range g.devices {
		if !np.ClaimsDevices() || np.GPU.DeviceClassName != c.class {
			return c, true
		}
	}
	return claimed{}, false
}

// undeclaredReason is the reason a group whose pods select a pool that
// lacks their DeviceClass stays unplaced.
func undeclaredReason(np *hub.NodePool, c claimed, pools []hub.NodePool) string {
	has := "its GPUs are not DRA devices (no `gpu.deviceClassName`)"
	switch {
	case np.GPU == nil:
		has = "it has no GPUs"
	case np.ClaimsDevices():
		has = fmt.Sprintf("its `gpu.deviceClassName` is %q", np.GPU.DeviceClassName)
	}
	declared := "no pool declares it"
	var by []string
	for i := range pools {
		if pools[i].ClaimsDevices() && pools[i].GPU.DeviceClassName == c.class {
			by = append(by, fmt.Sprintf("%q", pools[i].Name))
		}
	}
	if len(by) > 0 {
		declared = "pool " + strings.Join(by, " and ") + " declares it"
	}
	return fmt.Sprintf("it selects pool %q but its resource claim %q claims devices of DeviceClass %q, which the pool does not offer (%s; %s)", np.Name, c.claim, c.class, has, declared)
}

// extendedOnDRA says why the group's pods never schedule on a DRA pool
// although they select it: the pool's nodes have no GPU extended resource
// (NVIDIA's DRA driver replaces the device plugin, and the twin's Nodes
// have none either), so a pod that requests one, or a KAITO preset's pod,
// which KAITO gives its node's GPUs as nvidia.com/gpu, stays Pending.
// "" when they may schedule.
func extendedOnDRA(g Group, np *hub.NodePool, gpus []corev1.ResourceName) string {
	if !np.ClaimsDevices() {
		return ""
	}
	for _, r := range slices.Sorted(maps.Keys(g.requests)) {
		if q := g.requests[r]; isGPU(r, gpus) && q.Value() > 0 {
			return fmt.Sprintf("requests %s %s, which the nodes of pool %q do not have: their GPUs are DRA devices of DeviceClass %q, claimed through a ResourceClaimTemplate", q.String(), r, np.Name, np.GPU.DeviceClassName)
		}
	}
	if g.whole {
		return fmt.Sprintf("is a KAITO preset's pod, which KAITO gives its node's GPUs as the extended resource %s, and the nodes of pool %q have none: their GPUs are DRA devices of DeviceClass %q", hub.DefaultGPUResource, np.Name, np.GPU.DeviceClassName)
	}
	return ""
}
