package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

// kaitoCluster has KAITO at VERSION and bring-your-own GPU pools of one
// and of four L4s, one and eight H100s a node, each chosen by its own
// label (`pool`).
const kaitoCluster = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: kaito}
spec:
  providers:
  - {name: kaito, version: "VERSION"}
  nodePools:
  - name: l4
    selector: {pool: l4}
    gpu: {product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
  - name: l4x4
    selector: {pool: l4x4}
    gpu: {product: NVIDIA-L4, memoryMiB: 23034, perNode: 4}
  - name: h100
    selector: {pool: h100}
    gpu: {product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, perNode: 1}
  - name: h100x8
    selector: {pool: h100x8}
    gpu: {product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, perNode: 8}
`

// kaitoFit runs the memory fit of a KAITO preset of model on pool under
// KAITO release, the cluster edited by edit (old, new pairs), the model's
// spec extended by extra.
func kaitoFit(t *testing.T, release, model, pool, extra string, edit ...string) ([]fit.Verdict, diag.List) {
	t.Helper()
	doc := strings.Replace(kaitoCluster, "VERSION", release, 1)
	for i := 0; i+1 < len(edit); i += 2 {
		require.Contains(t, doc, edit[i])
		doc = strings.Replace(doc, edit[i], edit[i+1], 1)
	}
	caps := resolved(t, doc)
	md := modelDeployment(t, `{model: {id: `+model+`}, provider: {name: kaito}, nodeSelector: {pool: `+pool+`}, resources: {gpu: {count: 1}}`+extra+`}`)
	p := builtin.ByName()["kaito"]
	var l diag.List
	pl := place(md, caps, p, &l)
	require.NotNil(t, pl, "%v", l)
	require.Equal(t, pool, pl.Components[""].Pool)
	l = nil
	return checkFit(md, "vllm", "kaito", caps, p, pl, nil, &l), l
}

// The worked examples of the research report (issue 46, §6): KAITO's own
// node counts, release by release.
func TestKAITOFitWorkedExamples(t *testing.T) {
	const llama8B, gptOSS120B = "meta-llama/Llama-3.1-8B-Instruct", "openai/gpt-oss-120b"
	for _, c := range []struct {
		name, release, model, pool, extra string
		edit                              []string
		status                            fit.Status
		gpus                              int
		errField                          string   // the error's field, "" for none
		warning                           bool     // a kaito-nodes warning
		messages                          []string // in the error or warning
	}{
		// A. Llama 3.1 8B on 1 × L4 (23,034 MiB: 22 GiB): 1 node to 0.10,
		// 2 from 0.11, whose room is divided by 1.05.
		{name: "llama 8B, 1×L4, 0.8.0", release: "0.8.0", model: llama8B, pool: "l4", status: fit.StatusFits, gpus: 1},
		{name: "llama 8B, 1×L4, 0.9.2", release: "0.9.2", model: llama8B, pool: "l4", status: fit.StatusFits, gpus: 1},
		{name: "llama 8B, 1×L4, 0.10.0", release: "0.10.0", model: llama8B, pool: "l4", status: fit.StatusFits, gpus: 1},
		{name: "llama 8B, 1×L4, 0.11.0", release: "0.11.0", model: llama8B, pool: "l4", status: fit.StatusFits, gpus: 2, warning: true,
			messages: []string{"spreads each replica over 2 nodes, 2 GPUs", "holds 15,535 MiB of weights (what is left ÷ 1.05)", "figures from v0.11.0's model catalog entry meta-llama/Llama-3.1-8B-Instruct (KAITO's presets/workspace/models/model_catalog.yaml:"}},
		{name: "llama 8B, 1×L4, 0.12.0", release: "0.12.0", model: llama8B, pool: "l4", status: fit.StatusFits, gpus: 2, warning: true},
		// ... spec.engine.contextLength does not reach a preset: 2,048.
		{name: "llama 8B at 131,072 tokens asked, 0.10.0", release: "0.10.0", model: llama8B, pool: "l4", extra: ", engine: {contextLength: 131072}", status: fit.StatusFits, gpus: 1},
		// C. gpt-oss-120b on 1 × H100: 60.77Gi to 0.10 (1 node), 121.54Gi
		// from 0.11 (3 nodes), refused by the webhook on a one-node pool.
		{name: "gpt-oss-120b, 1×H100, 0.10.0", release: "0.10.0", model: gptOSS120B, pool: "h100", status: fit.StatusFits, gpus: 1},
		{name: "gpt-oss-120b, 1×H100, 0.11.0", release: "0.11.0", model: gptOSS120B, pool: "h100", status: fit.StatusFits, gpus: 3, warning: true,
			messages: []string{"spreads each replica over 3 nodes"}},
		{name: "gpt-oss-120b, a pool of one 1×H100 node, 0.11.0", release: "0.11.0", model: gptOSS120B, pool: "h100",
			edit:   []string{"perNode: 1}\n  - name: h100x8", "perNode: 1}\n    nodes: {count: 1}\n  - name: h100x8"},
			status: fit.StatusDoesNotFit, gpus: 3, errField: "spec.model.id",
			messages: []string{"admission webhook refuses the Workspace", "the pool's 1 node holds 80 GiB of GPU memory as it counts it (80 GiB a node: the nvidia.com/gpu.memory label rounded to 80 GiB, × 1 GPU)", `"Insufficient total GPU memory: Instance type  has a total of 80Gi, but preset openai/gpt-oss-120b requires at least 130502581288960m"`}},
		{name: "gpt-oss-120b, a pool of one 1×H100 node, 0.10.0", release: "0.10.0", model: gptOSS120B, pool: "h100",
			edit:   []string{"perNode: 1}\n  - name: h100x8", "perNode: 1}\n    nodes: {count: 1}\n  - name: h100x8"},
			status: fit.StatusFits, gpus: 1},
		// phi-4 on 1 × L4 in 0.9: 2 nodes, and phi-4 does not support
		// distributed inference there; 0.10 serves it from the catalog.
		{name: "phi-4, 1×L4, 0.9.0", release: "0.9.0", model: "phi-4", pool: "l4", status: fit.StatusDoesNotFit, gpus: 2, errField: "spec.model.id",
			messages: []string{"needs 2 nodes for each replica", "phi-4 does not support distributed inference in KAITO 0.9.0",
				`"models with disabled support distributed inference cannot be distributed across more than 1 GPU node, please use a node with larger GPU memory, calculated nodes: 2"`}},
		{name: "microsoft/phi-4, 1×L4, 0.9.0", release: "0.9.0", model: "microsoft/phi-4", pool: "l4", status: fit.StatusDoesNotFit, gpus: 2, errField: "spec.model.id",
			messages: []string{"calculated nodes: 2", "the preset phi-4, which KAITO v0.9.0 serves for microsoft/phi-4"}},
		{name: "phi-4, 1×L4, 0.8.1 by its HF id", release: "0.8.1", model: "microsoft/phi-4", pool: "l4", status: fit.StatusDoesNotFit, gpus: 2, errField: "spec.model.id",
			messages: []string{"microsoft/phi-4 (KAITO's preset phi-4) on pool"}},
		{name: "phi-4, 1×L4, 0.10.0", release: "0.10.0", model: "phi-4", pool: "l4", status: fit.StatusFits, gpus: 2, warning: true},
		// Llama 3.1 8B on 4 × L4 a node: 0.9 divides the label by 4
		// (5.5 GiB a GPU) and takes 2 nodes; 0.10 one.
		{name: "llama 8B, 4×L4, 0.9.0", release: "0.9.0", model: llama8B, pool: "l4x4", status: fit.StatusFits, gpus: 8, warning: true,
			messages: []string{"spreads each replica over 2 nodes, 8 GPUs", "each counts 5,632 MiB", "divides the per-GPU nvidia.com/gpu.memory label (22 GiB) by the node's 4 GPUs, a bug fixed in 0.10.0", "it would take 1 node"}},
		{name: "llama 8B, 4×L4, 0.10.0", release: "0.10.0", model: llama8B, pool: "l4x4", status: fit.StatusFits, gpus: 4},
		// gpt-oss-120b on 8 × H100 a node in 0.9: 10 GiB a GPU, 2 nodes,
		// not distributed: the bug alone fails the Workspace.
		{name: "gpt-oss-120b, 8×H100, 0.9.0", release: "0.9.0", model: gptOSS120B, pool: "h100x8", status: fit.StatusDoesNotFit, gpus: 16, errField: "spec.model.id",
			messages: []string{"calculated nodes: 2", "counting each GPU whole, it would take 1 node"}},
		// 0.8/0.9's webhook also counts one GPU of a node.
		{name: "llama 70B, one 8×H100 node, 0.9.0", release: "0.9.0", model: "meta-llama/Llama-3.3-70B-Instruct", pool: "h100x8",
			edit:   []string{"perNode: 8}\n", "perNode: 8}\n    nodes: {count: 1}\n"},
			status: fit.StatusDoesNotFit, gpus: 24, errField: "spec.model.id",
			messages: []string{"the pool's 1 node holds 80 GiB of GPU memory as it counts it (80 GiB a node: one GPU's nvidia.com/gpu.memory label", "KAITO 0.9.0 counts no other GPU of a node", "counting every GPU of a node, as from KAITO 0.10.0, it would hold 640 GiB and pass"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, l := kaitoFit(t, c.release, c.model, c.pool, c.extra, c.edit...)
			require.Len(t, v, 1)
			require.Equal(t, c.status, v[0].Status, "%v", l)
			require.Equal(t, c.gpus, v[0].GPUs)
			var msgs []string
			if c.errField != "" {
				require.True(t, l.HasErrors(), "%v", l)
				require.Equal(t, c.errField, l.Errors()[0].Field)
				msgs = append(msgs, l.Errors()[0].Message)
			} else {
				require.False(t, l.HasErrors(), "%v", l)
			}
			if c.warning {
				require.Contains(t, codes(l), diag.KAITONodes)
				for _, p := range l {
					if p.Code == diag.KAITONodes {
						msgs = append(msgs, p.Message)
					}
				}
			} else {
				require.NotContains(t, codes(l), diag.KAITONodes)
			}
			for _, m := range c.messages {
				require.Contains(t, strings.Join(msgs, "\n"), m)
			}
		})
	}
}

// What the render does around the estimate: preset names KAITO refuses,
// models it generates from the Hub, pools of a stated size, releases
// without an estimator.
func TestKAITOFit(t *testing.T) {
	const llama70B = "meta-llama/Llama-3.3-70B-Instruct"

	// 70B in bf16 takes 3 of one node's 8 H100s: one node.
	v, l := kaitoFit(t, "0.10.0", llama70B, "h100x8", "")
	require.False(t, l.HasErrors(), "%v", l)
	require.NotContains(t, codes(l), diag.KAITONodes)
	require.Equal(t, fit.StatusFits, v[0].Status)
	require.Equal(t, 8, v[0].GPUs, "KAITO gives a preset pod every GPU of its node")
	require.Equal(t, "kaito", v[0].Source)

	v, l = kaitoFit(t, "0.10.0", llama70B, "l4", "")
	require.Equal(t, fit.StatusFits, v[0].Status)
	require.Len(t, l, 1, "%v", l)
	require.Equal(t, diag.KAITONodes, l[0].Code)
	require.Contains(t, l[0].Message, "spreads each replica over 9 nodes, 9 GPUs (weights of 137,265 MiB need 9 GPUs: each counts 22,528 MiB, uses 18,923 MiB of it, keeps 2,995 MiB for the engine and the KV cache of one 2,048-token sequence, and holds 15,928 MiB of weights)")
	require.Contains(t, l[0].Message, "figures from the preset llama-3.3-70b-instruct, which KAITO v0.10.0 serves for meta-llama/Llama-3.3-70B-Instruct (KAITO's presets/workspace/models/llama3/model.go:")

	// A pool of a stated size: the replicas' nodes must be there.
	two := ", scaling: {replicas: 2}"
	v, l = kaitoFit(t, "0.10.0", llama70B, "l4", two, "perNode: 1}\n  - name: l4x4", "perNode: 1}\n    nodes: {min: 0, max: 10}\n  - name: l4x4")
	require.Equal(t, fit.StatusDoesNotFit, v[0].Status)
	require.Equal(t, "spec.scaling.replicas", l.Errors()[0].Field)
	require.Contains(t, l.Errors()[0].Message, "gives each of the 2 replicas 9 nodes")
	require.Contains(t, l.Errors()[0].Message, `18 in all, and pool "l4" has at most 10`)
	v, l = kaitoFit(t, "0.10.0", llama70B, "l4", two, "perNode: 4}\n", "perNode: 4}\n    nodes: {max: 10}\n")
	require.Equal(t, fit.StatusFits, v[0].Status, "the l4x4 pool's size is not the l4 pool's")
	require.False(t, l.HasErrors(), "%v", l)

	// A name KAITO's webhook refuses.
	v, l = kaitoFit(t, "0.11.0", "falcon-7b", "h100", "")
	require.Equal(t, fit.StatusDoesNotFit, v[0].Status)
	require.Contains(t, l.Errors()[0].Message, `"falcon-7b" is no preset of KAITO 0.11.0, whose admission webhook refuses the Workspace: "Unsupported inference preset name falcon-7b"`)
	_, l = kaitoFit(t, "0.8.0", "qwen3-8b", "h100", "")
	require.Contains(t, l.Errors()[0].Message, `"Unsupported inference preset name qwen3-8b"`)
	_, l = kaitoFit(t, "0.10.0", "llama-3.1-8b-instruct", "l4", "")
	require.False(t, l.HasErrors(), "%v", l)
	_, l = kaitoFit(t, "0.10.0", "x", "l4", `, provider: {name: kaito, overrides: {inference: {preset: {name: Phi-4}}}}`)
	require.Equal(t, "spec.provider.overrides.inference.preset.name", l.Errors()[0].Field)

	// GPUs too small: KAITO's own message, per release.
	v, l = kaitoFit(t, "0.10.0", "falcon-7b", "l4", "", "memoryMiB: 23034, perNode: 1}", "memoryMiB: 15360, perNode: 1}")
	require.Equal(t, fit.StatusDoesNotFit, v[0].Status)
	require.Contains(t, l.Errors()[0].Message, `KAITO serves falcon-7b without tensor parallelism, so one GPU must hold the whole model and its reserve, and KAITO fails the Workspace: "GPU memory 16106127360 bytes is too small for model, needs`)
	_, l = kaitoFit(t, "0.8.0", "phi-3-mini-4k-instruct", "l4", "", "memoryMiB: 23034, perNode: 1}", "memoryMiB: 3072, perNode: 1}")
	require.Contains(t, l.Errors()[0].Message, `"GPU memory 3221225472 bytes is too small, needs at least 3.0 GB overhead (base: 2.3GB + Advanced KV Cache: 0.8 GB)"`)
	_, l = kaitoFit(t, "0.12.0", "phi-3-mini-4k-instruct", "l4", "", "memoryMiB: 23034, perNode: 1}", "memoryMiB: 3072, perNode: 1}")
	require.Contains(t, l.Errors()[0].Message, `"GPU memory 3221225472 bytes is too small, needs at least 3.0 GB overhead (base: 2.3GB + KV Cache: 0.8 GB)"`)

	// A model KAITO generates from the Hub: the catalog's facts, said.
	v, l = kaitoFit(t, "0.9.0", "Qwen/Qwen3-8B", "l4", "")
	require.Equal(t, fit.StatusFits, v[0].Status)
	require.Equal(t, "catalog", v[0].Source)
	require.Equal(t, diag.Info, l[0].Severity)
	require.Contains(t, l[0].Message, `"Qwen/Qwen3-8B" is none of KAITO 0.9.0's models: KAITO generates its preset from the Hugging Face Hub when it reconciles the Workspace`)
	require.Contains(t, l[0].Message, "the node estimate uses the model catalog's facts instead")
	v, l = kaitoFit(t, "0.12.0", "example-org/house-model", "l4", "")
	require.Equal(t, fit.StatusNotChecked, v[0].Status)
	require.Contains(t, v[0].Reason, "unknown model")
	require.Equal(t, diag.Info, l[0].Severity)
	require.Contains(t, l[0].Message, "memory fit not checked")

	// A ConfigMap named by the overrides, node auto-provisioning: said.
	_, l = kaitoFit(t, "0.10.0", "meta-llama/Llama-3.1-8B-Instruct", "l4", `, provider: {name: kaito, overrides: {inference: {config: my-vllm}}}`)
	require.Contains(t, l[0].Message, `names the ConfigMap "my-vllm"`)
	require.Equal(t, "spec.provider.overrides.inference.config", l[0].Field)

	v, _ = kaitoFit(t, "0.7.2", llama70B, "l4", "")
	require.Equal(t, fit.StatusNotChecked, v[0].Status)
	require.Contains(t, v[0].Reason, "KAITO before 0.8")
}
