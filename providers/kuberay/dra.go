package kuberay

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// claimsSince is the first KubeRay release whose RayService and RayCluster
// CRDs and operator carry a pod's resource claim in the form Kubernetes
// 1.31 and later take (`resourceClaims[].resourceClaimTemplateName`).
// KubeRay 1.3.0 was built on k8s.io/api v0.30 (ray-operator/go.mod at
// v1.3.0), whose PodResourceClaim still nested the template under
// `source`; its CRD schema (ray-operator/config/crd/bases/
// ray.io_rayservices.yaml at v1.3.0) prunes the flat field, and its
// operator would drop it when it copies the worker template into the pod.
// v1.3.1 moved to k8s.io/api v0.32 and the flat field.
var claimsSince = hub.MustParseRelease("1.3.1")

// groupClaim is a worker group whose pods claim their GPUs on a Dynamic
// Resource Allocation pool: the ResourceClaimTemplate they name and how
// many devices it allocates.
type groupClaim struct {
	template string
	count    int32
	devices  *providers.DeviceRequest
	owner    string
}

// claimOwner names the ResourceClaimTemplate of a worker group after the
// RayService and the group, so that prefill and decode groups get their own.
func claimOwner(md *hub.ModelDeployment, group string) string { return md.Name + "-" + group }

// workerComponents are the model's worker groups: the component each is
// placed as and the field holding its GPU count.
func workerComponents(s *hub.ModelDeploymentSpec) []struct{ component, field string } {
	if s.Mode() == hub.ModeDisaggregated {
		return []struct{ component, field string }{
			{providers.ComponentPrefill, "spec.scaling.prefill.gpu.count"},
			{providers.ComponentDecode, "spec.scaling.decode.gpu.count"},
		}
	}
	return []struct{ component, field string }{{providers.ComponentMain, "spec.resources.gpu.count"}}
}

// componentGPUs is the GPUs one worker pod of component asks for.
func componentGPUs(s *hub.ModelDeploymentSpec, component string) int32 {
	switch {
	case component == providers.ComponentMain:
		return s.GPUCount()
	case s.Scaling == nil:
		return 0
	case component == providers.ComponentPrefill:
		return s.Scaling.Prefill.GPUCount()
	default:
		return s.Scaling.Decode.GPUCount()
	}
}

// checkClaims refuses a worker group on a DRA pool where the declared
// KubeRay release cannot give its pods the claim.
func checkClaims(req *providers.Request, v *version.Version, l *diag.List) {
	if v.AtLeast(claimsSince) {
		return
	}
	s := &req.MD.Spec
	for _, w := range workerComponents(s) {
		placed := req.Placement.For(w.component)
		if placed.Devices == nil || componentGPUs(s, w.component) <= 0 {
			continue
		}
		l.Errorf(w.field, "places the Ray workers on node pool %q, which claims its GPUs as DRA devices (DeviceClass %q), but KubeRay %s cannot give its pods a resource claim: its RayService and RayCluster CRDs and its operator (built on Kubernetes 1.30's API) know only the older `resourceClaims[].source` form, so the API server prunes `resourceClaimTemplateName` and the worker pods are refused; declare KubeRay %s or later, or use a pool without `deviceClassName`", placed.Pool, placed.Devices.DeviceClassName, v, claimsSince)
	}
}

// claimGPUs moves a worker group's GPUs from the extended resource into a
// claim when its pool is a DRA pool, and records the claim.
func claimGPUs(req *providers.Request, component string, g *workerGroupSpec, claims *[]groupClaim) {
	placed := req.Placement.For(component)
	owner := claimOwner(req.MD, g.GroupName)
	if n := placed.ClaimGPUs(&g.Template.Spec, 0, owner); n > 0 {
		*claims = append(*claims, groupClaim{template: providers.ClaimTemplateName(owner, placed.Devices, n), count: n, devices: placed.Devices, owner: owner})
	}
}

// claimObjects renders the ResourceClaimTemplates of the claiming groups.
func claimObjects(req *providers.Request, claims []groupClaim) ([]providers.Object, error) {
	var out []providers.Object
	for _, c := range claims {
		obj, err := providers.ClaimTemplate(req, c.owner, c.devices, c.count)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// setNumGPUs tells Ray how many GPUs each claiming worker has, in the
// group's `rayStartParams` after overrides, unless the group already says
// so itself.
//
// KubeRay derives `ray start --num-gpus` from the Ray container's resource
// limits only: addWellKnownAcceleratorResources in
// ray-operator/controllers/ray/common/pod.go (v1.3.x to v1.7.0) sets
// num-gpus from the first limit whose name ends in "gpu", and nothing reads
// the pod's resource claims (ray-project/kuberay#3527, "Automatically
// detect GPUs set by DRA", is open). Ray's autoscaler reads the same two
// places (num-gpus, else a "gpu" limit: _get_num_gpus in
// python/ray/autoscaler/_private/kuberay/autoscaling_config.py), so a
// claiming group would count as GPU-less there, and Ray's own detection
// inside the container is the only other source. The claim's count is
// known here, so it is written down. A `num-gpus` the group sets through
// overrides (which replace the whole list of groups) wins.
func setNumGPUs(obj providers.Object, claims []groupClaim) error {
	if len(claims) == 0 {
		return nil
	}
	counts := map[string]int32{}
	for _, c := range claims {
		counts[c.template] = c.count
	}
	cluster, _ := obj["spec"].(map[string]any)["rayClusterConfig"].(map[string]any)
	groups, _ := cluster["workerGroupSpecs"].([]any)
	for i, raw := range groups {
		g, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("`spec.rayClusterConfig.workerGroupSpecs[%d]` must be an object", i)
		}
		n, claimed := groupCount(g, counts)
		if !claimed {
			continue
		}
		params, _ := g["rayStartParams"].(map[string]any)
		if params == nil {
			params = map[string]any{}
			g["rayStartParams"] = params
		}
		if _, set := params["num-gpus"]; !set {
			params["num-gpus"] = strconv.Itoa(int(n))
		}
	}
	return nil
}

// groupCount is the devices a group's pods claim from the rendered
// templates.
func groupCount(g map[string]any, counts map[string]int32) (int32, bool) {
	tmpl, _ := g["template"].(map[string]any)
	spec, _ := tmpl["spec"].(map[string]any)
	claims, _ := spec["resourceClaims"].([]any)
	for _, raw := range claims {
		c, _ := raw.(map[string]any)
		name, _ := c["resourceClaimTemplateName"].(string)
		if n, ok := counts[name]; ok {
			return n, true
		}
	}
	return 0, false
}
