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
		{"kaito", "vllm", `{model: {id: x/Y-8B}, provider: {name: kaito}, resources: {gpu: {count: 1}}}`, "KAITO"},
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
