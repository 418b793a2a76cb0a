package dynamo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParallelism (issue 36): a worker shards the model over its GPUs in
// each backend's own flags; across the nodes of a multinode worker vLLM
// runs pipeline stages, SGLang and TensorRT-LLM tensor parallelism over
// every GPU, as Dynamo's multinode guide and examples do. Before, a
// worker with 4 GPUs got no parallelism flag and loaded the model on one.
func TestParallelism(t *testing.T) {
	const model = "model: {id: meta-llama/Llama-3.3-70B-Instruct}\nresources: {gpu: {count: 4}}\n"
	const nodes2 = "provider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}\n"
	cases := []struct{ name, engine, spec, want string }{
		{"vllm, one node", "vllm", "provider: {name: dynamo}\n", "--tensor-parallel-size 4"},
		{"sglang, one node", "sglang", "provider: {name: dynamo}\n", "--tp-size 4"},
		{"trtllm, one node", "trtllm", "provider: {name: dynamo}\n", "--tensor-parallel-size 4"},
		{"vllm, two nodes", "vllm", nodes2, "--tensor-parallel-size 4 --pipeline-parallel-size 2"},
		{"sglang, two nodes", "sglang", nodes2, "--tp-size 8"},
		{"trtllm, two nodes", "trtllm", nodes2, "--tensor-parallel-size 8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, "", model+tc.spec+"engine: {type: "+tc.engine+"}\n")
			require.Empty(t, Provider{}.Check(req).Errors())
			args := strings.Join(render(t, req).svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Args, " ")
			require.Contains(t, args, tc.want)
			require.Equal(t, 1, strings.Count(args, "parallel-size")+strings.Count(args, "tp-size")-strings.Count(tc.want, "pipeline"), args)
		})
	}
}

// TestParallelismContradicted: an explicit size that does not multiply to
// a replica's GPUs is refused at its field; Dynamo's documented form,
// tensor parallel over every GPU of a multinode worker, is taken as
// written, with no pipeline flag beside it.
func TestParallelismContradicted(t *testing.T) {
	const nodes2 = "provider: {name: dynamo, overrides: {spec: {services: {VllmWorker: {multinode: {nodeCount: 2}}}}}}\nresources: {gpu: {count: 4}}\nmodel: {id: m}\n"
	got := checkErrors(Provider{}.Check(request(t, "", nodes2+"engine: {type: vllm, args: {tensor-parallel-size: \"4\", pipeline-parallel-size: \"1\"}}\n")))
	require.Equal(t, map[string]string{"spec.engine.args.tensor-parallel-size": `"tensor-parallel-size" sets the tensor parallel size to 4 and the pipeline parallel size to 1, which contradicts the 2 × 4 GPUs of a replica's 2 pods: the tensor parallel size × the pipeline parallel size must be 8; leave both out for 4 × 2, or set both to sizes whose product is 8`}, got)

	got = checkErrors(Provider{}.Check(request(t, "", "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: sglang, extraArgs: [--tp, \"2\"]}\nserving: {mode: disaggregated}\nscaling: {prefill: {gpu: {count: 2}}, decode: {gpu: {count: 4}}}\n")))
	require.Equal(t, map[string]string{"spec.engine.extraArgs[0]": `"--tp" sets the tensor parallel size to 2, which contradicts the 4 GPUs per decode pod: the tensor parallel size × the pipeline parallel size must be 4; leave both out for 4 × 1, or set both to sizes whose product is 4`}, got)

	req := request(t, "", nodes2+"engine: {type: vllm, args: {tensor-parallel-size: \"8\"}}\n")
	require.Empty(t, Provider{}.Check(req).Errors())
	args := render(t, req).svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Args
	require.NotContains(t, args, "--pipeline-parallel-size")
	require.Contains(t, strings.Join(args, " "), "--tensor-parallel-size 8")
}

// TestMockerHasNoParallelism: the mocker serves no model.
func TestMockerHasNoParallelism(t *testing.T) {
	r := render(t, request(t, mockerMeta, "model: {id: m}\nprovider: {name: dynamo}\nengine: {type: vllm}\nresources: {gpu: {count: 4}}\n"))
	require.NotContains(t, strings.Join(r.svc(t, ServiceWorker).ExtraPodSpec.MainContainer.Args, " "), "parallel")
}
