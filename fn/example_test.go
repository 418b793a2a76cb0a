package fn_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/airunway-render/airunway-render/fn"
)

// Run the KRM function on a ResourceList, as kustomize, kpt and the Argo
// CD plugin do: the function config is the cluster's capability file, and
// the output holds the ModelDeployment, annotated, and its objects.
func ExampleRun() {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: airunway.ai/v1alpha1
  kind: ModelDeployment
  metadata: {name: qwen, namespace: models}
  spec:
    model: {id: Qwen/Qwen3-0.6B}
    resources: {gpu: {count: 2}}
functionConfig:
  apiVersion: airunway.ai/v1alpha1
  kind: ClusterCapabilities
  metadata: {name: gpu-east}
  spec:
    providers:
    - {name: kuberay, version: "1.3.0"}
    - {name: vllm}
`
	var out bytes.Buffer
	if code := fn.Run(strings.NewReader(in), &out, os.Stderr); code != 0 {
		fmt.Println("exit", code)
		return
	}
	items, err := (&kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}).Read()
	if err != nil {
		panic(err)
	}
	for _, n := range items {
		fmt.Println(n.GetApiVersion(), n.GetKind(), n.GetName())
	}
	fmt.Println("provider:", items[0].GetAnnotations()["render.airunway.ai/provider"])
	// Output:
	// airunway.ai/v1alpha1 ModelDeployment qwen
	// ray.io/v1 RayService qwen
	// provider: kuberay
}
