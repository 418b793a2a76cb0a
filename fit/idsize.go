package fit

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// sizeRe finds a size in a model name: 8B, 0.6B, 135M, 8x7B; a
// mixture of experts' active size (30B-A3B) follows the total and is not
// what sits in memory.
var sizeRe = regexp.MustCompile(`(?i)(?:^|[-_.])(?:(\d+)x)?(\d+(?:\.\d+)?)([bm])(?:$|[-_.])`)

// moeShare is the share of N × M parameters an NxM mixture of experts
// has: its experts share attention and embeddings (Mixtral 8x7B has
// 46.7B parameters, not 56B; 8x22B 141B, not 176B).
const moeShare = 0.8

// FromID reads a model's size from its id, the last resort: "-8B",
// "-0.6B", "-8x7B", "-30B-A3B" (30B in memory), and a quantization the
// name announces (FP8, AWQ, GPTQ, Int4, Int8, 4bit, GGUF). ok is false
// when the id names no size. The result has no layer shape: its KV cache
// is unknown.
func FromID(id string) (m Model, ok bool) {
	name := id[strings.LastIndex(id, "/")+1:]
	match := sizeRe.FindStringSubmatch(name)
	if match == nil {
		return Model{}, false
	}
	n, err := strconv.ParseFloat(match[2], 64)
	if err != nil || n <= 0 {
		return Model{}, false
	}
	unit := 1e9
	if strings.EqualFold(match[3], "m") {
		unit = 1e6
	}
	size := match[2] + strings.ToUpper(match[3])
	params := n * unit
	if match[1] != "" {
		experts, _ := strconv.ParseFloat(match[1], 64)
		params *= experts * moeShare
		size = match[1] + "x" + size
	}
	dtype, how := dtypeFromName(name)
	m = Model{ID: id, Params: int64(math.Round(params)), DType: dtype, FromID: true}
	m.Source = fmt.Sprintf("the size %s in the id, as %s", size, how)
	return m, true
}

// dtypeFromName reads the quantization a model name announces, and says
// what it assumed.
func dtypeFromName(name string) (dtype, how string) {
	lower := strings.ToLower(name)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(lower, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("gguf"):
		return "int4", "GGUF at 4 bits per weight (the smallest common quantization)"
	case has("awq", "gptq", "int4", "4bit", "w4a16", "nvfp4", "mxfp4"):
		return "int4", "4-bit weights"
	case has("fp8", "w8a8"):
		return "fp8", "8-bit weights"
	case has("int8", "8bit"):
		return "int8", "8-bit weights"
	}
	return "bfloat16", "16-bit weights (bf16)"
}
