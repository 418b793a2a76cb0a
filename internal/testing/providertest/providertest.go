// Package providertest builds provider Requests for tests the way the
// render pipeline does: a ModelDeployment written as YAML is decoded,
// defaulted and (optionally) validated, then paired with the embedded
// default capabilities and an empty placement.
package providertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/api/v1alpha1"
	"github.com/airunway-render/airunway-render/api/versions"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/providers"
)

// Decode builds a defaulted ModelDeployment from its metadata and spec in
// YAML; meta "" means {name: test-model, namespace: default}. Decoding
// problems fail the test; validation is left to the caller.
func Decode(t testing.TB, meta, spec string) *hub.ModelDeployment {
	t.Helper()
	if meta == "" {
		meta = "{name: test-model, namespace: default}"
	}
	doc := "apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: " + meta + "\nspec:\n"
	for _, line := range strings.Split(strings.TrimSpace(spec), "\n") {
		doc += "  " + line + "\n"
	}
	js, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	md, l := versions.DecodeModelDeployment(v1alpha1.APIVersion, js)
	require.False(t, l.HasErrors(), "%v", l)
	return md
}

// Valid is Decode followed by validation, which must pass.
func Valid(t testing.TB, meta, spec string) *hub.ModelDeployment {
	t.Helper()
	md := Decode(t, meta, spec)
	require.False(t, hub.ValidateModelDeployment(md).HasErrors(), "%v", hub.ValidateModelDeployment(md))
	return md
}

// Request pairs a ModelDeployment with the embedded default capabilities
// (a copy of the top level, and of the provider's entry, free to change)
// and an empty placement, with the gateway decision the render engine
// would make. The engine is spec.engine.type, else vllm.
func Request(md *hub.ModelDeployment, provider string) *providers.Request {
	caps := capabilities.Default().ResolvedCapabilities
	p := *caps.Provider(provider)
	engine := md.Spec.EngineType()
	if engine == "" {
		engine = hub.EngineVLLM
	}
	return &providers.Request{MD: md, Engine: engine, Provider: &p, Caps: &caps, Placement: providers.NewPlacement(md), GatewayEnabled: md.GatewayEnabled(caps.Gateway)}
}

// WithGateway declares the cluster's Gateway API Inference Extension (nil:
// none) in the request's capabilities and makes the engine's gateway
// decision again.
func WithGateway(req *providers.Request, g *hub.GatewayCapability) *providers.Request {
	req.Caps.Gateway = g
	req.GatewayEnabled = req.MD.GatewayEnabled(g)
	return req
}

// ContainsRun reports whether needle appears in haystack as consecutive
// elements, e.g. a flag followed by its value in a command line.
func ContainsRun(haystack, needle []string) bool {
	for i := 0; i+len(needle) <= len(haystack); i++ {
		if slices.Equal(haystack[i:i+len(needle)], needle) {
			return true
		}
	}
	return false
}

// Int64 reads a JSON-decoded number from a rendered object.
func Int64(v any) (int64, error) {
	switch n := v.(type) {
	case float64:
		return int64(n), nil
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	}
	return 0, fmt.Errorf("not a number: %T", v)
}

// Object parses one object written as YAML, for status translation tests.
func Object(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	require.NoError(t, obj.UnmarshalJSON(js))
	return obj
}

// GPUPool is a pool of nodes with perNode GPUs of product, labelled
// nvidia.com/gpu.product as GPU Feature Discovery labels them (the
// product name with dashes for spaces), its GPUs requested as
// nvidia.com/gpu.
func GPUPool(name, product string, perNode int32) *hub.NodePool {
	return &hub.NodePool{
		Name:     name,
		Selector: map[string]string{"nvidia.com/gpu.product": strings.ReplaceAll(product, " ", "-")},
		GPU:      &hub.PoolGPU{PerNode: perNode},
	}
}

// DRAPool is GPUPool with its GPUs as DRA devices: of DeviceClass
// gpu.nvidia.com, picked by the productName attribute of NVIDIA's driver.
func DRAPool(name, product string, perNode int32) *hub.NodePool {
	pool := GPUPool(name, product, perNode)
	pool.GPU.DeviceClassName = "gpu.nvidia.com"
	pool.GPU.Selectors = []string{`device.attributes["gpu.nvidia.com"].productName == "` + product + `"`}
	return pool
}

// H100DRAPool and H100Pool are one pool of 8-GPU H100 nodes, its GPUs as
// DRA devices and as nvidia.com/gpu.
func H100DRAPool() *hub.NodePool { return DRAPool("h100", "NVIDIA H100 80GB HBM3", 8) }

func H100Pool() *hub.NodePool { return GPUPool("h100", "NVIDIA H100 80GB HBM3", 8) }
