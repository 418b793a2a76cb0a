package render

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/capabilities"
	"github.com/airunway-render/airunway-render/diag"
)

// TestInOrder: whatever the workers, merge sees every item once and in
// order, and the steps in the items' turns run in order, one at a time.
func TestInOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8, 100} {
		for _, n := range []int{0, 1, 2, 7, 500} {
			var lock sync.Mutex
			var turns []int
			var inTurn, overlaps atomic.Int32
			var merged []int
			inOrder(n, workers, func(i int, tn *turn) int {
				if i%3 == 0 {
					return i * 2 // leaves its turn without entering it
				}
				tn.enter()
				if inTurn.Add(1) != 1 {
					overlaps.Add(1)
				}
				runtime.Gosched() // room for another item to enter, were it let in
				lock.Lock()
				turns = append(turns, i)
				lock.Unlock()
				inTurn.Add(-1)
				tn.leave()
				return i * 2
			}, func(i int, r int) {
				require.Equal(t, 2*i, r)
				merged = append(merged, i)
			})
			require.Zero(t, overlaps.Load(), "two items in their turns at once (%d workers, %d items)", workers, n)
			require.Len(t, merged, n)
			for i, m := range merged {
				require.Equal(t, i, m, "merged out of order (%d workers, %d items)", workers, n)
			}
			for k := 1; k < len(turns); k++ {
				require.Less(t, turns[k-1], turns[k], "turns out of order (%d workers, %d items)", workers, n)
			}
		}
	}
}

// heavyRule costs about a tenth of capabilities.RuleCostLimit and reads
// the model's id, so that each model with an id of its own pays for it.
const heavyRule = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a+b+c+d > 0)))) && spec.model.id != ''"

// TestRenderSharedRuleCostInOrder renders models whose provider the
// capability file's rules choose, until the run's rules have spent their
// limit (capabilities.RunRuleCostLimit): the models rendered and those
// refused, and every problem, must be those of one goroutine rendering the
// models in order, however many workers render them, and run after run.
// Some models are defined twice: a duplicate is refused before its rules
// run, and costs nothing.
func TestRenderSharedRuleCostInOrder(t *testing.T) {
	var docs []string
	for i := range 160 {
		docs = append(docs, fmt.Sprintf(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: m-%03d
  namespace: team
spec:
  model:
    id: org/model-%d
  engine:
    type: vllm
  resources:
    gpu:
      count: 1
`, i%150, i))
	}
	render := func(workers int) Result {
		caps, l := capabilities.ResolveNode(yaml.MustParse(`apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata:
  name: rules
spec:
  providers:
  - name: vllm
    selectionRules:
    - condition: "` + heavyRule + `"
      priority: 10
  - name: llmd
    version: "0.6.0"
    selectionRules:
    - condition: "` + strings.Replace(heavyRule, "> 0", "> 1", 1) + `"
      priority: 20
  nodePools:
  - name: l4
    selector:
      nvidia.com/gpu.product: NVIDIA-L4
    gpu:
      resourceName: nvidia.com/gpu
      memoryMiB: 23034
`))
		require.False(t, l.HasErrors(), "%v", l)
		var items []*yaml.RNode
		for _, d := range docs {
			items = append(items, yaml.MustParse(d))
		}
		res := Render(items, Options{Capabilities: caps, Workers: workers, Encode: encodeForTest, EncodeConcurrently: workers > 1})
		res.Problems = res.Problems.Sorted()
		return res
	}
	want := render(1)
	var exceeded, twice []diag.Problem
	for _, p := range want.Problems {
		switch {
		case strings.Contains(p.Message, "past the 10000000 one run may spend"):
			exceeded = append(exceeded, p)
		case strings.Contains(p.Message, "is defined twice"):
			twice = append(twice, p)
		}
	}
	require.NotEmpty(t, exceeded, "the run never spent its rules' limit: the test does not reach the order of the rules")
	require.Less(t, len(exceeded)+len(twice), len(docs)-20, "the limit was spent too early to tell the order")
	require.Len(t, twice, 10)
	for _, workers := range []int{2, 8} {
		for range 2 {
			require.Equal(t, want, render(workers), "on %d workers", workers)
		}
	}
}

func encodeForTest(n *yaml.RNode) ([]byte, string, error) {
	s, err := n.String()
	return []byte(s), "", err
}
