package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/fit"
)

// TestCatalogIsCurrent derives the catalog from the pinned copies (their
// sha256s checked) and holds fit/catalog.json to it: every figure the
// renderer reads is what its source says.
func TestCatalogIsCurrent(t *testing.T) {
	data, err := derive("pins.json")
	require.NoError(t, err)
	have, err := os.ReadFile("../../fit/catalog.json")
	require.NoError(t, err)
	require.Equal(t, string(data), string(have), "fit/catalog.json has drifted from its sources: run go run ./hack/derive-model-catalog")
}

// TestParameterCounts holds the parameter counts computed from the
// configurations to the sizes the models' publishers state (model cards:
// Llama 3.1 8.03B, 70.6B, 405B; Qwen3 0.6B, 1.7B, 8.2B, 32.8B, 30.5B,
// 235B; Mixtral 46.7B, 141B), within 2%; rows from KAITO's list carry
// the checkpoint's size instead.
func TestParameterCounts(t *testing.T) {
	var c fit.Catalog
	require.NoError(t, json.Unmarshal(fit.CatalogJSON, &c))
	published := map[string]float64{
		"meta-llama/Llama-3.1-8B": 8.03e9, "meta-llama/Llama-3.1-70B": 70.6e9, "meta-llama/Llama-3.1-405B": 405e9,
		"Qwen/Qwen3-0.6B": 0.6e9, "Qwen/Qwen3-1.7B": 1.7e9, "Qwen/Qwen3-8B": 8.2e9, "Qwen/Qwen3-32B": 32.8e9, "Qwen/Qwen3-32B-FP8": 32.8e9,
		"Qwen/Qwen3-30B-A3B": 30.5e9, "Qwen/Qwen3-30B-A3B-FP8": 30.5e9, "Qwen/Qwen3-235B-A22B": 235e9,
		"mistralai/Mixtral-8x7B-v0.1": 46.7e9, "mistralai/Mixtral-8x22B-v0.1": 141e9,
	}
	counted := 0
	for _, m := range c.Models {
		require.NotEmpty(t, m.From.Commit, m.ID)
		if m.Params == 0 {
			require.Positive(t, m.WeightBytes, "%s: neither parameters nor the checkpoint's size", m.ID)
			continue
		}
		want, ok := published[m.ID]
		require.True(t, ok, "%s: add its published size here", m.ID)
		require.InEpsilon(t, want, float64(m.Params), 0.02, m.ID)
		counted++
	}
	require.Equal(t, len(published), counted)
}

// TestSourcesAgree holds the two sources to each other where both cover
// a model: the weights computed from Llama 3.1's config.json (parameters
// × 2 bytes) against the checkpoints' size in KAITO's list, within 1%.
func TestSourcesAgree(t *testing.T) {
	raw, err := os.ReadFile("sources/kaito-project--kaito_model_catalog.yaml")
	require.NoError(t, err)
	var list struct {
		Models []kaitoModel `json:"models"`
	}
	require.NoError(t, sigsyaml.Unmarshal(raw, &list))
	for _, id := range []string{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct"} {
		fromConfig, ok := fit.Lookup(id)
		require.True(t, ok, id)
		var fromKAITOList fit.Model
		for _, k := range list.Models {
			if k.Name == id {
				fromKAITOList, err = fromKAITO(k)
				require.NoError(t, err)
			}
		}
		require.NotZero(t, fromKAITOList.WeightBytes, id)
		require.InEpsilon(t, float64(fromKAITOList.Weights()), float64(fromConfig.Weights()), 0.01, id)
		require.Equal(t, fromConfig.KVPerToken(2), fromKAITOList.KVPerToken(2), id)
	}
}

// TestPinnedCopyChanged refuses a copy whose sha256 is not the pin's.
func TestPinnedCopyChanged(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/c.json", []byte(`{"hidden_size":1}`), 0o644))
	require.NoError(t, os.WriteFile(dir+"/pins.json", []byte(`{"pins":[{"id":"a/b","source":{"sha256":"00"},"file":"c.json"}]}`), 0o644))
	_, err := derive(dir + "/pins.json")
	require.ErrorContains(t, err, "but the pin says 00")
}
