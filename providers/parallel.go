package providers

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
)

// Parallelism is how one model replica spreads over its GPUs: tensor
// parallel over the GPUs of a pod, pipeline parallel over the pods (one
// per node) of a multi-node replica. A model that does not fit one GPU
// needs it: without it the engine loads every weight on the first GPU and
// runs out of memory however many GPUs the pod requests.
type Parallelism struct {
	Tensor, Pipeline int32
}

// ParallelFlags are an engine's spellings of its parallelism flags,
// without leading dashes; the first of each is the one rendered.
type ParallelFlags struct {
	Tensor, Pipeline []string
}

// Parallelism flags by engine, as each engine's parser reads them:
//   - vLLM (vllm/engine/arg_utils.py, EngineArgs.add_cli_args):
//     `--tensor-parallel-size`/`-tp`, `--pipeline-parallel-size`/`-pp`;
//     its FlexibleArgumentParser also takes underscores for dashes.
//   - SGLang (python/sglang/srt/server_args.py, ServerArgs.add_cli_args):
//     `--tensor-parallel-size`/`--tp-size`,
//     `--pipeline-parallel-size`/`--pp-size`; Dynamo's multinode guide
//     also writes `--tp`, which argparse expands to `--tp-size`.
//   - Dynamo's TensorRT-LLM worker (components/src/dynamo/trtllm,
//     DynamoTrtllmArgGroup): `--tensor-parallel-size`,
//     `--pipeline-parallel-size` (trtllm-serve's own `--tp_size` is not
//     what `python3 -m dynamo.trtllm` parses).
var (
	VLLMParallelFlags = ParallelFlags{
		Tensor:   []string{"tensor-parallel-size", "tensor_parallel_size", "tp"},
		Pipeline: []string{"pipeline-parallel-size", "pipeline_parallel_size", "pp"},
	}
	SGLangParallelFlags = ParallelFlags{
		Tensor:   []string{"tp-size", "tensor-parallel-size", "tp"},
		Pipeline: []string{"pp-size", "pipeline-parallel-size"},
	}
	TRTLLMParallelFlags = ParallelFlags{
		Tensor:   []string{"tensor-parallel-size"},
		Pipeline: []string{"pipeline-parallel-size"},
	}
)

// ParallelFlagsFor is the engine's flag spellings; ok is false for an
// engine whose parallelism the renderer does not set (llama.cpp, the
// mocker, KAITO's presets).
func ParallelFlagsFor(engine string) (ParallelFlags, bool) {
	switch engine {
	case hub.EngineVLLM:
		return VLLMParallelFlags, true
	case hub.EngineSGLang:
		return SGLangParallelFlags, true
	case hub.EngineTRTLLM:
		return TRTLLMParallelFlags, true
	}
	return ParallelFlags{}, false
}

// userParallel is one parallelism flag the user set: where, as written,
// and its value.
type userParallel struct {
	field, written, value string
}

// userParallelFlags finds every spelling of names in `engine.args` and
// `engine.extraArgs` (`--name value`, `--name=value`, `-name value`).
func userParallelFlags(e *hub.EngineSpec, names []string) []userParallel {
	if e == nil {
		return nil
	}
	var out []userParallel
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		if slices.Contains(names, k) {
			out = append(out, userParallel{"spec.engine.args." + k, k, e.Args[k]})
		}
	}
	for i, tok := range e.ExtraArgs {
		if !strings.HasPrefix(tok, "-") {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		if !slices.Contains(names, name) {
			continue
		}
		if !inline && i+1 < len(e.ExtraArgs) {
			value = e.ExtraArgs[i+1]
		}
		out = append(out, userParallel{fmt.Sprintf("spec.engine.extraArgs[%d]", i), tok, value})
	}
	return out
}

// ReplicaGPUs is what a replica runs on: Pods pods (one per node) of
// GPUs GPUs each. Pod names the kind of pod in messages ("decode"), ""
// for the only kind. TensorAcrossPods runs tensor parallelism over every
// GPU of the replica instead of pipeline parallelism over its pods, for
// an engine whose multi-node launch is documented that way.
type ReplicaGPUs struct {
	GPUs, Pods       int32
	Pod              string
	TensorAcrossPods bool
}

// defaults is the parallelism of a replica on r when the user sets none.
func (r ReplicaGPUs) defaults() Parallelism {
	if r.TensorAcrossPods {
		return Parallelism{Tensor: r.total(), Pipeline: 1}
	}
	return Parallelism{Tensor: r.GPUs, Pipeline: max(r.Pods, 1)}
}

// OnePod is a replica of one pod with gpus GPUs.
func OnePod(gpus int32, pod string) ReplicaGPUs { return ReplicaGPUs{GPUs: gpus, Pods: 1, Pod: pod} }

func (r ReplicaGPUs) total() int32 { return r.GPUs * max(r.Pods, 1) }

// String names the GPUs for messages: "the 4 GPUs per pod", "the 2 × 4
// GPUs of a decode replica's 2 pods".
func (r ReplicaGPUs) String() string {
	pod := r.Pod
	if pod != "" {
		pod += " "
	}
	if r.Pods > 1 {
		return fmt.Sprintf("the %d × %d GPUs of a %sreplica's %d pods", r.Pods, r.GPUs, pod, r.Pods)
	}
	unit := "GPUs"
	if r.GPUs == 1 {
		unit = "GPU"
	}
	return fmt.Sprintf("the %d %s per %spod", r.GPUs, unit, pod)
}

// resolved is a parallelism and which of its sizes the user set.
type resolved struct {
	p                        Parallelism
	userTensor, userPipeline []userParallel
	problem                  string // at field, "" when none
	field                    string
}

// resolveParallelism is the parallelism of a replica on r: tensor
// parallel over the GPUs of a pod and pipeline parallel over its pods
// (or tensor parallel over all, TensorAcrossPods). A
// size the user sets replaces its default, and the two must still
// multiply to r's GPUs: tensor 1 × pipeline 2 on a pod of 2 GPUs is
// fine, tensor 2 alone on 4 GPUs is not (half of them would idle). One
// size set to all of r's GPUs leaves the other at 1: tensor parallel 8
// over 2 pods of 4 is Dynamo's documented multi-node form.
func resolveParallelism(e *hub.EngineSpec, flags ParallelFlags, r ReplicaGPUs) resolved {
	res := resolved{p: r.defaults(), userTensor: userParallelFlags(e, flags.Tensor), userPipeline: userParallelFlags(e, flags.Pipeline)}
	total := r.total()
	t, tOK := res.size(res.userTensor, "tensor")
	p, pOK := res.size(res.userPipeline, "pipeline")
	if res.problem != "" {
		return res
	}
	switch {
	case tOK && !pOK && t == total:
		res.p = Parallelism{Tensor: t, Pipeline: 1}
	case pOK && !tOK && p == total:
		res.p = Parallelism{Tensor: 1, Pipeline: p}
	default:
		if tOK {
			res.p.Tensor = t
		}
		if pOK {
			res.p.Pipeline = p
		}
	}
	if res.p.Tensor*res.p.Pipeline != total {
		u := append(res.userTensor, res.userPipeline...)[0]
		res.field = u.field
		res.problem = fmt.Sprintf("%q sets %s, which contradicts %s: the tensor parallel size × the pipeline parallel size must be %d; leave both out for %d × %d, or set both to sizes whose product is %d", u.written, res.sizes(tOK, t, pOK, p), r, total, r.defaults().Tensor, r.defaults().Pipeline, total)
	}
	return res
}

// size is the last of the user's values for one size (the engines'
// parsers keep the last), ok false when the user set none; a value that
// is no positive whole number is a problem.
func (res *resolved) size(us []userParallel, what string) (int32, bool) {
	if len(us) == 0 {
		return 0, false
	}
	u := us[len(us)-1]
	n, err := strconv.ParseInt(u.value, 10, 32)
	if err != nil || n < 1 {
		res.field = u.field
		res.problem = fmt.Sprintf("%q sets the %s parallel size to %q, which is not a positive whole number", u.written, what, u.value)
		return 0, false
	}
	return int32(n), true
}

func (res *resolved) sizes(tOK bool, t int32, pOK bool, p int32) string {
	switch {
	case tOK && pOK:
		return fmt.Sprintf("the tensor parallel size to %d and the pipeline parallel size to %d", t, p)
	case tOK:
		return fmt.Sprintf("the tensor parallel size to %d", t)
	}
	return fmt.Sprintf("the pipeline parallel size to %d", p)
}

// ParallelArgs are the flags that set the parallelism of a replica on r
// (resolveParallelism): each size the user did not set, when it is not 1
// (the engines' default). The user's own flags stay where the user put
// them, so each size appears once.
func ParallelArgs(e *hub.EngineSpec, flags ParallelFlags, r ReplicaGPUs) []string {
	if r.GPUs <= 0 {
		return nil
	}
	res := resolveParallelism(e, flags, r)
	var out []string
	if len(res.userTensor) == 0 && res.p.Tensor > 1 {
		out = append(out, "--"+flags.Tensor[0], strconv.Itoa(int(res.p.Tensor)))
	}
	if len(res.userPipeline) == 0 && res.p.Pipeline > 1 {
		out = append(out, "--"+flags.Pipeline[0], strconv.Itoa(int(res.p.Pipeline)))
	}
	return out
}

// CheckParallelism reports explicit parallelism flags that contradict the
// GPUs of a replica on r: the renderer requests the GPUs, so a
// parallelism over another number either leaves GPUs idle or asks for
// GPUs the pod does not have, and the engine fails at start or runs out
// of memory. A replica without GPUs is not checked.
func CheckParallelism(e *hub.EngineSpec, flags ParallelFlags, r ReplicaGPUs, l *diag.List) {
	if r.GPUs <= 0 {
		return
	}
	if res := resolveParallelism(e, flags, r); res.problem != "" {
		l.Errorf(res.field, "%s", res.problem)
	}
}

// shmSizeLimit bounds the memory-backed /dev/shm of a multi-GPU pod.
const shmSizeLimit = "20Gi"

// SharedMemory is the volume and mount of a memory-backed /dev/shm for a
// pod with more than one GPU, nothing otherwise. NCCL exchanges data
// between the GPUs of a pod through /dev/shm, and a container runtime's
// default (64Mi) is too small for it: the engine fails or hangs when it
// starts its tensor-parallel workers.
func SharedMemory(gpus int32) ([]corev1.Volume, []corev1.VolumeMount) {
	if gpus <= 1 {
		return nil, nil
	}
	limit := resource.MustParse(shmSizeLimit)
	return []corev1.Volume{{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &limit}}}},
		[]corev1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}}
}

// AddParallelism appends vLLM's flags for a replica on r (ParallelArgs).
func (c *CommandLine) AddParallelism(r ReplicaGPUs) {
	c.args = append(c.args, ParallelArgs(c.engine, VLLMParallelFlags, r)...)
}

// ParallelismOf is the parallelism a replica on r runs with
// (resolveParallelism); ok is false when the user's flags contradict
// r's GPUs (CheckParallelism reports that).
func ParallelismOf(e *hub.EngineSpec, flags ParallelFlags, r ReplicaGPUs) (Parallelism, bool) {
	res := resolveParallelism(e, flags, r)
	return res.p, res.problem == ""
}
