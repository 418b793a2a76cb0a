package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/internal/testing/fuzzcheck"
	"github.com/airunway-render/airunway-render/plan"
)

// The plan reads quantities the renderer never validated, those an
// override adds to a rendered pod spec (an emptyDir's sizeLimit, the pod's
// overhead; `resources` itself is banned in overrides): each hostile one is
// refused, fast, naming its field. Without the check the converter's
// resource.ParseQuantity runs for more than ten minutes on 1E-1000000000.
// Objects passed through the renderer are left out of the plan (an input
// object that claims to be generated from a model is dropped and
// generated again), so they need no case here.
func TestPlanRefusesHostileQuantities(t *testing.T) {
	caps := resolve(t, fmt.Sprintf(eightGPUCluster, 4))
	for name, tc := range map[string]struct{ models, want string }{
		"a vLLM override's emptyDir": {
			model("a", "vllm", 1, 1, `, overrides: {spec: {template: {spec: {volumes: [{name: scratch, emptyDir: {sizeLimit: "1E-1000000000"}}]}}}}`),
			"`spec.template.spec.volumes[0].emptyDir.sizeLimit`: \"1E-1000000000\" has the exponent -1000000000",
		},
		"a Dynamo override's emptyDir": {
			model("a", "dynamo", 1, 1, `, overrides: {spec: {services: {VllmWorker: {extraPodSpec: {volumes: [{name: scratch, emptyDir: {sizeLimit: "1e1000000000"}}]}}}}}`),
			"`spec.services.VllmWorker.extraPodSpec.volumes[0].emptyDir.sizeLimit`: \"1e1000000000\" has the exponent 1000000000",
		},
		"a vLLM override's pod overhead": {
			model("a", "vllm", 1, 1, `, overrides: {spec: {template: {spec: {overhead: {memory: "9223372036854775808"}}}}}`),
			"`spec.template.spec.overhead.memory`: \"9223372036854775808\" is out of range; a quantity must be between -9223372036854775807m and 9223372036854775807m",
		},
		"a KubeRay override's emptyDir, a million digits": {
			model("a", "kuberay", 1, 1, `, overrides: {spec: {rayClusterConfig: {headGroupSpec: {template: {spec: {volumes: [{name: scratch, emptyDir: {sizeLimit: "`+strings.Repeat("9", 1<<20-1000)+`"}}]}}}}}}`),
			"`headGroupSpec.template.spec.volumes[0].emptyDir.sizeLimit`: \"999999999999999999999999\"... is 1047576 characters long; a quantity must be at most 64",
		},
		"an overhead in range that adds up beyond it": {
			strings.Replace(model("a", "vllm", 1, 1, `, overrides: {spec: {template: {spec: {overhead: {cpu: "9223372036854775807m"}}}}}`), "resources: {", "resources: {cpu: \"1\", ", 1),
			"Deployment \"a\" in namespace \"ml\": one pod's cpu requests add up to",
		},
	} {
		t.Run(name, func(t *testing.T) {
			items := renderItems(t, caps, tc.models)
			var err error
			fuzzcheck.Bounded(t, func() error {
				_, err = plan.Compute(items, caps)
				return nil
			})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The same overrides with ordinary quantities plan as before.
func TestPlanReadsOrdinaryQuantities(t *testing.T) {
	p := compute(t, fmt.Sprintf(eightGPUCluster, 4), model("a", "vllm", 1, 2, `, overrides: {spec: {template: {spec: {overhead: {cpu: 250m}, volumes: [{name: scratch, emptyDir: {sizeLimit: 1Gi}}]}}}}`))
	h := pool(t, p, "h100")
	require.Equal(t, int32(2), h.Pods)
	require.Equal(t, int64(2), h.GPUsRequested)
	require.Equal(t, int32(1), *h.NodesNeeded)
}
