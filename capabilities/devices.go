package capabilities

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	"github.com/airunway-render/airunway-render/api/dra"
	"github.com/airunway-render/airunway-render/api/gpus"
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// checkDevices validates a pool's Dynamic Resource Allocation fields the
// way the API server validates a ResourceClaimTemplate carrying them: the
// DeviceClass name is a DNS subdomain, and each selector compiles with
// the DRA CEL environment (package k8s.io/dynamic-resource-allocation/cel,
// the scheduler's own) within the API server's length and cost limits.
func checkDevices(pool *hub.NodePool, at string, l *diag.List) {
	g := pool.GPU
	if g.ExtendedResource && g.DeviceClassName == "" {
		l.Errorf(at+".extendedResource", "needs `deviceClassName`: it says which DeviceClass serves %q as an extended resource", pool.GPUResource())
	}
	if g.ExtendedResource && len(g.Selectors) > 0 {
		l.Errorf(at+".selectors", "must be empty with `extendedResource`: the scheduler serves an extended resource from any device of the DeviceClass, so a selector would narrow nothing; claim the devices instead (no `extendedResource`) to select them")
	}
	if g.DeviceClassName == "" {
		if len(g.Attributes) > 0 {
			l.Errorf(at+".attributes", "must be empty unless `deviceClassName` is set: they describe DRA devices")
		}
		if len(g.Selectors) > 0 {
			l.Errorf(at+".selectors", "must be empty unless `deviceClassName` is set: selectors narrow the devices of a DeviceClass, and pools without one request the extended resource %q", pool.GPUResource())
		}
		return
	}
	if msgs := utilvalidation.IsDNS1123Subdomain(g.DeviceClassName); len(msgs) > 0 {
		l.Errorf(at+".deviceClassName", "%q is not a valid DeviceClass name: %s", g.DeviceClassName, strings.Join(msgs, "; "))
	}
	if what, instead, refused := gpus.RefusedClass(g.DeviceClassName); refused {
		l.Errorf(at+".deviceClassName", "%q is not supported: its devices are %s, and the renderer claims whole GPUs only, each allocated to one pod; use the DeviceClass of whole GPUs (%q)", g.DeviceClassName, what, instead)
	}
	if len(g.Selectors) > resourcev1.DeviceSelectorsMaxSize {
		l.Errorf(at+".selectors", "has %d expressions: must have at most %d, the API server's limit per device request", len(g.Selectors), resourcev1.DeviceSelectorsMaxSize)
	}
	compiled := make([]*dracel.CompilationResult, len(g.Selectors))
	for i, expr := range g.Selectors {
		compiled[i] = checkSelector(expr, fmt.Sprintf("%s.selectors[%d]", at, i), l)
	}
	checkAttributes(g, compiled, at, l)
}

// checkSelector compiles one CEL selector as the API server does for a
// new ResourceClaimTemplate; nil when it does not compile.
func checkSelector(expr, at string, l *diag.List) *dracel.CompilationResult {
	if strings.TrimSpace(expr) == "" {
		l.Errorf(at, "must be a CEL expression over `device`, e.g. %q", `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`)
		return nil
	}
	if len(expr) > resourcev1.CELSelectorExpressionMaxLength {
		l.Errorf(at, "is %d bytes long: must be at most %d", len(expr), resourcev1.CELSelectorExpressionMaxLength)
		return nil
	}
	res := dra.CompileSelector(expr)
	cost := uint64(resourcev1.CELSelectorExpressionMaxCost)
	switch {
	case res.Error != nil:
		l.Errorf(at, "%q is not a valid device selector: %s", expr, res.Error.Detail)
		return nil
	case res.MaxCost > cost:
		l.Errorf(at, "%q is too expensive to evaluate: the API server refuses selectors whose worst-case cost exceeds %d", expr, cost)
	}
	return &res
}

// checkAttributes validates declared device attributes as a ResourceSlice
// would hold them, then holds every selector to the device they describe:
// a selector no declared device satisfies would leave every pod of the
// pool Pending, so it is an error here rather than in the cluster.
func checkAttributes(g *hub.PoolGPU, compiled []*dracel.CompilationResult, at string, l *diag.List) {
	if len(g.Attributes) == 0 {
		return
	}
	ok := true
	for _, name := range slices.Sorted(maps.Keys(g.Attributes)) {
		if msgs := attributeNameErrors(name); len(msgs) > 0 {
			l.Errorf(at+".attributes", "%q is not a valid device attribute name: %s", name, strings.Join(msgs, "; "))
			ok = false
		}
		if v := g.Attributes[name]; len(v) > resourcev1.DeviceAttributeMaxValueLength {
			l.Errorf(at+".attributes."+name, "is %d characters long: must be at most %d", len(v), resourcev1.DeviceAttributeMaxValueLength)
			ok = false
		}
	}
	if !ok {
		return
	}
	device := dra.Declared(g)
	for i, expr := range g.Selectors {
		res := compiled[i]
		if res == nil {
			continue // reported by checkSelector
		}
		match, _, err := res.DeviceMatches(context.Background(), device)
		switch {
		case err != nil:
			l.Errorf(fmt.Sprintf("%s.selectors[%d]", at, i), "%q fails on the pool's declared device (`attributes`, `memoryMiB`): %v; the scheduler would allocate no device, and every pod of the pool would stay Pending", expr, err)
		case !match:
			l.Errorf(fmt.Sprintf("%s.selectors[%d]", at, i), "%q is false for the pool's declared device (`attributes`, `memoryMiB`): the scheduler would allocate no device, and every pod of the pool would stay Pending", expr)
		}
	}
}

// attributeNameErrors checks a device attribute name as the API server
// does: a C identifier of at most 32 characters, optionally qualified by
// a DNS subdomain ("gpu.nvidia.com/productName").
func attributeNameErrors(name string) []string {
	domain, id, qualified := strings.Cut(name, "/")
	if !qualified {
		id, domain = domain, ""
	}
	var msgs []string
	if domain != "" || qualified {
		msgs = append(msgs, utilvalidation.IsDNS1123Subdomain(domain)...)
	}
	if len(id) > resourcev1.DeviceMaxIDLength {
		msgs = append(msgs, fmt.Sprintf("the name after the domain must be at most %d characters", resourcev1.DeviceMaxIDLength))
	}
	if !cIdentifier.MatchString(id) {
		msgs = append(msgs, "the name after the domain must be a C identifier (letters, digits and underscores, not starting with a digit)")
	}
	return msgs
}

var cIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
