// Package benchdata generates the workload the benchmarks measure: a
// platform's ModelDeployments spread evenly over the five providers and
// three node pools, and the capability file of the cluster they render for.
//
// The Go benchmarks (make bench) and the whole-process measurements
// (hack/procbench) read the same workload, so their numbers describe the
// same bytes. Generation is deterministic: model i is always the same.
package benchdata

import (
	"bytes"
	"fmt"
	"strings"
)

// Providers are the providers the workload cycles through, in order.
var Providers = []string{"vllm", "kaito", "dynamo", "kuberay", "llmd"}

// Capabilities is the cluster of the workload: every provider installed, an
// H100 pool, an L4 pool and a CPU pool. It is the function config.
const Capabilities = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: bench-cluster
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  providers:
  - name: dynamo
    version: "1.1.1"
  - name: kaito
    version: "0.10.0"
  - name: kuberay
    version: "1.7.0"
  - name: llmd
    version: "0.6.0"
  - name: vllm
    images:
      vllm: vllm/vllm-openai:v0.11.0
  nodePools:
  - name: h100
    selector:
      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    taints:
    - key: nvidia.com/gpu
      value: present
      effect: NoSchedule
    gpu:
      resourceName: nvidia.com/gpu
      product: NVIDIA-H100-80GB-HBM3
      memoryMiB: 81559
      perNode: 8
  - name: l4
    selector:
      nvidia.com/gpu.product: NVIDIA-L4
    taints:
    - key: nvidia.com/gpu
      value: present
      effect: NoSchedule
    gpu:
      resourceName: nvidia.com/gpu
      product: NVIDIA-L4
      memoryMiB: 23034
      perNode: 1
  - name: cpu
    selector:
      kubernetes.io/os: linux
`

// models are the model IDs the workload cycles through, with the GPUs
// each asks for: small models fit one L4, large ones take H100s.
var models = []struct {
	id   string
	gpus int
}{
	{"Qwen/Qwen3-0.6B", 1},
	{"Qwen/Qwen3-8B", 1},
	{"microsoft/phi-4-mini-instruct", 1},
	{"meta-llama/Llama-3.1-8B-Instruct", 1},
	{"meta-llama/Llama-3.3-70B-Instruct", 4},
	{"deepseek-ai/DeepSeek-R1-Distill-Llama-70B", 8},
}

// Model returns ModelDeployment i of the workload as YAML, without the
// document separator. Provider, model and namespace vary with i so that
// every provider, every GPU pool and many namespaces are exercised.
func Model(i int) string {
	provider := Providers[i%len(Providers)]
	m := models[(i/len(Providers))%len(models)]
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: model-%05d
  namespace: team-%02d
  labels:
    team: team-%02d
spec:
  secrets:
    huggingFaceToken: hf-token
  model:
    id: %s
  provider:
    name: %s
  engine:
    type: vllm
`, i, i%20, i%20, m.id, provider)
	if provider == "kaito" {
		// KAITO presets size GPUs and tune vLLM themselves: a clean
		// platform sets neither (the renderer would warn).
		return b.String()
	}
	fmt.Fprintf(&b, `    contextLength: 8192
    args:
      gpu-memory-utilization: "0.9"
  resources:
    gpu:
      count: %d
  env:
  - name: VLLM_LOGGING_LEVEL
    value: INFO
`, m.gpus)
	return b.String()
}

// Models returns n ModelDeployments as one multi-document YAML stream.
func Models(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(Model(i))
	}
	return b.Bytes()
}

// ResourceList returns the KRM function input for n ModelDeployments: the
// models as items and the capability file as the function config.
func ResourceList(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range n {
		writeIndented(&b, Model(i))
	}
	b.WriteString("functionConfig:\n")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(Capabilities, "\n"), "\n") {
		b.WriteString("  ")
		b.WriteString(line)
	}
	b.WriteString("\n")
	return b.Bytes()
}

// writeIndented writes one object as an item of a block sequence.
func writeIndented(b *bytes.Buffer, doc string) {
	for j, line := range strings.SplitAfter(strings.TrimSuffix(doc, "\n"), "\n") {
		if j == 0 {
			b.WriteString("- ")
		} else {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
}

// FleetCluster returns the capability file of cluster i of a fleet: the
// workload's providers, one H100 pool of nodes nodes (priced, a cent more
// an hour for each cluster after the first, so that cost decides) and a
// CPU pool, and a region label.
func FleetCluster(i, nodes int) string {
	h100 := Capabilities[strings.Index(Capabilities, "  - name: h100\n"):strings.Index(Capabilities, "  - name: l4\n")]
	h100 = strings.Replace(h100, "      perNode: 8\n", fmt.Sprintf("      perNode: 8\n    nodes: {count: %d}\n    pricePerNodeHour: {amount: %d.%02d, currency: USD}\n", nodes, 98+i/100, i%100), 1)
	head := Capabilities[:strings.Index(Capabilities, "  nodePools:\n")]
	head = strings.Replace(head, "  name: bench-cluster\n", fmt.Sprintf("  name: cluster-%02d\n  labels:\n    region: region-%d\n", i, i%3), 1)
	return head + "  nodePools:\n" + h100 + "  - name: cpu\n    selector:\n      kubernetes.io/os: linux\n"
}
