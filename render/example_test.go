package render_test

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/render"
)

// Render one ModelDeployment for a cluster described by its capability
// file: the model comes back annotated with the renderer's decisions,
// followed by the provider's objects, placed on the pool that fits.
func ExampleRender() {
	items, err := kio.FromBytes([]byte(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: qwen, namespace: models}
spec:
  model: {id: Qwen/Qwen3-0.6B}
  resources: {gpu: {count: 1}}
`))
	if err != nil {
		panic(err)
	}
	caps, problems := capabilities.Decode([]byte(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: gpu-east}
spec:
  providers:
  - {name: vllm, images: {vllm: "vllm/vllm-openai:v0.11.0"}}
  nodePools:
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
    gpu: {product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
`))
	if problems.HasErrors() {
		panic(problems)
	}
	resolved, problems := capabilities.Resolve(caps)
	if problems.HasErrors() {
		panic(problems)
	}

	res := render.Render(items, render.Options{Capabilities: resolved})
	for _, p := range res.Problems {
		fmt.Println(p) // warnings; an error would leave res.Items empty
	}
	for _, n := range res.Items {
		fmt.Println(n.GetKind(), n.GetName())
	}
	model := res.Items[0].GetAnnotations()
	fmt.Println("provider:", model[hub.AnnotationProvider], "-", model[hub.AnnotationProviderReason])
	fmt.Println("node pool:", model[hub.AnnotationNodePool])
	// Output:
	// ModelDeployment qwen
	// Deployment qwen
	// Service qwen
	// provider: vllm - matched capabilities: engine=vllm, gpu=true, mode=aggregated; won: vllm (no rule matched, priority 0)
	// node pool: l4
}
