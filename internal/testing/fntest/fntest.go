// Package fntest holds what the tests of the KRM function (package fn) and
// of the command line (package cli) feed them: a few ModelDeployments, a
// capability file, and ResourceLists built from YAML documents; and the
// ResourceLists built from the golden cases and examples that seed the
// function's fuzz target and the ResourceList parity suite
// (internal/manifest).
package fntest

import "strings"

// GoodMD is a valid vLLM model, qwen in namespace ml.
const GoodMD = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: qwen
  namespace: ml
spec:
  model: {id: Qwen/Qwen3-0.6B}
  provider: {name: vllm}
  engine: {type: vllm}
`

// BadMD asks for more replicas than validation allows.
const BadMD = `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: broken
  namespace: ml
spec:
  model: {id: x}
  provider: {name: vllm}
  engine: {type: vllm}
  scaling: {replicas: 99}
`

// CapsPinned is a local-config capability file pinning the vLLM image.
const CapsPinned = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: pinned
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  providers:
  - name: vllm
    images: {vllm: "vllm/vllm-openai:v0.11.0"}
`

// ResourceList wraps YAML documents as the items of a ResourceList, and
// config, when not empty, as its functionConfig.
func ResourceList(config string, items ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, it := range items {
		for i, line := range strings.Split(strings.TrimRight(it, "\n"), "\n") {
			if i == 0 {
				b.WriteString("- " + line + "\n")
			} else {
				b.WriteString("  " + line + "\n")
			}
		}
	}
	if config != "" {
		b.WriteString("functionConfig:\n")
		for _, line := range strings.Split(strings.TrimRight(config, "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}
