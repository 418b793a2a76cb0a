package fn

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/airunway-render/airunway-render/render"
	sdk "github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestResourceListWriterMatchesSDK holds the function's output to the
// bytes the SDK's ResourceList.ToYAML writes for the same processed list: over
// every fuzz seed (the golden cases' inputs and outputs, the examples, the
// hostile inputs) and over inputs chosen for what the YAML emitter does
// with context: comments, flow style, block scalars, long strings,
// anchors, results with every field.
func TestResourceListWriterMatchesSDK(t *testing.T) {
	inputs := map[string][]byte{}
	for i, s := range fuzzResourceListSeeds(t) {
		inputs[fmt.Sprintf("seed-%03d", i)] = s
	}
	for name, in := range encodingCases {
		inputs[name] = []byte(in)
	}
	compared := 0
	for name, in := range inputs {
		want, ok := sdkEncoding(in)
		if !ok {
			if _, chosen := encodingCases[name]; chosen {
				t.Errorf("%s: the SDK does not read it as a ResourceList", name)
			}
			continue // not a ResourceList: nothing is encoded
		}
		got, err := (&Processor{}).Run(in)
		if err != nil && err != errFailed {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encodings differ\n--- SDK\n%s\n--- Processor.Run\n%s", name, want, got)
		}
		compared++
	}
	if compared < len(encodingCases)+50 {
		t.Fatalf("compared only %d inputs", compared)
	}
}

// sdkEncoding is the reference for Processor.Run: the same steps over
// the SDK's own ResourceList, the renderer returning nodes, and the SDK
// encoding the whole list at once. It reports false when in is not a
// ResourceList.
func sdkEncoding(in []byte) ([]byte, bool) {
	rl, err := sdk.ParseResourceList(in)
	if err != nil {
		return nil, false
	}
	items := make([]*yaml.RNode, len(rl.Items))
	for i, item := range rl.Items {
		items[i] = item.MoveToResourceNode()
	}
	problems := danglingAliases(items)
	switch {
	case problems.HasErrors():
		items = nil
	default:
		caps, l := functionConfigCapabilities(rl.FunctionConfig)
		problems = l
		if !l.HasErrors() {
			res := render.Render(items, render.Options{Capabilities: caps})
			problems = append(problems, res.Problems...)
			if !res.Problems.HasErrors() {
				items = res.Items
			}
		}
	}
	rl.Items = sdk.MoveToKubeObjects(items)
	for _, p := range problems.Sorted() {
		rl.Results = append(rl.Results, toResult(p))
	}
	out, err := rl.ToYAML()
	return out, err == nil
}

var encodingCases = map[string]string{
	"comments-and-styles": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# a comment before the first item
- apiVersion: v1 # trailing
  kind: ConfigMap
  metadata: {name: flow-meta, namespace: a}
  data:
    # head comment
    script: |
      #!/bin/sh
      echo "hi"   
        indented
    folded: >
      one
      two
    leading-space: |2
       starts with a space
    long: "` + strings.Repeat("a very long double-quoted string ", 8) + `"
    plain-long: ` + strings.Repeat("word ", 40) + `
    single: 'it''s'
    empty: ""
    unicode: "żółw 🐢"
    tab: "a\tb"
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: anchors
    namespace: b
    labels: &l
      app: x
    annotations: *l
  data: {k: v, list: "[1, 2]"}
- {apiVersion: v1, kind: Secret, metadata: {name: flow-item}, stringData: {a: b}}
- apiVersion: v1
  kind: List
  metadata:
    name: nested-lists
  items:
  - - a
    - b
  - []
  - {}
  - ~
functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: flow-config}}
`,
	"no-items-and-results": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items: []
results:
- message: earlier
  severity: warning
  resourceRef: {apiVersion: v1, kind: ConfigMap, name: a, namespace: b}
  field: {path: data.x, currentValue: 1, proposedValue: 2}
  file: {path: a.yaml, index: 2}
  tags: {z: "1", a: "2"}
`,
	"invalid-model": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: airunway.ai/v1alpha1
  kind: ModelDeployment
  metadata:
    name: bad
    namespace: m
    annotations:
      config.kubernetes.io/path: models/bad.yaml
      internal.config.kubernetes.io/path: models/bad.yaml
  spec:
    model: {id: "-x"}
    engine: {type: vllm, args: {"max-model-len": "--x"}}
- apiVersion: airunway.ai/v1alpha1
  kind: ModelDeployment
  metadata: {name: bad, namespace: m}
  spec: {model: {id: a/b}}
`,
}
