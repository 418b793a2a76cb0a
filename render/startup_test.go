package render

import (
	"testing"

	"github.com/stretchr/testify/require"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
)

// The vllm provider's startup probe gives a model the time its weights
// take to arrive at the cluster's stated rate, to load and to start the
// engine: a 70B model (131 GiB) at the default 100 MiB/s needs about half
// an hour, where upstream's probe allows ten minutes; stated faster, the
// probe is upstream's again. Without a model cache, a download that long
// warns.
func TestStartupProbeFromTheWeights(t *testing.T) {
	model := func(storage string) *kyaml.RNode {
		return kyaml.MustParse("apiVersion: airunway.ai/v1alpha1\nkind: ModelDeployment\nmetadata: {name: big, namespace: ml}\nspec:\n  secrets: {huggingFaceToken: hf}\n  model: {id: meta-llama/Llama-3.3-70B-Instruct" + storage + "}\n  provider: {name: vllm}\n  engine: {type: vllm, contextLength: 8192}\n  resources: {gpu: {count: 4}}\n")
	}
	threshold := func(res Result) string {
		for _, n := range res.Items {
			if n.GetKind() == "Deployment" {
				v, err := n.Pipe(kyaml.Lookup("spec", "template", "spec", "containers", "[name=vllm]", "startupProbe", "failureThreshold"))
				require.NoError(t, err)
				return v.MustString()
			}
		}
		t.Fatal("no Deployment")
		return ""
	}
	c := caps(t, "vllm")
	res := Render([]*kyaml.RNode{model("")}, Options{Capabilities: c})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	// 131 GiB: 1341 s of download, 131 s of load, 300 s of engine start,
	// after the probe's 15 s delay, every 10 s.
	require.Equal(t, "177\n", threshold(res))
	require.Contains(t, problemText(res.Problems), "[warning no-model-cache]")
	require.Contains(t, problemText(res.Problems), "downloads the 131 GiB of meta-llama/Llama-3.3-70B-Instruct again, about 22 minutes at 100 MiB/s")

	fast := *c
	fast.DownloadMiBPerSecond = 2000
	res = Render([]*kyaml.RNode{model("")}, Options{Capabilities: &fast})
	require.Equal(t, "60\n", threshold(res), "upstream's ten minutes suffice at 2000 MiB/s")
	require.NotContains(t, problemText(res.Problems), "no-model-cache")

	res = Render([]*kyaml.RNode{model(", storage: {volumes: [{name: w, claimName: weights, mountPath: /models, purpose: modelCache}]}")}, Options{Capabilities: c})
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	require.NotContains(t, problemText(res.Problems), diag.NoModelCache.String(), "a model cache keeps the weights")
	require.Equal(t, "177\n", threshold(res), "the first start still downloads")
}
