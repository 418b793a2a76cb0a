package fit

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
)

// DTypes are the names a model's dtype may have in a ModelCatalog row:
// what Hugging Face configurations say (torch_dtype), their short forms,
// and the quantized types older rows name there.
var DTypes = []string{"bfloat16", "float16", "float32", "bf16", "fp16", "fp32", "float8", "fp8", "int8", "int4", "fp4", "nvfp4"}

// Bounds of a ModelCatalog row's numbers: those FromConfig reads a
// config.json within (config.inRange), under the names of Model's JSON;
// kvLatent is kv_lora_rank + qk_rope_head_dim, so its bound is theirs
// added. The rest bound what no config.json field bounds, far above any
// real model: the weights' bytes as IndexTotalSize reads them, parameters
// alike, a rope factor, a quantization's bits and group.
var (
	rowBounds = []struct {
		field string
		limit int64
	}{
		{"layers", 1 << 12}, {"heads", 1 << 12}, {"kvHeads", 1 << 12}, {"headDim", 1 << 14},
		{"hiddenSize", 1 << 20}, {"intermediateSize", 1 << 22}, {"vocabSize", 1 << 24},
		{"experts", 1 << 12}, {"expertsPerToken", 1 << 12}, {"moeIntermediateSize", 1 << 22}, {"sharedExperts", 1 << 12},
		{"kvLatent", 1<<16 + 1<<14}, {"slidingWindow", 1 << 30}, {"slidingLayers", 1 << 12}, {"stateLayers", 1 << 12},
		{"context", 1 << 30}, {"params", 1 << 50}, {"weightBytes", 1 << 50},
	}
	maxRowRopeFactor = 1024.0
	maxRowQuantBits  = 16
	maxRowQuantGroup = 1 << 20
	// maxRowID and maxRowText bound a row's strings: a Hugging Face
	// id is at most 96 characters an owner and a name; the others are
	// short names.
	maxRowID   = 256
	maxRowText = 256
)

// FieldProblem is what is wrong with one field of a Model's facts: Field
// is its JSON path within the row (`kvHeads`, `quantization.bits`), ""
// for the row as a whole.
type FieldProblem struct {
	Field   string
	Message string
}

// Check holds a model's facts, as a ModelCatalog row gives them, to what
// the memory fit can use: an id, the weights' size or a parameter count,
// a known dtype, and every number non-negative and within the bounds
// FromConfig reads a config.json within, so that the estimate's
// arithmetic stays in range. It returns every problem, always in the same
// order; none when the facts are usable.
func (m *Model) Check() []FieldProblem {
	var out []FieldProblem
	add := func(field, format string, args ...any) {
		out = append(out, FieldProblem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case m.ID == "":
		add("id", "is required: the Hugging Face id the facts are about, as models give it in spec.model.id")
	case len(m.ID) > maxRowID:
		add("id", "is %d bytes long: an id must be at most %d", len(m.ID), maxRowID)
	case strings.ContainsFunc(m.ID, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		add("id", "%q must not contain whitespace or control characters: it is a Hugging Face id (owner/name)", m.ID)
	case strings.HasPrefix(m.ID, "-"):
		add("id", "%q must not start with '-': it is a Hugging Face id (owner/name)", m.ID)
	}
	checkText := func(field, v string) {
		if len(v) > maxRowText {
			add(field, "is %d bytes long: must be at most %d", len(v), maxRowText)
		} else if strings.ContainsFunc(v, unicode.IsControl) {
			add(field, "%q must not contain control characters", v)
		}
	}
	checkText("architecture", m.Architecture)
	values := map[string]int64{
		"layers": int64(m.Layers), "heads": int64(m.Heads), "kvHeads": int64(m.KVHeads), "headDim": int64(m.HeadDim),
		"hiddenSize": int64(m.Hidden), "intermediateSize": int64(m.Intermediate), "vocabSize": int64(m.Vocab),
		"experts": int64(m.Experts), "expertsPerToken": int64(m.ExpertsPerToken), "moeIntermediateSize": int64(m.MoEIntermediate),
		"sharedExperts": int64(m.SharedExperts), "kvLatent": int64(m.KVLatent), "slidingWindow": int64(m.SlidingWindow),
		"slidingLayers": int64(m.SlidingLayers), "stateLayers": int64(m.StateLayers), "context": int64(m.Context),
		"params": m.Params, "weightBytes": m.WeightBytes,
	}
	inRange := map[string]bool{}
	for _, b := range rowBounds {
		v := values[b.field]
		if v < 0 || v > b.limit {
			add(b.field, "must be between 0 and %d, got %d", b.limit, v)
			continue
		}
		inRange[b.field] = true
	}
	if m.Params == 0 && m.WeightBytes == 0 && inRange["params"] && inRange["weightBytes"] {
		add("", "gives neither weightBytes nor params: one of them is required, to size the weights (weightBytes, the checkpoint's bytes, wins)")
	}
	switch {
	case m.DType == "":
		add("dtype", "is required: one of %s", quoteRowNames(DTypes))
	case !slices.Contains(DTypes, m.DType):
		add("dtype", "must be one of %s, got %q", quoteRowNames(DTypes), m.DType)
	}
	if inRange["layers"] && inRange["slidingLayers"] && inRange["stateLayers"] && m.SlidingLayers+m.StateLayers > m.Layers {
		add("slidingLayers", "slidingLayers (%d) and stateLayers (%d) together must be at most layers (%d): they count layers of the model", m.SlidingLayers, m.StateLayers, m.Layers)
	}
	if inRange["experts"] && inRange["expertsPerToken"] && m.ExpertsPerToken > m.Experts {
		add("expertsPerToken", "must be at most experts (%d), got %d", m.Experts, m.ExpertsPerToken)
	}
	if inRange["heads"] && inRange["kvHeads"] && m.Heads > 0 && m.KVHeads > m.Heads {
		add("kvHeads", "must be at most heads (%d), got %d: several attention heads share a KV head, never the reverse", m.Heads, m.KVHeads)
	}
	if q := m.Quantization; q != nil {
		switch q.Method {
		case "":
			add("quantization.method", "is required: the checkpoint's quantization_config.quant_method (fp8, awq, gptq, …)")
		default:
			checkText("quantization.method", q.Method)
		}
		if q.Bits < 0 || q.Bits > maxRowQuantBits {
			add("quantization.bits", "must be between 0 and %d, got %d", maxRowQuantBits, q.Bits)
		}
		if q.GroupSize < -1 || q.GroupSize > maxRowQuantGroup {
			add("quantization.groupSize", "must be -1 (a channel) or between 0 and %d, got %d", maxRowQuantGroup, q.GroupSize)
		}
	}
	if r := m.Rope; r != nil {
		checkText("ropeScaling.type", r.Type)
		if math.IsNaN(r.Factor) || r.Factor < 0 || r.Factor > maxRowRopeFactor {
			add("ropeScaling.factor", "must be between 0 and %g, got %g", maxRowRopeFactor, r.Factor)
		}
		if r.Original < 0 || r.Original > 1<<30 {
			add("ropeScaling.originalMaxPositionEmbeddings", "must be between 0 and %d, got %d", 1<<30, r.Original)
		}
	}
	return out
}

func quoteRowNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
