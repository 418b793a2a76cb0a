package dynamo

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/providers"
)

// replicaGPUs is what one replica of the worker of role (providers'
// component: "", prefill or decode) runs on: its service's GPUs on each
// of its `multinode.nodeCount` pods. Dynamo's `gpu` is per node and the
// operator sets no parallelism itself: "The tensor parallelism (`tp-size`
// or `--tp`) in your command/args must match the total number of GPUs"
// (docs/kubernetes/deployment/multinode-deployment.md, "Tensor
// Parallelism Alignment"). Across nodes:
//   - vllm: pipeline parallel, tensor parallel within a node. The operator
//     reads the worker's world size (tensor × pipeline) and, when it
//     exceeds one node's GPUs, starts Ray on every pod and runs vLLM on
//     the leader with `--distributed-executor-backend ray` (same guide,
//     "vLLM Backend"); vLLM's own guide for multi-node serving sets the
//     tensor parallel size to the GPUs of a node and the pipeline parallel
//     size to the nodes, so only pipeline stages talk across the network.
//   - sglang, trtllm: tensor parallel over every GPU, as Dynamo documents
//     and its multinode examples run them: the operator injects
//     `--nnodes`/`--node-rank`/`--dist-init-addr` (SGLang) or wraps the
//     worker in `mpirun` over all pods (TensorRT-LLM), and the examples
//     set `--tp-size` / `--tensor-parallel-size` to nodes × GPUs.
func replicaGPUs(md *hub.ModelDeployment, engine, role string) providers.ReplicaGPUs {
	gpus := md.Spec.GPUCount()
	if role != providers.ComponentMain && md.Spec.Scaling != nil {
		c := md.Spec.Scaling.Decode
		if role == providers.ComponentPrefill {
			c = md.Spec.Scaling.Prefill
		}
		gpus = c.GPUCount()
	}
	return providers.ReplicaGPUs{GPUs: gpus, Pods: Provider{}.NodesPerPod(md, role), Pod: role, TensorAcrossPods: engine != hub.EngineVLLM}
}

// parallelArgs are the worker's parallelism flags (providers.ParallelArgs),
// none for the mocker or an engine whose parallelism is not rendered.
func (r *renderer) parallelArgs(role string) []string {
	flags, ok := providers.ParallelFlagsFor(r.engine)
	if !ok || r.mocker {
		return nil
	}
	return providers.ParallelArgs(r.md.Spec.Engine, flags, replicaGPUs(r.md, r.engine, role))
}

// checkParallelism refuses a parallelism flag that contradicts the GPUs
// of any worker: prefill and decode share `engine.args`.
func checkParallelism(req *providers.Request, l *diag.List) {
	flags, ok := providers.ParallelFlagsFor(req.Engine)
	if !ok || hub.IsMocker(req.MD) {
		return
	}
	for _, w := range workerServices(req.MD) {
		providers.CheckParallelism(req.MD.Spec.Engine, flags, replicaGPUs(req.MD, req.Engine, w.component), l)
	}
}
