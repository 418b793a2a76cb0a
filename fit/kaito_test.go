package fit

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
)

// TestKAITOEstimatorIsKAITOs holds the estimator to KAITO's own
// EstimateNodeCount, run at each release on the cases of
// testdata/kaito-estimator-<tag>.tsv: for every case the same node count
// and the same error, to the byte.
func TestKAITOEstimatorIsKAITOs(t *testing.T) {
	files, err := filepath.Glob("testdata/kaito-estimator-v*.tsv")
	require.NoError(t, err)
	require.Len(t, files, 5, "v0.8.0, v0.9.0, v0.10.0, v0.11.0, v0.12.0")
	for _, file := range files {
		tag := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "kaito-estimator-"), ".tsv")
		t.Run(tag, func(t *testing.T) {
			rel, err := KAITOReleaseOf(version.MustParseSemantic(strings.TrimPrefix(tag, "v")))
			require.NoError(t, err)
			require.True(t, rel.Exact(), "the figures of %s itself", tag)
			f, err := os.Open(file)
			require.NoError(t, err)
			defer f.Close()
			rows := 0
			s := bufio.NewScanner(f)
			for s.Scan() {
				line := s.Text()
				if strings.HasPrefix(line, "#") || line == "" {
					continue
				}
				c := strings.Split(line, "\t")
				require.Len(t, c, 6, line)
				count, memory, ok := strings.Cut(c[1], "x")
				require.True(t, ok, line)
				perNode, _ := strconv.Atoi(count)
				label, _ := strconv.ParseInt(memory, 10, 64)
				context, _ := strconv.Atoi(c[3])
				wantNodes, _ := strconv.Atoi(c[4])
				gotNodes, gotErr := rel.nodeCount(c[2], context, label, perNode)
				require.Equal(t, c[5], gotErr, "%s: %s", tag, line)
				require.Equal(t, wantNodes, gotNodes, "%s: %s", tag, line)
				rows++
			}
			require.NoError(t, s.Err())
			require.Greater(t, rows, 300)
		})
	}
}

// nodeCount is what EstimateNodeCount returns: the nodes, or 0 and the
// error.
func (r *KAITORelease) nodeCount(name string, context int, labelMiB int64, perNode int) (int, string) {
	l := r.Lookup(name)
	if l.EstimatorError != "" {
		return 0, l.EstimatorError
	}
	if l.Preset == nil {
		return -1, "not resolved: " + name
	}
	e := r.Estimate(*l.Preset, context, labelMiB, perNode)
	return e.Nodes, e.Err
}

// The derived figures are KAITO's, checked against the research report's
// reading of the files (and KAITO's own registration log lines there).
func TestKAITOPresets(t *testing.T) {
	get := func(release, name string) (*KAITORelease, KAITOLookup) {
		t.Helper()
		rel, err := KAITOReleaseOf(version.MustParseSemantic(release))
		require.NoError(t, err)
		return rel, rel.Lookup(name)
	}
	for _, c := range []struct {
		release, name, size string
		bpt                 int64
		distributed         bool
	}{
		{"0.8.0", "llama-3.1-8b-instruct", "14.96Gi", 131072, true},
		{"0.8.1", "gpt-oss-120b", "60.77Gi", 51840, false},
		{"0.9.4", "openai/gpt-oss-120b", "60.77Gi", 51840, false},
		{"0.9.0", "Meta-Llama/Llama-3.1-8B-Instruct", "14.96Gi", 131072, true},
		{"0.9.0", "phi-4", "27.31Gi", 204800, false},
		{"0.10.0", "phi-4", "27.31Gi", 204800, true}, // sent to the catalog
		{"0.10.0", "microsoft/phi-4", "27.31Gi", 204800, true},
		{"0.10.0", "gpt-oss-20b", "12.9Gi", 34560, false},
		{"0.10.0", "mistral-large-3-675b-instruct", "634.70Gi", 70272, true},
		{"0.11.0", "gpt-oss-120b", "121.54Gi", 73728, true},
		{"0.11.0", "gpt-oss-20b", "25.63Gi", 49152, true},
		{"0.11.0", "gemma-3-27b-instruct", "51.10Gi", 507904, true},
		{"0.12.0", "deepseek-ai/DeepSeek-V3.2", "642.14Gi", 70272, true},
		{"0.12.0", "moonshotai/kimi-k2.5", "554.32Gi", 70272, true},
		{"0.12.3", "Qwen/Qwen3-8B-AWQ", "5.68Gi", 147456, true}, // a later patch: 0.12.0's figures
	} {
		rel, l := get(c.release, c.name)
		require.NotNil(t, l.Preset, "%s %s", c.release, c.name)
		require.Equal(t, c.size, l.Preset.Size, "%s %s", c.release, c.name)
		q := resource.MustParse(c.size)
		require.Equal(t, q.Value(), l.Preset.SizeBytes, "%s %s: resource.MustParse rounds up", c.release, c.name)
		require.Equal(t, c.bpt, l.Preset.BytesPerToken, "%s %s", c.release, c.name)
		require.Equal(t, c.distributed, l.Preset.DistributedInference, "%s %s", c.release, c.name)
		require.Empty(t, l.Refused, "%s %s", c.release, c.name)
		require.Equal(t, c.release != "0.12.3", rel.Exact())
	}
	// Refusals, and models KAITO generates from the Hub.
	_, l := get("0.8.0", "microsoft/phi-4")
	require.Equal(t, "Unsupported inference preset name microsoft/phi-4", l.Refused, "0.8 takes registered names only")
	_, l = get("0.9.0", "Phi-4")
	require.Equal(t, "Unsupported inference preset name Phi-4", l.Refused, "the webhook takes registered names as given")
	require.NotNil(t, l.Preset, "... though the estimator lower-cases them")
	_, l = get("0.9.0", "Qwen/Qwen3-8B")
	require.True(t, l.FromHub)
	require.Nil(t, l.Preset)
	_, l = get("0.11.0", "falcon-7b")
	require.Equal(t, "Unsupported inference preset name falcon-7b", l.Refused, "Falcon is gone from 0.11")
	_, l = get("0.11.0", "Phi-4")
	require.Empty(t, l.Refused, "0.11 lower-cases short names")
	require.Equal(t, "microsoft/phi-4", l.Preset.HuggingFace)
	_, l = get("0.12.0", "tiiuae/falcon-7b")
	require.True(t, l.FromHub)
	rel, err := KAITOReleaseOf(version.MustParseSemantic("0.7.2"))
	require.NoError(t, err)
	require.Nil(t, rel, "no estimator before 0.8")
}

// The worked examples of the research report (issue 46, §6), and the
// rules no case of KAITO's own run reaches.
func TestKAITOEstimate(t *testing.T) {
	const l4, h100 = 23034, 81559
	est := func(release, name string, context int, label int64, perNode int) KAITOEstimate {
		t.Helper()
		rel, err := KAITOReleaseOf(version.MustParseSemantic(release))
		require.NoError(t, err)
		l := rel.Lookup(name)
		require.NotNil(t, l.Preset, name)
		return rel.Estimate(*l.Preset, context, label, perNode)
	}
	// A. Llama 3.1 8B on 1 × L4: 1 node to 0.10, 2 from 0.11 (÷ 1.05).
	e := est("0.10.0", "llama-3.1-8b-instruct", 0, l4, 1)
	require.Equal(t, int64(22), e.LabelGiB, "23,034 MiB rounds to 22 GiB")
	require.Equal(t, 1, e.Nodes)
	require.InDelta(t, 17104707256, e.Room, 1)
	e = est("0.11.0", "llama-3.1-8b-instruct", 0, l4, 1)
	require.Equal(t, 2, e.Nodes)
	require.InDelta(t, 16290197387, e.Room, 1)
	require.Equal(t, 1, est("0.9.0", "llama-3.1-8b-instruct", 0, l4, 1).Nodes)
	// B. ... on 1 × H100: 80 GiB, one node everywhere.
	require.Equal(t, 1, est("0.8.0", "llama-3.1-8b-instruct", 0, h100, 1).Nodes)
	require.Equal(t, 1, est("0.12.0", "llama-3.1-8b-instruct", 0, h100, 1).Nodes)
	// C. gpt-oss-120b on 1 × H100: 1 node to 0.10 (60.77Gi), 3 from 0.11.
	require.Equal(t, 1, est("0.10.0", "gpt-oss-120b", 0, h100, 1).Nodes)
	e = est("0.11.0", "gpt-oss-120b", 0, h100, 1)
	require.Equal(t, 3, e.Nodes)
	require.Empty(t, e.Err)
	// phi-4 on 1 × L4 in 0.9: two nodes, which it does not support.
	e = est("0.9.0", "phi-4", 0, l4, 1)
	require.Equal(t, KAITONotDistributed, e.Failure)
	require.Equal(t, 2, e.Calculated)
	require.Equal(t, "models with disabled support distributed inference cannot be distributed across more than 1 GPU node, please use a node with larger GPU memory, calculated nodes: 2", e.Err)
	require.Equal(t, 2, est("0.10.0", "phi-4", 0, l4, 1).Nodes, "0.10 serves phi-4 from the catalog, distributed")
	// Llama 3.1 8B on 4 × L4 nodes: 0.9 divides the label by 4.
	rel, _ := KAITOReleaseOf(version.MustParseSemantic("0.9.0"))
	p := *rel.Lookup("llama-3.1-8b-instruct").Preset
	require.Equal(t, 2, rel.Estimate(p, 0, l4, 4).Nodes)
	require.Equal(t, 1, rel.EstimateWithoutLabelBug(p, 0, l4, 4).Nodes)
	require.Equal(t, 1, est("0.10.0", "llama-3.1-8b-instruct", 0, l4, 4).Nodes)

	// Falcon 7B disables tensor parallelism: one GPU must hold it all.
	e = est("0.10.0", "falcon-7b", 0, 15360, 1)
	require.Equal(t, KAITOTooSmallForModel, e.Failure)
	require.Contains(t, e.Err, "GPU memory 16106127360 bytes is too small for model, needs")
	e = est("0.8.0", "falcon-7b", 0, l4, 1)
	require.Equal(t, 1, e.Nodes)
	// Too small for the reserve: each release's wording (T4, 15 GiB).
	require.Equal(t, "GPU memory 16106127360 bytes is too small, needs at least 18.3 GB overhead (base: 2.3GB + Advanced KV Cache: 16.0 GB)",
		est("0.8.0", "llama-3.1-8b-instruct", 131072, 15360, 1).Err)
	require.Equal(t, "GPU memory 16106127360 bytes is too small, needs at least 18.3 GB overhead (base: 2.3GB + KV Cache: 16.0 GB)",
		est("0.10.0", "llama-3.1-8b-instruct", 131072, 15360, 1).Err)
	require.Equal(t, "GPU memory 16106127360 bytes is too small, needs at least 18.3 GB overhead (base: 2.3GB + KV Cache: 16.0 GB)",
		est("0.12.0", "llama-3.1-8b-instruct", 131072, 15360, 1).Err)
	require.Equal(t, KAITOTooSmall, est("0.12.0", "llama-3.1-8b-instruct", 131072, 15360, 1).Failure)
}

// The admission webhook's total-memory check on bring-your-own nodes.
func TestKAITOAdmit(t *testing.T) {
	rel, _ := KAITOReleaseOf(version.MustParseSemantic("0.11.0"))
	p := *rel.Lookup("gpt-oss-120b").Preset
	a := rel.Admit("gpt-oss-120b", p, 1, 81559, 1)
	require.Equal(t, "Insufficient total GPU memory: Instance type  has a total of 80Gi, but preset gpt-oss-120b requires at least 130502581288960m", a.Err)
	require.Empty(t, rel.Admit("gpt-oss-120b", p, 2, 81559, 1).Err)
	rel, _ = KAITOReleaseOf(version.MustParseSemantic("0.10.0"))
	p = *rel.Lookup("gpt-oss-120b").Preset
	require.Empty(t, rel.Admit("gpt-oss-120b", p, 1, 81559, 1).Err, "60.77Gi in one 80 GiB node")
	// 0.9 counts one GPU of a node: 8 × H100 nodes hold 80 GiB each.
	rel, _ = KAITOReleaseOf(version.MustParseSemantic("0.9.0"))
	p = *rel.Lookup("llama-3.3-70b-instruct").Preset
	a = rel.Admit("llama-3.3-70b-instruct", p, 1, 81559, 8)
	require.Equal(t, int64(80), a.NodeGiB)
	require.Contains(t, a.Err, "has a total of 80Gi, but preset llama-3.3-70b-instruct requires at least")
	require.Empty(t, rel.AdmitWithoutLabelBug("llama-3.3-70b-instruct", p, 1, 81559, 8).Err)
}

// KAITO's figures for a model it would generate from the Hub: the
// catalog's weights and a full-attention KV cache.
func TestKAITOFacts(t *testing.T) {
	m := Model{ID: "x/y", WeightBytes: 100, Layers: 36, Heads: 32, KVHeads: 8, HeadDim: 128, SlidingLayers: 18}
	p, ok := KAITOFacts(m)
	require.True(t, ok)
	require.Equal(t, int64(2*8*128*36*2), p.BytesPerToken, "every layer, sliding or not")
	require.True(t, p.DistributedInference)
	p, _ = KAITOFacts(Model{WeightBytes: 1, Layers: 61, KVLatent: 576})
	require.Equal(t, int64(576*61*2), p.BytesPerToken)
	p, _ = KAITOFacts(Model{WeightBytes: 1, Layers: 2, Heads: 4, Hidden: 512})
	require.Equal(t, int64(2*4*128*2*2), p.BytesPerToken, "head size hidden / heads, KV heads the heads")
	_, ok = KAITOFacts(Model{})
	require.False(t, ok)
}
