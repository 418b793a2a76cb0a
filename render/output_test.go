package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/internal/budget"
)

// TestOutputBudget: a run whose output passes the output budget fails as a
// whole with one error, on the object that crossed it, and nothing more is
// encoded after it. Each model here carries 1 MiB of env, which its pass
// through and its workload each write again: the input stays within its
// budget, the output does not.
func TestOutputBudget(t *testing.T) {
	const size = 900 << 10
	value := strings.Repeat("x", size)
	var items []*yaml.RNode
	models := budget.MaxOutputBytes/(2*size) + 3
	for i := range models {
		items = append(items, yaml.MustParse(fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: m%03d, namespace: default}
spec:
  model: {id: Qwen/Qwen3-0.6B}
  provider: {name: vllm}
  engine: {type: vllm}
  resources: {gpu: {count: 1}}
  env: [{name: BIG, value: %s}]
`, i, value)))
	}
	encoded := 0
	res := Render(items, Options{Encode: func(n *yaml.RNode) ([]byte, string, error) {
		encoded++
		var b bytes.Buffer
		err := yaml.NewEncoder(&b).Encode(n.YNode())
		return b.Bytes(), "", err
	}})
	errs := res.Problems.Errors()
	require.NotEmpty(t, errs)
	require.Len(t, errs, 1, "%.500v", errs)
	require.Contains(t, errs[0].Message, "brings the output past 64 MiB; one run may write at most what one run can read again")
	require.Nil(t, res.Encoded)
	require.Less(t, encoded, 2*models+models, "encoding stops at the bound")
}
