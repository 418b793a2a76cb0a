package hub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/fit"
)

// TestValidateModelCatalog: every row is held to what the memory fit can
// use, each problem at its field path (spec.models[1].kvHeads) with what
// is allowed; an id is given once, without regard to case.
func TestValidateModelCatalog(t *testing.T) {
	row := func(id string, edit func(*fit.Model)) CatalogModel {
		m := fit.Model{ID: id, Params: 8e9, DType: "bfloat16", Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128}
		if edit != nil {
			edit(&m)
		}
		return CatalogModel{Model: m, Source: "hand-written"}
	}
	c := &ModelCatalog{Spec: ModelCatalogSpec{Models: []CatalogModel{
		row("my-org/a", nil),
		row("my-org/b", func(m *fit.Model) { m.KVHeads, m.DType = -8, "bf17" }),
		row("", nil),
		row("My-Org/A", nil),
		{Model: fit.Model{ID: "my-org/c", WeightBytes: 1 << 30, DType: "fp8"}, Source: "line one\nline two"},
		{Model: fit.Model{ID: "my-org/d", WeightBytes: 1 << 30, DType: "fp8"}, Source: strings.Repeat("x", 1025)},
	}}}
	var got []string
	for _, p := range ValidateModelCatalog(c) {
		got = append(got, p.Field+": "+p.Message)
	}
	require.Equal(t, []string{
		"metadata.name: is required: the catalog's name, which the messages that use its facts name",
		"spec.models[1].kvHeads: must be between 0 and 4096, got -8",
		`spec.models[1].dtype: must be one of "bfloat16", "float16", "float32", "bf16", "fp16", "fp32", "float8", "fp8", "int8", "int4", "fp4", "nvfp4", got "bf17"`,
		"spec.models[2].id: is required: the Hugging Face id the facts are about, as models give it in spec.model.id",
		`spec.models[3].id: "My-Org/A" is also the id of spec.models[0]: each model's facts must be given once (ids match without regard to case, as on the Hugging Face Hub)`,
		"spec.models[4].source: must be one line of text without control characters: messages quote it",
		"spec.models[5].source: is 1025 bytes long: must be at most 1024",
	}, got)

	c = &ModelCatalog{Spec: ModelCatalogSpec{Models: []CatalogModel{row("my-org/a", nil)}}}
	c.Name = "house-models"
	require.Empty(t, ValidateModelCatalog(c))
	require.Empty(t, ValidateModelCatalog(&ModelCatalog{ObjectMeta: c.ObjectMeta}), "a catalog without rows is valid")

	m := c.Spec.Models[0].Facts("the ModelCatalog house-models (catalog.yaml)")
	require.Equal(t, "the ModelCatalog house-models (catalog.yaml): hand-written", m.Source)
	c.Spec.Models[0].Source = ""
	require.Equal(t, "the ModelCatalog house-models (catalog.yaml)", c.Spec.Models[0].Facts("the ModelCatalog house-models (catalog.yaml)").Source)
}
