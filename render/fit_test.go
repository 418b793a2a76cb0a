package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/providers/builtin"
)

func fitProblems(t *testing.T, provider, engine, spec string, models map[string]fit.Model, annotations ...string) diag.List {
	t.Helper()
	caps := resolved(t, threePools)
	md := modelDeployment(t, spec, annotations...)
	p := builtin.ByName()[provider]
	var l diag.List
	pl := place(md, caps, p, &l)
	require.NotNil(t, pl, "%v", l)
	l = nil
	checkFit(md, engine, provider, caps, p, pl, models, &l)
	return l
}

// The instance and its neighbours, on the three-pool cluster.
func TestCheckFit(t *testing.T) {
	l := fitProblems(t, "vllm", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, resources: {gpu: {count: 1}}}`, nil)
	require.True(t, l.HasErrors(), "%v", l)
	require.Equal(t, "spec.resources.gpu.count", l[0].Field)
	require.Contains(t, l[0].Message, `needs about 176,555 MiB`)
	require.Contains(t, l[0].Message, `gets 20,730 MiB`)
	require.Contains(t, l[0].Message, `the fewest that fit are 4 GPUs of pool "h100"`)

	// Four H100s hold it, without a warning.
	require.Empty(t, fitProblems(t, "vllm", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, resources: {gpu: {count: 4}}}`, nil))

	// Disaggregated: each component holds the whole model.
	l = fitProblems(t, "llmd", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 4}}, decode: {gpu: {count: 1}}}}`, nil)
	require.Len(t, l, 1, "%v", l)
	require.Equal(t, "spec.scaling.decode.gpu.count", l[0].Field)

	// SGLang: weights fit, a full sequence does not: a warning, not an error.
	l = fitProblems(t, "dynamo", "sglang", `{model: {id: Qwen/Qwen3-8B}, engine: {type: sglang}, resources: {gpu: {count: 1}}}`, nil)
	require.False(t, l.HasErrors(), "%v", l)
	require.Equal(t, diag.TightFit, l[0].Code)
	// vLLM refuses the same; the error names the longest context that fits.
	l = fitProblems(t, "vllm", "vllm", `{model: {id: Qwen/Qwen3-8B}, resources: {gpu: {count: 1}}}`, nil)
	require.True(t, l.HasErrors(), "%v", l)
	require.Contains(t, l[0].Message, "or serve at most 28,928 tokens")
	// --gpu-memory-utilization in the args counts.
	l = fitProblems(t, "vllm", "vllm", `{model: {id: Qwen/Qwen3-8B}, engine: {contextLength: 8192, args: {gpu-memory-utilization: "0.5"}}, resources: {gpu: {count: 1}}}`, nil)
	require.True(t, l.HasErrors(), "%v", l)
	require.Contains(t, l[0].Message, "--gpu-memory-utilization 0.5")
}

func TestCheckFitSkipsAndAssumptions(t *testing.T) {
	// The Dynamo mocker serves no model.
	require.Empty(t, fitProblems(t, "dynamo", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, provider: {name: dynamo}, resources: {gpu: {count: 1}}}`, nil,
		hub.AnnotationDynamoTestBackend, hub.MockerBackend))
	// Sized from the id: a note, not a warning.
	l := fitProblems(t, "vllm", "vllm", `{model: {id: example/Thing-7B}, resources: {gpu: {count: 1}}}`, nil)
	require.Len(t, l, 1)
	require.Equal(t, diag.Info, l[0].Severity)
	require.Contains(t, l[0].Message, "the size 7B in the id")
	// ... and too big from the id alone: an error that says so.
	l = fitProblems(t, "vllm", "vllm", `{model: {id: example/Thing-70B}, resources: {gpu: {count: 1}}}`, nil)
	require.True(t, l.HasErrors(), "%v", l)
	require.True(t, strings.Contains(l[len(l)-1].Message, "the size 70B in the id"), "%v", l)
	// No facts: not checked, a warning.
	l = fitProblems(t, "vllm", "vllm", `{model: {id: example-org/house-model}, resources: {gpu: {count: 1}}}`, nil)
	require.Len(t, l, 1)
	require.Equal(t, diag.UnknownModel, l[0].Code)
	// Facts the caller read from a directory win over the id.
	mine := fit.Model{ID: "mine/Tiny-1B", Params: 70e9, DType: "bfloat16", Source: "the model directory /m"}
	l = fitProblems(t, "vllm", "vllm", `{model: {id: mine/Tiny-1B}, resources: {gpu: {count: 1}}}`, map[string]fit.Model{"mine/Tiny-1B": mine})
	require.True(t, l.HasErrors(), "%v", l)
	require.Contains(t, l[0].Message, "the model directory /m")
}

// checkFit's verdicts (Result.Fits) carry the numbers it held, or why it
// held none, for plan and preview.
func TestCheckFitVerdicts(t *testing.T) {
	verdicts := func(provider, engine, spec string, annotations ...string) []fit.Verdict {
		t.Helper()
		caps := resolved(t, threePools)
		md := modelDeployment(t, spec, annotations...)
		p := builtin.ByName()[provider]
		var l diag.List
		pl := place(md, caps, p, &l)
		require.NotNil(t, pl, "%v", l)
		return checkFit(md, engine, provider, caps, p, pl, nil, &l)
	}
	v := verdicts("vllm", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, resources: {gpu: {count: 1}}}`)
	require.Len(t, v, 1)
	require.Equal(t, fit.StatusDoesNotFit, v[0].Status)
	require.Equal(t, int64(176555), v[0].NeededMiB)
	require.Equal(t, int64(20730), v[0].AvailableMiB)
	require.Equal(t, "catalog", v[0].Source)
	require.Equal(t, 1, v[0].GPUs)
	require.NotEmpty(t, v[0].Pool)
	require.Less(t, v[0].HeadroomPercent(), 0)

	v = verdicts("vllm", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, resources: {gpu: {count: 4}}}`)
	require.Equal(t, fit.StatusFits, v[0].Status)
	require.Greater(t, v[0].HeadroomPercent(), 10)

	v = verdicts("dynamo", "sglang", `{model: {id: Qwen/Qwen3-8B}, engine: {type: sglang}, resources: {gpu: {count: 1}}}`)
	require.Equal(t, fit.StatusShortContext, v[0].Status)

	v = verdicts("vllm", "vllm", `{model: {id: example/Thing-7B}, resources: {gpu: {count: 1}}}`)
	require.Equal(t, "id", v[0].Source)

	v = verdicts("llmd", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 4}}, decode: {gpu: {count: 1}}}}`)
	require.Len(t, v, 2)
	require.Equal(t, []string{"prefill", "decode"}, []string{v[0].Component, v[1].Component})
	require.Equal(t, fit.StatusDoesNotFit, v[1].Status)

	for _, c := range []struct{ provider, engine, spec, reason string }{
		{"vllm", "vllm", `{model: {id: example-org/house-model}, resources: {gpu: {count: 1}}}`, "unknown model"},
		{"dynamo", "vllm", `{model: {id: x/Y-8B}, provider: {name: dynamo}, resources: {gpu: {count: 1}}}`, "mocker"},
		{"kaito", "vllm", `{model: {id: example-org/house-model}, provider: {name: kaito}, resources: {gpu: {count: 1}}}`, "unknown model"},
	} {
		var ann []string
		if c.reason == "mocker" {
			ann = []string{hub.AnnotationDynamoTestBackend, hub.MockerBackend}
		}
		v = verdicts(c.provider, c.engine, c.spec, ann...)
		require.Len(t, v, 1, c.reason)
		require.Equal(t, fit.StatusNotChecked, v[0].Status, c.reason)
		require.Contains(t, v[0].Reason, c.reason)
	}
}

// KAITO presets are held to KAITO's own node estimator (fit.KAITO), on
// the pool the render placed them on.
func TestKAITOFit(t *testing.T) {
	const llama70B = "meta-llama/Llama-3.3-70B-Instruct"
	run := func(version, pools, spec string) ([]fit.Verdict, diag.List) {
		t.Helper()
		caps := resolved(t, strings.Replace(threePools, `{name: kaito, version: "0.10.0"}`, `{name: kaito, version: "`+version+`"}`, 1)+pools)
		md := modelDeployment(t, spec)
		p := builtin.ByName()["kaito"]
		var l diag.List
		pl := place(md, caps, p, &l)
		require.NotNil(t, pl, "%v", l)
		return checkFit(md, "vllm", "kaito", caps, p, pl, nil, &l), l
	}
	onH100 := `{model: {id: ` + llama70B + `}, provider: {name: kaito}, nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}, resources: {gpu: {count: 1}}}`
	onL4 := `{model: {id: ` + llama70B + `}, provider: {name: kaito}, resources: {gpu: {count: 1}}}`

	v, l := run("0.10.0", "", onH100)
	require.False(t, l.HasErrors(), "%v", l)
	require.NotContains(t, codes(l), diag.KAITONodes, "70B in bf16 takes 3 of one node's 8 H100s: one node")
	require.Equal(t, fit.StatusFits, v[0].Status)
	require.Equal(t, 8, v[0].GPUs, "KAITO gives a preset pod every GPU of its node")
	require.Equal(t, "h100", v[0].Pool)

	v, l = run("0.10.0", "", onL4)
	require.Equal(t, fit.StatusFits, v[0].Status)
	require.Len(t, l, 1, "%v", l)
	require.Equal(t, diag.Warning, l[0].Severity)
	require.Equal(t, diag.KAITONodes, l[0].Code)
	require.Contains(t, l[0].Message, "spreads each replica over 9 nodes, 9 GPUs (weights of 137,261 MiB need 9 GPUs: each uses 19,348 MiB, keeps 2,995 MiB for the engine and the KV cache of one 2,048-token sequence, and holds 16,353 MiB of weights)")

	_, l = run("0.10.0", "", strings.Replace(onL4, "provider:", "scaling: {replicas: 2}, provider:", 1))
	require.Len(t, l, 1)
	require.Equal(t, diag.KAITONodes, l[0].Code, "a pool of unknown size takes any number")
	v, l = run("0.10.0", "    nodes: {max: 10}\n", strings.Replace(onL4, "provider:", "scaling: {replicas: 2}, provider:", 1))
	require.Equal(t, fit.StatusFits, v[0].Status, "the cpu pool's size is not the L4 pool's")
	require.False(t, l.HasErrors(), "%v", l)

	withL4Nodes := strings.Replace(threePools, "    capacity: {cpu: \"16\", memory: 64Gi}\n", "    capacity: {cpu: \"16\", memory: 64Gi}\n    nodes: {min: 0, max: 10}\n", 1)
	caps := resolved(t, withL4Nodes)
	md := modelDeployment(t, strings.Replace(onL4, "provider:", "scaling: {replicas: 2}, provider:", 1))
	p := builtin.ByName()["kaito"]
	l = nil
	pl := place(md, caps, p, &l)
	v = checkFit(md, "vllm", "kaito", caps, p, pl, nil, &l)
	require.Equal(t, fit.StatusDoesNotFit, v[0].Status)
	require.True(t, l.HasErrors())
	require.Equal(t, "spec.scaling.replicas", l.Errors()[0].Field)
	require.Contains(t, l.Errors()[0].Message, "gives each of the 2 replicas 9 nodes")
	require.Contains(t, l.Errors()[0].Message, `18 in all, and pool "l4" has at most 10`)

	v, l = run("0.10.0", "", strings.Replace(onL4, "provider:", "engine: {contextLength: 131072}, provider:", 1))
	require.Equal(t, fit.StatusDoesNotFit, v[0].Status)
	require.Equal(t, "spec.model.id", l.Errors()[0].Field)
	require.Contains(t, l.Errors()[0].Message, "keeps 43,315 MiB of each GPU for the engine and the KV cache of one 131,072-token sequence")

	_, l = run("0.11.0", "", onL4)
	require.Contains(t, l[0].Message, "over 9 nodes", "0.11 divides the room by 1.05: still 9 L4s")
	v, _ = run("0.7.2", "", onL4)
	require.Equal(t, fit.StatusNotChecked, v[0].Status)
	require.Contains(t, v[0].Reason, "KAITO before 0.8")
}

func codes(l diag.List) []diag.Code {
	var out []diag.Code
	for _, p := range l {
		out = append(out, p.Code)
	}
	return out
}
