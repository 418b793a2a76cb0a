package render

import (
	"fmt"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// BenchmarkRender measures one run over n vLLM ModelDeployments with the
// embedded default capabilities: decode, default, validate, select, render
// and emit, without the ResourceList encoding around it.
func BenchmarkRender(b *testing.B) {
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
		b.Run(fmt.Sprintf("models=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res := Render(items, Options{})
				if res.Problems.HasErrors() || len(res.Items) != 3*n {
					b.Fatalf("unexpected result: %d items, %v", len(res.Items), res.Problems)
				}
			}
		})
	}
}
