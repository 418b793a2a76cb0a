package render

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
)

const catalogL4 = `apiVersion: airunway.ai/v1alpha1
kind: ClusterCapabilities
metadata: {name: l4}
spec:
  providers: [{name: vllm}]
  nodePools:
  - name: l4
    selector: {nvidia.com/gpu.product: NVIDIA-L4}
    gpu: {product: NVIDIA-L4, memoryMiB: 23034, perNode: 1}
`

func catalogModel(name, id string) string {
	return `apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata: {name: ` + name + `, namespace: inference}
spec:
  model: {id: ` + id + `}
  engine: {type: vllm, contextLength: 8192}
  resources: {gpu: {count: 1}}
`
}

// houseCatalog says my-org/house-model (and Qwen3-0.6B) have 70B
// parameters: one L4 holds neither.
const houseCatalog = `apiVersion: airunway.ai/v1alpha1
kind: ModelCatalog
metadata:
  name: house-models
  annotations:
    config.kubernetes.io/local-config: "true"
    internal.config.kubernetes.io/path: models/catalog.yaml
spec:
  models:
  - id: my-org/house-model
    params: 70000000000
    dtype: bfloat16
    layers: 80
    kvHeads: 8
    headDim: 128
    source: hand-written
  - id: Qwen/Qwen3-0.6B
    params: 70000000000
    dtype: bfloat16
`

func renderCatalog(t *testing.T, models map[string]fit.Model, docs ...string) Result {
	t.Helper()
	var items []*kyaml.RNode
	for _, d := range docs {
		items = append(items, kyaml.MustParse(d))
	}
	return Render(items, Options{Capabilities: resolved(t, catalogL4), Models: models})
}

func errorsOf(l diag.List) []string {
	var out []string
	for _, p := range l {
		if p.Severity == diag.Error {
			out = append(out, p.Resource.String()+" "+p.Field+": "+p.Message+" ("+p.File+")")
		}
	}
	return out
}

// TestModelCatalogFacts: a ModelCatalog among the inputs gives the facts
// of a model the shipped catalog does not know, and wins over the shipped
// catalog for one it does; the caller's facts (--model-dir) win over it.
func TestModelCatalogFacts(t *testing.T) {
	// Without the catalog: not checked.
	res := renderCatalog(t, nil, catalogModel("m", "my-org/house-model"))
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	require.Equal(t, fit.StatusNotChecked, res.Fits[0].Status)

	// With it: its facts, named in the message.
	res = renderCatalog(t, nil, catalogModel("m", "my-org/house-model"), houseCatalog)
	errs := errorsOf(res.Problems)
	require.Len(t, errs, 1, "%v", res.Problems)
	require.Contains(t, errs[0], `my-org/house-model does not fit 1 GPU of pool "l4"`)
	require.Contains(t, errs[0], "model facts from the ModelCatalog house-models (models/catalog.yaml): hand-written")
	require.Equal(t, fit.StatusDoesNotFit, res.Fits[0].Status)

	// The shipped catalog loses: Qwen3-0.6B, which fits one L4, is 70B here.
	res = renderCatalog(t, nil, catalogModel("q", "Qwen/Qwen3-0.6B"))
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	res = renderCatalog(t, nil, catalogModel("q", "Qwen/Qwen3-0.6B"), houseCatalog)
	errs = errorsOf(res.Problems)
	require.Len(t, errs, 1, "%v", res.Problems)
	require.Contains(t, errs[0], "model facts from the ModelCatalog house-models (models/catalog.yaml)")
	require.NotContains(t, errs[0], "hand-written", "the row of Qwen3-0.6B has no source")

	// The caller's facts win over the catalog's.
	mine := fit.Model{ID: "my-org/house-model", Params: 6e8, DType: "bfloat16", Source: "the model directory /m"}
	res = renderCatalog(t, map[string]fit.Model{"my-org/house-model": mine}, catalogModel("m", "my-org/house-model"), houseCatalog)
	require.False(t, res.Problems.HasErrors(), "%v", res.Problems)
	require.Equal(t, fit.StatusFits, res.Fits[0].Status)

	// The local-config catalog passes through, as a capability file does.
	require.Len(t, res.Items, 4, "the model, its Deployment and Service, and the catalog")
	require.Equal(t, "ModelCatalog", res.Items[0].GetKind())
}

// TestModelCatalogInput: a ModelCatalog without local-config is consumed
// and left out, with a warning; a broken one fails the run, naming its
// field; two catalogs may not give one id, whatever order they come in.
func TestModelCatalogInput(t *testing.T) {
	applied := strings.Replace(houseCatalog, "    config.kubernetes.io/local-config: \"true\"\n", "", 1)
	res := renderCatalog(t, nil, catalogModel("m", "my-org/house-model"), applied)
	require.Len(t, res.Problems.Errors(), 1, "the fit, with the catalog's facts")
	var warned []string
	for _, p := range res.Problems {
		if p.Code == diag.ModelCatalogInput {
			warned = append(warned, p.String())
		}
	}
	require.Equal(t, []string{"[warning model-catalog-input] airunway.ai/v1alpha1/ModelCatalog/house-models: consumed and left out of the output; annotate it `config.kubernetes.io/local-config: \"true\"` so kpt keeps its file and no tool applies it (file models/catalog.yaml)"}, warned)

	broken := strings.Replace(houseCatalog, "kvHeads: 8", "kvHeads: -8", 1)
	res = renderCatalog(t, nil, catalogModel("m", "my-org/house-model"), broken)
	require.Contains(t, errorsOf(res.Problems), "airunway.ai/v1alpha1/ModelCatalog/house-models spec.models[0].kvHeads: must be between 0 and 4096, got -8 (models/catalog.yaml)")
	require.Nil(t, res.Items)

	other := strings.NewReplacer("name: house-models", "name: more-models", "models/catalog.yaml", "team/catalog.yaml", "my-org/house-model", "My-Org/House-Model").Replace(houseCatalog)
	docs := []string{catalogModel("m", "my-org/house-model"), houseCatalog, other}
	want := []string{
		`airunway.ai/v1alpha1/ModelCatalog/more-models spec.models[1].id: "Qwen/Qwen3-0.6B" is also given by spec.models[1] of ModelCatalog house-models (file models/catalog.yaml): each model's facts must be given once across the run's ModelCatalogs (ids match without regard to case, as on the Hugging Face Hub) (team/catalog.yaml)`,
		`airunway.ai/v1alpha1/ModelCatalog/more-models spec.models[0].id: "My-Org/House-Model" is also given by spec.models[0] of ModelCatalog house-models (file models/catalog.yaml): each model's facts must be given once across the run's ModelCatalogs (ids match without regard to case, as on the Hugging Face Hub) (team/catalog.yaml)`,
	}
	rng := rand.New(rand.NewSource(1))
	for range 4 {
		rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		res = renderCatalog(t, nil, docs...)
		got := errorsOf(res.Problems.Sorted())
		require.Subset(t, got, want)
	}
}

// TestCatalogFactsLines: the problems of a catalog read from a file name
// their line.
func TestCatalogFactsLines(t *testing.T) {
	n := kyaml.MustParse(strings.Replace(houseCatalog, "dtype: bfloat16\n    layers", "dtype: bf17\n    layers", 1))
	facts, l := CatalogFacts([]*kyaml.RNode{n}, nil, func(*kyaml.RNode) string { return "models/catalog.yaml" })
	require.Len(t, l, 1)
	require.Equal(t, "spec.models[0].dtype", l[0].Field)
	require.Equal(t, 12, l[0].Line)
	require.Contains(t, facts, "Qwen/Qwen3-0.6B")
	same, l := CatalogFacts(nil, map[string]fit.Model{"a": {}}, nil)
	require.Empty(t, l)
	require.Equal(t, map[string]fit.Model{"a": {}}, same)
}
