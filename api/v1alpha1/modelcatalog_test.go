package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/api/hub"
)

const catalogHead = "apiVersion: airunway.ai/v1alpha1\nkind: ModelCatalog\nmetadata: {name: house-models, annotations: {config.kubernetes.io/local-config: \"true\"}}\n"

// TestDecodeModelCatalog: a ModelCatalog decodes strictly, every row
// exactly fit.Model's JSON plus its source; a mistake is an error at its
// field path, with what is allowed.
func TestDecodeModelCatalog(t *testing.T) {
	decode := func(t *testing.T, doc string) (*hub.ModelCatalog, []string) {
		t.Helper()
		js, err := sigsyaml.YAMLToJSON([]byte(doc))
		require.NoError(t, err)
		c, l := ModelCatalogToHub(js)
		var got []string
		for _, p := range l {
			got = append(got, p.Field+": "+p.Message)
		}
		return c, got
	}

	c, problems := decode(t, catalogHead+`spec:
  models:
  - id: my-org/house-model
    architecture: LlamaForCausalLM
    params: 8030261248
    dtype: bfloat16
    quantization: {method: gptq, bits: 4, groupSize: 128}
    layers: 32
    heads: 32
    kvHeads: 8
    headDim: 128
    hiddenSize: 4096
    intermediateSize: 14336
    vocabSize: 128256
    tiedEmbeddings: false
    experts: 0
    expertsPerToken: 0
    moeIntermediateSize: 0
    sharedExperts: 0
    kvLatent: 0
    slidingWindow: 0
    slidingLayers: 0
    stateLayers: 0
    context: 131072
    ropeScaling: {type: llama3, factor: 8.0, originalMaxPositionEmbeddings: 8192}
    weightBytes: 16060522496
    gated: true
    source: config.json of my-org/house-model at revision main
`)
	require.Empty(t, problems)
	require.Len(t, c.Spec.Models, 1)
	row := c.Spec.Models[0]
	require.Equal(t, "config.json of my-org/house-model at revision main", row.Source)
	require.Empty(t, row.Model.Source, "the row's source is the catalog's own field")
	require.Equal(t, int64(16060522496), row.WeightBytes)
	require.Equal(t, 8.0, row.Rope.Factor)
	require.Equal(t, 4, row.Quantization.Bits)
	require.True(t, *row.Gated)
	require.Empty(t, hub.ValidateModelCatalog(c))

	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"an unknown field of a row", catalogHead + "spec:\n  models:\n  - {id: a/b, params: 1, dtype: bf16}\n  - {id: c/d, params: 1, dtype: bf16, kvHead: 8}\n",
			[]string{"spec.models[1].kvHead: unknown field: `kvHead` is not part of the ModelCatalog schema (check the spelling and the nesting level)"}},
		{"an unknown field of the quantization", catalogHead + "spec:\n  models:\n  - {id: a/b, params: 1, dtype: bf16, quantization: {method: fp8, bitz: 8}}\n",
			[]string{"spec.models[0].quantization.bitz: unknown field: `bitz` is not part of the ModelCatalog schema (check the spelling and the nesting level)"}},
		{"a number as a string", catalogHead + "spec:\n  models:\n  - {id: a/b, params: 1, dtype: bf16}\n  - {id: c/d, params: 1, dtype: bf16, layers: \"32\"}\n",
			[]string{"spec.models[1].layers: must be an integer, got string"}},
		{"an object as a string", catalogHead + "spec:\n  models:\n  - {id: a/b, params: 1, dtype: bf16, quantization: fp8}\n",
			[]string{"spec.models[0].quantization: must be an object, got string"}},
		{"a float as a string", catalogHead + "spec:\n  models:\n  - {id: a/b, params: 1, dtype: bf16, ropeScaling: {type: yarn, factor: four}}\n",
			[]string{"spec.models[0].ropeScaling.factor: must be a number, got string"}},
		{"a status", catalogHead + "spec: {models: []}\nstatus: {}\n",
			[]string{"status: unknown field: `status` is not part of the ModelCatalog schema (check the spelling and the nesting level)"}},
		{"models as a map", catalogHead + "spec: {models: {id: a/b}}\n",
			[]string{"spec.models: must be a list, got object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, got := decode(t, tc.doc)
			require.Nil(t, c)
			require.Equal(t, tc.want, got)
		})
	}
}
