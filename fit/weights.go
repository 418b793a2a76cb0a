package fit

import (
	"strings"
)

// Weights per GPU: how vLLM splits a model over the GPUs of a replica.
//
// Tensor parallelism (TP) splits every linear layer and the vocabulary
// (VocabParallelEmbedding and ParallelLMHead pad the vocabulary to a
// multiple of 64 and give each rank a slice); the key and value
// projections are replicated when TP exceeds the KV heads (each rank
// keeps at least one KV head); norms are replicated. Pipeline parallelism
// (PP) splits the layers (get_pp_indices: layers ÷ PP each, the remainder
// to the stages before the last); the embeddings live on the first stage
// and the output layer on the last (on both when they are tied and
// PP > 1).
//
// Each part is counted at the size it is loaded as: embeddings and the
// output layer in the served dtype (16 bits, or 32 with --dtype
// float32); linear layers quantized as the checkpoint is (its
// quantization_config), or in one byte with --quantization fp8 on a
// 16-bit checkpoint, else in the served dtype. MXFP4 (gpt-oss) quantizes
// the experts only, and vLLM pads their hidden size to a multiple of 256
// for its kernels. When the checkpoint's size is known, the sum is
// scaled by the checkpoint's real size over the size the parts predict
// for it, so that scales and tensors the parameter count misses are
// counted where they fall.

// loading is how one launch loads the weights.
type loading struct {
	// dtypeBytes: the served dtype's size (2, or 4 for float32).
	dtypeBytes float64
	// linearBytes: a quantized (or fp8) linear weight with its scales; 0
	// when the linear layers are not quantized.
	linearBytes float64
	// expertsOnly: the quantization covers the experts alone (MXFP4).
	expertsOnly bool
	// checkpointBytes: one unquantized weight in the checkpoint.
	checkpointBytes float64
	// checkpointQuantized: the checkpoint itself is quantized (so the
	// checkpoint's size already is the quantized one).
	checkpointQuantized bool
}

// loadingOf reads the launch's --dtype and --quantization against the
// checkpoint's: vLLM serves a float32 checkpoint in 16 bits unless told
// otherwise (--dtype auto), and quantizes a 16-bit one online with
// --quantization fp8.
func loadingOf(m *Model, l Launch) loading {
	ld := loading{dtypeBytes: 2, checkpointBytes: BytesPerParam(m.DType)}
	if strings.EqualFold(m.DType, "float32") {
		ld.checkpointBytes = 4
	}
	switch strings.ToLower(l.DType) {
	case "float32", "float":
		ld.dtypeBytes = 4
	}
	if q := m.Quantization; q != nil {
		ld.linearBytes, ld.checkpointQuantized = q.BytesPerWeight(), true
		ld.expertsOnly = strings.EqualFold(q.Method, "mxfp4")
		return ld
	}
	switch strings.ToLower(m.DType) {
	case "fp8", "int8", "int4", "fp4", "nvfp4":
		// an older row that names its quantization as its dtype
		ld.linearBytes, ld.checkpointQuantized = BytesPerParam(m.DType), true
		ld.checkpointBytes = 2
		return ld
	}
	if strings.EqualFold(l.Quantization, "fp8") {
		ld.linearBytes = 1
	}
	return ld
}

// modelParts splits a model's parameters by how TP and quantization
// treat them.
type modelParts struct {
	embed int64 // vocabulary × hidden: one copy
	// per layer: attention projections split by TP, the KV projections
	// (replicated past the KV heads), the MLP or experts, the norms.
	attn, kv, mlp, norms int64
	tied                 bool
	moe                  bool
}

func (p modelParts) embedCopies() int64 {
	if p.tied {
		return 1
	}
	return 2
}

// parts splits Params into embeddings and even layers: of each layer the
// attention's projections follow from its shape (grouped-query
// attention; latent attention is counted with the MLP), and the rest is
// the MLP.
func (m *Model) parts() modelParts {
	p := modelParts{embed: int64(m.Vocab) * int64(m.Hidden), tied: m.TiedEmbeddings, moe: m.Experts > 0}
	h := int64(m.Hidden)
	p.norms = 2 * h
	if m.KVLatent == 0 && m.Heads > 0 {
		p.attn = 2 * h * int64(m.Heads) * int64(m.HeadDim)
		p.kv = 2 * h * int64(m.KVHeads) * int64(m.HeadDim)
	}
	rest := m.Params - p.embed*p.embedCopies() - h
	per := rest/int64(m.Layers) - p.attn - p.kv - p.norms
	p.mlp = max(per, 0)
	return p
}

// stageWeights are the bytes of weights one GPU of stage holds, of tp ×
// pp GPUs.
func stageWeights(m *Model, l Launch, tp, pp, stage int) int64 {
	ld := loadingOf(m, l)
	if m.Hidden <= 0 || m.Vocab <= 0 || m.Layers <= 0 || m.Params <= 0 {
		// No shape: an even split of the checkpoint is all that can be
		// said.
		w := float64(m.Weights())
		if ld.dtypeBytes == 4 && !ld.checkpointQuantized {
			w *= 4 / ld.checkpointBytes
		}
		return int64(w / float64(tp*pp))
	}
	p := m.parts()
	linear := func(params int64, experts bool) float64 {
		if ld.linearBytes > 0 && (!ld.expertsOnly || experts) {
			if ld.expertsOnly {
				// vLLM's MXFP4 kernels pad the experts' hidden size to a
				// multiple of 256.
				return float64(params) * ld.linearBytes * float64(roundUp(m.Hidden, 256)) / float64(m.Hidden)
			}
			return float64(params) * ld.linearBytes
		}
		return float64(params) * ld.dtypeBytes
	}
	kvShare := 1.0
	if m.KVHeads > 0 && tp > m.KVHeads {
		// each rank keeps a whole KV head: tp ÷ KV heads times an even
		// share.
		kvShare = float64(tp) / float64(m.KVHeads)
	}
	perLayer := (linear(p.attn, false) + linear(p.kv, false)*kvShare + linear(p.mlp, p.moe)) / float64(tp)
	perLayer += float64(p.norms) * ld.dtypeBytes
	embed := float64(p.embed) * ld.dtypeBytes * float64(padVocab(m.Vocab)) / float64(m.Vocab) / float64(tp)
	mine := perLayer * float64(stageLayers(m.Layers, pp, stage))
	if stage == 0 {
		mine += embed
	}
	if stage == pp-1 && (!m.TiedEmbeddings || pp > 1) {
		mine += embed
	}
	if m.WeightBytes > 0 {
		mine *= float64(m.WeightBytes) / m.modelledCheckpoint(p, ld)
	}
	return int64(mine)
}

// modelledCheckpoint is the checkpoint's size as the parts predict it:
// what scales the parts to the real size when that is known.
func (m *Model) modelledCheckpoint(p modelParts, ld loading) float64 {
	dense := ld.checkpointBytes
	layer := float64(p.attn+p.kv)*dense + float64(p.norms)*dense
	switch {
	case !ld.checkpointQuantized:
		layer += float64(p.mlp) * dense
	case ld.expertsOnly:
		layer += float64(p.mlp) * ld.linearBytes
	default:
		layer = float64(p.attn+p.kv+p.mlp)*ld.linearBytes + float64(p.norms)*2
		dense = 2
	}
	return layer*float64(m.Layers) + float64(p.embed*p.embedCopies())*dense
}

// stageLayers is how many layers stage holds of pp stages: vLLM's
// get_pp_indices gives each layers ÷ pp and the remainder, one each, to
// the stages before the last.
func stageLayers(layers, pp, stage int) int {
	if pp <= 1 {
		return layers
	}
	n := layers / pp
	rem := layers % pp
	if stage < pp-1 && stage >= pp-1-rem {
		n++
	}
	return n
}

// padVocab is the vocabulary as VocabParallelEmbedding pads it: to a
// multiple of 64.
func padVocab(vocab int) int { return roundUp(vocab, 64) }

func roundUp(n, to int) int { return (n + to - 1) / to * to }
