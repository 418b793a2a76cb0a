package render

import (
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
)

// BenchmarkRender measures one run over n vLLM ModelDeployments with the
// embedded default capabilities, and with a declared gateway: decode, default, validate, select, render
// and emit, without the ResourceList encoding around it.
func BenchmarkRender(b *testing.B) {
	gatewayCaps := new(*capabilities.Default()) // a copy: Default is shared
	gatewayCaps.Gateway = &hub.GatewayCapability{InferencePoolVersion: "inference.networking.k8s.io/v1", GatewayAPIVersion: "v1.5.1", ParentRef: &hub.GatewayRef{Name: "gw"}}
	for _, n := range []int{1, 100, 1000} {
		items := make([]*yaml.RNode, n)
		for i := range items {
			items[i] = yaml.MustParse(fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: model-%d, namespace: ns-%d}
spec:
  model: {id: org/model-%d}
  provider: {name: vllm}
  engine: {type: vllm, contextLength: 8192, args: {gpu-memory-utilization: "0.9"}}
  resources: {gpu: {count: 2}, memory: 64Gi}
`, i, i%10, i))
		}
		for _, tc := range []struct {
			name string
			opts Options
			// objects per model: MD, Deployment, Service, plus the pool,
			// route and six picker objects with a gateway
			perModel int
		}{
			{"models=%d", Options{}, 3},
			{"gateway/models=%d", Options{Capabilities: gatewayCaps}, 11},
		} {
			b.Run(fmt.Sprintf(tc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					res := Render(items, tc.opts)
					if res.Problems.HasErrors() || len(res.Items) != tc.perModel*n {
						b.Fatalf("unexpected result: %d items, %v", len(res.Items), res.Problems)
					}
				}
			})
		}
	}
}
