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

// verdicts runs the memory fit of one model on the three-pool cluster.
func verdicts(t *testing.T, provider, engine, spec string, models map[string]fit.Model, annotations ...string) ([]fit.Verdict, diag.List) {
	t.Helper()
	// vLLM v0.19.1, whose arithmetic the calibration table holds to
	// public logs (the provider's default image is a nightly build).
	caps := resolved(t, strings.Replace(threePools, "  - {name: vllm}\n", "  - {name: vllm, images: {vllm: \"vllm/vllm-openai:v0.19.1\"}}\n", 1))
	md := modelDeployment(t, spec, annotations...)
	p := builtin.ByName()[provider]
	var l diag.List
	pl := place(md, caps, p, &l)
	require.NotNil(t, pl, "%v", l)
	l = nil
	return checkFit(md, engine, provider, caps, p, pl, models, &l), l
}

const onH100 = `nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}`

// The audit's cases (issue 46): each gets vLLM's own answer.
func TestVLLMFitAudit(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		status     fit.Status
		reason     string // the refusal's word, or why not checked
		field      string
		messages   []string
	}{
		{"70B on one L4: the weights alone", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, resources: {gpu: {count: 1}}}`, fit.StatusDoesNotFit, fit.RefusedNoMemory,
			"spec.resources.gpu.count", []string{"No available memory for the cache blocks", `the fewest that start it are 4 GPUs of pool "h100"`}},
		{"Qwen2.5-72B on 2 H100 at the default utilisation", `{model: {id: Qwen/Qwen2.5-72B}, engine: {contextLength: 8192}, resources: {gpu: {count: 2}}, ` + onH100 + `}`,
			fit.StatusDoesNotFit, fit.RefusedNoMemory, "spec.resources.gpu.count", []string{"outside torch 2,150 MiB", "No available memory for the cache blocks"}},
		{"Qwen2.5-72B on 2 H100 at 0.95 starts", `{model: {id: Qwen/Qwen2.5-72B}, engine: {contextLength: 8192, args: {gpu-memory-utilization: "0.95"}}, resources: {gpu: {count: 2}}, ` + onH100 + `}`,
			fit.StatusFits, "", "", nil},
		{"phi-4 above its derived length", `{model: {id: microsoft/phi-4}, engine: {contextLength: 32768}, resources: {gpu: {count: 1}}, ` + onH100 + `}`,
			fit.StatusDoesNotFit, fit.RefusedMaxModelLen, "spec.engine.contextLength", []string{"User-specified max_model_len (32768) is greater than the derived max_model_len (max_position_embeddings=16384", "serve at most 16,384 tokens"}},
		{"Qwen3-8B at 131,072", `{model: {id: Qwen/Qwen3-8B}, engine: {contextLength: 131072}, resources: {gpu: {count: 1}}, ` + onH100 + `}`,
			fit.StatusDoesNotFit, fit.RefusedMaxModelLen, "spec.engine.contextLength", []string{"derived max_model_len (max_position_embeddings=40960"}},
		{"Llama 3.3 70B on 3 GPUs", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, resources: {gpu: {count: 3}}}`, fit.StatusDoesNotFit, fit.RefusedHeads,
			"spec.resources.gpu.count", []string{"Total number of attention heads (64) must be divisible by tensor parallel size (3).", "the tensor parallel sizes it accepts are 1, 2, 4, 8"}},
		{"Mixtral on 3", `{model: {id: mistralai/Mixtral-8x7B-Instruct-v0.1}, resources: {gpu: {count: 3}}}`, fit.StatusDoesNotFit, fit.RefusedHeads, "spec.resources.gpu.count", nil},
		{"phi-4 on 4: its 10 KV heads", `{model: {id: microsoft/phi-4}, resources: {gpu: {count: 4}}}`, fit.StatusDoesNotFit, fit.RefusedKVHeads,
			"spec.resources.gpu.count", []string{"the tensor parallel sizes it accepts are 1, 2"}},
		{"Qwen3-14B on 5: its vocabulary", `{model: {id: Qwen/Qwen3-14B}, resources: {gpu: {count: 5}}}`, fit.StatusDoesNotFit, fit.RefusedVocabulary,
			"spec.resources.gpu.count", []string{`"151936 is not divisible by 5"`}},
		{"Llama 3.1 8B on 3", `{model: {id: meta-llama/Llama-3.1-8B-Instruct}, resources: {gpu: {count: 3}}}`, fit.StatusDoesNotFit, fit.RefusedHeads, "spec.resources.gpu.count", nil},
		{"Llama 3.1 8B on 6", `{model: {id: meta-llama/Llama-3.1-8B-Instruct}, resources: {gpu: {count: 6}}}`, fit.StatusDoesNotFit, fit.RefusedHeads, "spec.resources.gpu.count", nil},
		{"Llama 3.1 8B on one L4 at its default 131,072 tokens", `{model: {id: meta-llama/Llama-3.1-8B-Instruct}, resources: {gpu: {count: 1}}}`, fit.StatusDoesNotFit, fit.RefusedOneSequence,
			"spec.resources.gpu.count", []string{"To serve at least one request with the models's max seq len (131072)", "or serve at most 33,792 tokens"}},
		{"... at 33,792, the advice", `{model: {id: meta-llama/Llama-3.1-8B-Instruct}, engine: {contextLength: 33792}, resources: {gpu: {count: 1}}}`, fit.StatusTight, "", "spec.resources.gpu.count", []string{"tight fit"}},
		{"... at 8,192", `{model: {id: meta-llama/Llama-3.1-8B-Instruct}, engine: {contextLength: 8192}, resources: {gpu: {count: 1}}}`, fit.StatusFits, "", "", nil},
		{"gpt-oss-120b on one H100 at 131,072", `{model: {id: openai/gpt-oss-120b}, resources: {gpu: {count: 1}}, ` + onH100 + `}`, fit.StatusDoesNotFit, fit.RefusedOneSequence,
			"spec.resources.gpu.count", []string{"or serve at most 97,280 tokens"}},
		{"gpt-oss-120b on one H100 at 0.95", `{model: {id: openai/gpt-oss-120b}, engine: {args: {gpu-memory-utilization: "0.95"}}, resources: {gpu: {count: 1}}, ` + onH100 + `}`, fit.StatusFits, "", "", nil},
		{"Llama 3.2 3B on one L4: known now, refused at its default length", `{model: {id: meta-llama/Llama-3.2-3B-Instruct}, resources: {gpu: {count: 1}}}`, fit.StatusDoesNotFit, fit.RefusedOneSequence, "spec.resources.gpu.count", nil},
		{"an FP8 Llama the catalog lacks: not checked, said", `{model: {id: RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8}, resources: {gpu: {count: 1}}}`, fit.StatusNotChecked, "only its weights were assumed", "spec.model.id",
			[]string{"memory fit not checked", "catalog add"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, l := verdicts(t, "vllm", "vllm", c.spec, nil)
			require.Len(t, v, 1)
			require.Equal(t, c.status, v[0].Status, "%v", l)
			require.Contains(t, v[0].Reason, c.reason)
			if c.field == "" {
				require.False(t, l.HasErrors(), "%v", l)
				return
			}
			require.NotEmpty(t, l)
			require.Equal(t, c.field, l[0].Field, "%v", l)
			for _, m := range c.messages {
				require.Contains(t, l[0].Message, m)
			}
		})
	}
}

// The arithmetic shows in the verdict: per GPU, the KV cache's tokens and
// concurrency, for plan -o json.
func TestVLLMFitVerdict(t *testing.T) {
	v, l := verdicts(t, "vllm", "vllm", `{model: {id: meta-llama/Llama-3.1-8B-Instruct}, engine: {contextLength: 8192}, resources: {gpu: {count: 1}}}`, nil)
	require.Empty(t, l)
	require.Equal(t, fit.StatusFits, v[0].Status)
	require.Equal(t, "catalog", v[0].Source)
	require.Contains(t, v[0].Engine, "vLLM")
	p := v[0].PerGPU
	require.NotNil(t, p)
	require.Equal(t, int64(22559), p.TotalMiB, "an L4 as torch sees it: 22.03 GiB")
	require.Equal(t, p.UsableMiB-p.WeightsMiB-p.NonTorchMiB-p.ActivationMiB, p.KVCacheMiB, "%+v", p)
	require.Equal(t, 8192, v[0].ContextLength)
	require.Greater(t, v[0].KVCacheTokens, int64(30000))
	require.InDelta(t, float64(v[0].KVCacheTokens)/8192, v[0].MaxConcurrency, 0.01)

	// Disaggregated: each component holds the whole model.
	v, l = verdicts(t, "llmd", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, serving: {mode: disaggregated}, scaling: {prefill: {gpu: {count: 4}}, decode: {gpu: {count: 1}}}}`, nil)
	require.Len(t, v, 2)
	require.Equal(t, []string{"prefill", "decode"}, []string{v[0].Component, v[1].Component})
	require.Equal(t, fit.StatusDoesNotFit, v[1].Status)
	require.Equal(t, "spec.scaling.decode.gpu.count", l.Errors()[0].Field)
}

func TestCheckFitSkipsAndAssumptions(t *testing.T) {
	// The Dynamo mocker serves no model.
	v, l := verdicts(t, "dynamo", "vllm", `{model: {id: meta-llama/Llama-3.3-70B-Instruct}, provider: {name: dynamo}, resources: {gpu: {count: 1}}}`, nil,
		hub.AnnotationDynamoTestBackend, hub.MockerBackend)
	require.Empty(t, l)
	require.Contains(t, v[0].Reason, "mocker")
	// Sized from the id: not checked, a warning that says how to give facts.
	v, l = verdicts(t, "vllm", "vllm", `{model: {id: example/Thing-7B}, resources: {gpu: {count: 1}}}`, nil)
	require.Len(t, l, 1)
	require.Equal(t, diag.UnknownModel, l[0].Code)
	require.Contains(t, l[0].Message, "the size 7B in the id")
	require.Equal(t, "id", v[0].Source)
	require.Equal(t, fit.StatusNotChecked, v[0].Status)
	// ... and too big from the id alone: an error that says so.
	_, l = verdicts(t, "vllm", "vllm", `{model: {id: example/Thing-70B}, resources: {gpu: {count: 1}}}`, nil)
	require.True(t, l.HasErrors(), "%v", l)
	require.Contains(t, l.Errors()[0].Message, "the size 70B in the id")
	// No facts: not checked, a warning.
	v, l = verdicts(t, "vllm", "vllm", `{model: {id: example-org/house-model}, resources: {gpu: {count: 1}}}`, nil)
	require.Len(t, l, 1)
	require.Equal(t, diag.UnknownModel, l[0].Code)
	require.Contains(t, v[0].Reason, "unknown model")
	// Facts the caller read from a directory win over the id.
	mine := fit.Model{ID: "mine/Tiny-1B", Params: 70e9, DType: "bfloat16", Source: "the model directory /m"}
	_, l = verdicts(t, "vllm", "vllm", `{model: {id: mine/Tiny-1B}, resources: {gpu: {count: 1}}}`, map[string]fit.Model{"mine/Tiny-1B": mine})
	require.True(t, l.HasErrors(), "%v", l)
	require.Contains(t, l[0].Message, "the model directory /m")
	// An engine without start-up arithmetic of its own: a lower bound and
	// a warning that says so.
	v, l = verdicts(t, "dynamo", "sglang", `{model: {id: Qwen/Qwen3-8B}, engine: {type: sglang}, resources: {gpu: {count: 1}}}`, nil)
	require.Equal(t, fit.StatusShortContext, v[0].Status)
	require.Contains(t, codes(l), diag.UncalibratedFit)
	for _, c := range []struct{ provider, engine, spec, reason string }{
		{"kaito", "vllm", `{model: {id: example-org/house-model}, provider: {name: kaito}, resources: {gpu: {count: 1}}}`, "unknown model"},
	} {
		v, _ = verdicts(t, c.provider, c.engine, c.spec, nil)
		require.Len(t, v, 1, c.reason)
		require.Equal(t, fit.StatusNotChecked, v[0].Status, c.reason)
		require.Contains(t, v[0].Reason, c.reason)
	}
}

func codes(l diag.List) []diag.Code {
	var out []diag.Code
	for _, p := range l {
		out = append(out, p.Code)
	}
	return out
}

// A "fits" with engine arguments the arithmetic does not follow is said
// to be one: a draft model, LoRA slots, a kernel of another quantization.
func TestVLLMFitUnfollowedFlags(t *testing.T) {
	for _, c := range []struct{ spec, flag string }{
		{`{model: {id: meta-llama/Llama-3.1-8B-Instruct}, engine: {contextLength: 8192, args: {enable-lora: "true"}}, resources: {gpu: {count: 1}}}`, "--enable-lora"},
		{`{model: {id: meta-llama/Llama-3.1-8B-Instruct}, engine: {contextLength: 8192, extraArgs: ["--speculative-config={\"model\": \"x\", \"num_speculative_tokens\": 3}"]}, resources: {gpu: {count: 1}}}`, "--speculative-config"},
		{`{model: {id: Qwen/Qwen3-32B-FP8}, engine: {contextLength: 8192, args: {quantization: awq}}, resources: {gpu: {count: 1}}, ` + onH100 + `}`, "--quantization awq"},
	} {
		v, l := verdicts(t, "vllm", "vllm", c.spec, nil)
		require.Len(t, v, 1)
		require.Equal(t, fit.StatusFits, v[0].Status, "%v", l)
		require.Len(t, l, 1, "%v", l)
		require.Equal(t, diag.UncalibratedFit, l[0].Code)
		require.Contains(t, l[0].Message, "without "+c.flag)
		require.Contains(t, l[0].Message, `a "fits" here may still not start`)
	}
	// Online fp8 and the checkpoint's own method are followed.
	for _, spec := range []string{
		`{model: {id: Qwen/Qwen3-32B}, engine: {contextLength: 8192, args: {quantization: fp8}}, resources: {gpu: {count: 1}}, ` + onH100 + `}`,
		`{model: {id: Qwen/Qwen3-32B-FP8}, engine: {contextLength: 8192, args: {quantization: fp8}}, resources: {gpu: {count: 1}}, ` + onH100 + `}`,
	} {
		_, l := verdicts(t, "vllm", "vllm", spec, nil)
		require.Empty(t, l)
	}
}
