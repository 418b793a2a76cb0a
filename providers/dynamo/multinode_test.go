package dynamo

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/diag"
)

// multinode spreads the aggregated worker over two nodes, as the golden
// case dynamo-multinode-override does.
const multinode = "provider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}\n"

func checkErrors(l diag.List) map[string]string {
	out := map[string]string{}
	for _, p := range l.Errors() {
		out[p.Field] = p.Message
	}
	return out
}

// TestMultinodeWorkerTakesShellNeutralTokens: the operator runs a multinode
// worker's arguments through `sh -c`, so every user string there must be
// one the shell reads as itself; single-node workers take anything.
func TestMultinodeWorkerTakesShellNeutralTokens(t *testing.T) {
	spec := "model: {id: \"org/m$(HF_TOKEN)\", servedName: \"a;b\"}\nengine: {type: vllm, args: {tokenizer: \"x`id`\", max-model-len: \"4096\"}, extraArgs: [\"--api-key=$$\", \"--enforce-eager\", \"--chat-template={{x}}\"]}\nresources: {gpu: {count: 2}}\n"
	got := checkErrors(Provider{}.Check(request(t, "", spec+multinode)))
	require.ElementsMatch(t, []string{"spec.model.id", "spec.model.servedName", "spec.engine.args.tokenizer", "spec.engine.extraArgs[0]", "spec.engine.extraArgs[2]"}, slices.Collect(maps.Keys(got)))
	require.Contains(t, got["spec.model.id"], `"org/m$(HF_TOKEN)" cannot be passed to VllmWorker, which `+"`spec.provider.overrides`"+` spreads over several nodes`)

	single := checkErrors(Provider{}.Check(request(t, "", spec+"provider: {name: dynamo}\n")))
	require.Empty(t, single, "a single-node worker's arguments are escaped, not refused")

	safe := "model: {id: Qwen/Qwen2.5-72B-Instruct}\nengine: {type: vllm, args: {tensor-parallel-size: \"4\"}, extraArgs: [\"--max-num-seqs=64\"]}\nresources: {gpu: {count: 2}}\n"
	require.Empty(t, checkErrors(Provider{}.Check(request(t, "", safe+multinode))))
}

// TestMultinodeDisaggregatedWorker: a prefill or decode worker spread over
// nodes is checked the same way.
func TestMultinodeDisaggregatedWorker(t *testing.T) {
	spec := "model: {id: m, servedName: \"s$(X)\"}\nengine: {type: vllm}\nserving: {mode: disaggregated}\nscaling: {prefill: {replicas: 1, gpu: {count: 1}}, decode: {replicas: 1, gpu: {count: 1}}}\n" +
		"provider: {name: dynamo, overrides: {spec: {services: {VllmDecodeWorker: {multinode: {nodeCount: 2}}}}}}\n"
	got := checkErrors(Provider{}.Check(request(t, "", spec)))
	require.Contains(t, got["spec.model.servedName"], "cannot be passed to VllmDecodeWorker")
}

// TestNodeCountBounded: a worker spread over two billion nodes (which made
// render print a negative node count and plan allocate gigabytes) is
// refused at its field; MaxNodeCount itself is accepted.
func TestNodeCountBounded(t *testing.T) {
	spec := "model: {id: Qwen/Qwen2.5-72B-Instruct}\nengine: {type: vllm}\nresources: {gpu: {count: 2}}\n"
	for count, want := range map[string]string{
		"2000000000": "is 2000000000; a worker may span at most 64 nodes",
		"65":         "is 65; a worker may span at most 64 nodes",
		"64":         "",
	} {
		overrides := "provider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: " + count + "}}}}}}\n"
		got := checkErrors(Provider{}.Check(request(t, "", spec+overrides)))
		require.Equal(t, want, got["spec.provider.overrides.spec.services.VllmWorker.multinode.nodeCount"], count)
	}
}
