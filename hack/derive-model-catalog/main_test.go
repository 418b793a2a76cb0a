package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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
// configurations to the sizes the models' publishers state on their model
// cards, within 3%; every row names a pinned source and gives either its
// parameters or its checkpoint's size.
func TestParameterCounts(t *testing.T) {
	data, err := os.ReadFile("../../fit/catalog.json")
	require.NoError(t, err)
	var c fit.Catalog
	require.NoError(t, json.Unmarshal(data, &c))
	published := map[string]float64{
		"meta-llama/Llama-3.1-8B": 8.03e9, "meta-llama/Llama-3.1-70B": 70.6e9, "meta-llama/Llama-3.1-405B": 405e9,
		"meta-llama/Llama-3.2-1B-Instruct": 1.24e9, "meta-llama/Llama-3.2-3B-Instruct": 3.21e9,
		"meta-llama/Llama-4-Scout-17B-16E-Instruct": 109e9, "meta-llama/Llama-4-Maverick-17B-128E-Instruct": 400e9,
		"Qwen/Qwen3-0.6B": 0.6e9, "Qwen/Qwen3-1.7B": 1.7e9, "Qwen/Qwen3-8B": 8.2e9, "Qwen/Qwen3-14B": 14.8e9, "Qwen/Qwen3-32B": 32.8e9,
		"Qwen/Qwen3-30B-A3B": 30.5e9, "Qwen/Qwen3-235B-A22B": 235e9, "Qwen/Qwen2.5-7B-Instruct": 7.61e9, "Qwen/Qwen2.5-72B": 72.7e9,
		"mistralai/Mixtral-8x7B-v0.1": 46.7e9, "mistralai/Mixtral-8x22B-v0.1": 141e9, "mistralai/Mistral-Nemo-Instruct-2407": 12.2e9,
		"deepseek-ai/DeepSeek-V3": 671e9, "deepseek-ai/DeepSeek-V2-Lite": 15.7e9, "openai/gpt-oss-20b": 21e9, "openai/gpt-oss-120b": 117e9,
		"google/gemma-2-9b-it": 9.24e9, "google/gemma-2-2b-it": 2.61e9, "microsoft/phi-4": 14.7e9, "ibm-granite/granite-3.3-8b-instruct": 8.17e9,
	}
	for _, m := range c.Models {
		require.NotEmpty(t, m.From, m.ID)
		require.True(t, m.From[0].Commit != "" || m.From[0].URL != "", "%s: a source", m.ID)
		require.True(t, m.Params > 0 || m.WeightBytes > 0, "%s: neither parameters nor the checkpoint's size", m.ID)
	}
	for id, want := range published {
		m, ok := fit.Lookup(id)
		require.True(t, ok, id)
		require.InEpsilon(t, want, float64(m.Params), 0.03, id)
	}
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
	require.NoError(t, os.WriteFile(dir+"/pins.json", []byte(`{"configs":[{"id":"a/b","source":{"sha256":"00"},"file":"c.json"}]}`), 0o644))
	_, err := derive(dir + "/pins.json")
	require.ErrorContains(t, err, "but the pin says 00")
}

// A listed model nobody covers is an error, and so is an uncovered one
// that became a row.
func TestListsAreCovered(t *testing.T) {
	dir := t.TempDir()
	list := []byte(`{"models":[{"id":"org/missing"}]}`)
	require.NoError(t, os.WriteFile(dir+"/l.json", list, 0o644))
	sum := sha256.Sum256(list)
	pins := fmt.Sprintf(`{"configs":[],"lists":[{"name":"a list","file":"l.json","format":"airunway","source":{"sha256":%q}}]}`, hex.EncodeToString(sum[:]))
	require.NoError(t, os.WriteFile(dir+"/pins.json", []byte(pins), 0o644))
	_, err := derive(dir + "/pins.json")
	require.ErrorContains(t, err, "listed models the catalog lacks")
	require.ErrorContains(t, err, "org/missing (a list)")

	pins = strings.Replace(pins, `"lists"`, `"uncovered":[{"id":"org/missing","reason":"none public"}],"lists"`, 1)
	require.NoError(t, os.WriteFile(dir+"/pins.json", []byte(pins), 0o644))
	_, err = derive(dir + "/pins.json")
	require.NoError(t, err)
}
