// Package dra knows what a capability file's Dynamic Resource
// Allocation pool (`gpu.deviceClassName`) means to Kubernetes: the device
// its `attributes` and `memoryMiB` declare, as kube-scheduler's CEL
// environment sees a device; the text form of typed device attributes,
// shared by the file, discover and the cluster twin; the DeviceClasses
// whose devices are not whole GPUs; and selectors compiled as the API
// server compiles them.
//
// It is apart from package capabilities, beside the API types it reads,
// so that the status reporter, which compares declared DRA pools with live
// ResourceSlices, links the DRA CEL environment without the renderer's
// YAML and rule machinery.
package dra

import (
	"strconv"

	"github.com/blang/semver/v4"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"

	"github.com/airunway-render/airunway-render/api/hub"
)

// CompileSelector compiles a selector in the DRA environment of a new
// object, with the API server's cost limit.
func CompileSelector(expr string) dracel.CompilationResult {
	envType := environment.NewExpressions
	cost := uint64(resourcev1.CELSelectorExpressionMaxCost)
	return dracel.GetCompiler(dracel.Features{}).CompileCELExpression(expr, dracel.Options{EnvType: &envType, CostLimit: &cost})
}

// Declared is the device a DRA pool declares, as the scheduler's CEL
// environment sees it: the driver named like the DeviceClass (as NVIDIA's
// gpu.nvidia.com is), the declared attributes in the driver's domain, and
// the GPU memory as capacity `memory`.
func Declared(g *hub.PoolGPU) dracel.Device {
	d := dracel.Device{Driver: g.DeviceClassName, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}, Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{}}
	for name, value := range g.Attributes {
		d.Attributes[resourcev1.QualifiedName(name)] = Attribute(value)
	}
	if g.MemoryMiB > 0 {
		d.Capacity["memory"] = resourcev1.DeviceCapacity{Value: *resource.NewQuantity(g.MemoryMiB<<20, resource.BinarySI)}
	}
	return d
}

// Attribute is the typed attribute a declared value stands for:
// an integer, true or false, a semantic version (NVIDIA publishes
// driverVersion and cudaComputeCapability as versions: "9.0.0"), else a
// string. AttributeText is its inverse.
func Attribute(value string) resourcev1.DeviceAttribute {
	if i, err := strconv.ParseInt(value, 10, 64); err == nil {
		return resourcev1.DeviceAttribute{IntValue: &i}
	}
	if b, err := strconv.ParseBool(value); err == nil && (value == "true" || value == "false") {
		return resourcev1.DeviceAttribute{BoolValue: &b}
	}
	if _, err := semver.Parse(value); err == nil {
		return resourcev1.DeviceAttribute{VersionValue: &value}
	}
	return resourcev1.DeviceAttribute{StringValue: &value}
}

// AttributeText writes a ResourceSlice attribute as a capability file
// holds it; Attribute reads it back to the same type, except for a
// string that looks like a number, a boolean or a version (ok is false).
func AttributeText(a resourcev1.DeviceAttribute) (text string, ok bool) {
	switch {
	case a.IntValue != nil:
		return strconv.FormatInt(*a.IntValue, 10), true
	case a.BoolValue != nil:
		return strconv.FormatBool(*a.BoolValue), true
	case a.VersionValue != nil:
		return *a.VersionValue, true
	case a.StringValue != nil:
		back := Attribute(*a.StringValue)
		return *a.StringValue, back.StringValue != nil
	}
	return "", false
}
