package fit

// The KV cache's layout as vLLM's V1 engine lays it out
// (vllm/v1/core/kv_cache_utils.py): every attention layer keeps blocks
// of BlockSize tokens. Layers of one kind (full attention, a sliding
// window) share a spec; the kinds are cut into groups of the same
// number of layers (the smallest kind's count, or the largest's when it
// is less than 1.25 times the smallest), the last group of a kind padded
// with empty slots; every group draws its blocks from one pool. Hence:
//
//   - "GPU KV cache size: N tokens" is the pool's blocks ÷ the groups ×
//     the block size, where a block takes a layer's page in each slot of a
//     group: memory ÷ (bytes a token takes in one layer × slots);
//   - one request needs, in each group, the blocks of its whole length
//     (full attention) or of the window plus one batch of tokens (a
//     sliding window), and "Maximum concurrency" is the pool's blocks ÷
//     the blocks one request of max_model_len needs;
//   - vLLM refuses to start when the layers' need for one sequence of
//     max_model_len is more than the memory (check_enough_kv_cache_memory).
type kvLayout struct {
	// perLayerToken: the bytes one token takes in one layer on one GPU
	// (2 × KV heads per rank × head size × element bytes, or the
	// latent's size for MLA, which every rank keeps whole).
	perLayerToken int64
	// full and sliding layers of the stage; window the sliding window;
	// batched the tokens of one batch (a sliding layer keeps the window
	// and one batch of new tokens).
	full, sliding, window, batched int
	// groupSize layers a group; groups in all.
	groupSize, groups int
}

// kvLayout is the stage-0 layout of m's KV cache under l, with elem
// bytes an element.
func (r *VLLMRules) kvLayout(m *Model, l Launch, elem int64) kvLayout {
	if !m.HasShape() || m.StateLayers > 0 {
		return kvLayout{}
	}
	k := kvLayout{window: m.SlidingWindow, batched: l.MaxNumBatchedTokens}
	if m.KVLatent > 0 {
		k.perLayerToken = int64(m.KVLatent) * elem
	} else {
		heads := max(m.KVHeads/l.TP, 1)
		k.perLayerToken = 2 * int64(heads) * int64(m.HeadDim) * elem
	}
	layers := stageLayers(m.Layers, l.PP, 0)
	sliding := 0
	if m.Layers > 0 {
		sliding = m.SlidingLayers * layers / m.Layers
	}
	if m.SlidingWindow <= 0 || !r.HybridKVCache {
		// without the hybrid allocator a sliding layer keeps the whole
		// sequence, as a full one does
		sliding = 0
	}
	k.full, k.sliding = layers-sliding, sliding
	k.groupSize, k.groups = groupLayers(k.full, k.sliding)
	return k
}

// groupLayers cuts the kinds into groups of equal size.
func groupLayers(full, sliding int) (size, groups int) {
	switch {
	case sliding == 0:
		return full, 1
	case full == 0:
		return sliding, 1
	}
	small, large := min(full, sliding), max(full, sliding)
	size = small
	if float64(large) < 1.25*float64(small) {
		size = large
	}
	return size, ceilDiv(full, size) + ceilDiv(sliding, size)
}

// tokens is "GPU KV cache size" for memory bytes.
func (k kvLayout) tokens(memory int64, block int) int64 {
	if k.perLayerToken <= 0 {
		return 0
	}
	blocks := memory / (k.perLayerToken * int64(block) * int64(k.groupSize))
	return blocks / int64(k.groups) * int64(block)
}

// requestBlocks is the blocks one request of length tokens draws from
// the pool: each full group its length, each sliding group the window
// and a batch, plus one block.
func (k kvLayout) requestBlocks(length, block int) int64 {
	fullGroups, slidingGroups := k.groups, 0
	if k.sliding > 0 {
		slidingGroups = ceilDiv(k.sliding, k.groupSize)
		fullGroups = k.groups - slidingGroups
	}
	n := int64(fullGroups) * int64(ceilDiv(length, block))
	if slidingGroups > 0 {
		n += int64(slidingGroups) * int64(ceilDiv(min(k.window-1+k.batched, length), block)+1)
	}
	return n
}

// concurrency is "Maximum concurrency for length tokens per request".
func (k kvLayout) concurrency(memory int64, length, block int) float64 {
	if k.perLayerToken <= 0 || length <= 0 {
		return 0
	}
	blocks := memory / (k.perLayerToken * int64(block) * int64(k.groupSize))
	return float64(blocks) / float64(k.requestBlocks(length, block))
}

// sequenceBytes is what the layers need for one sequence of length
// tokens: the check vLLM makes before it starts.
func (k kvLayout) sequenceBytes(length, block int) int64 {
	page := k.perLayerToken * int64(block)
	n := int64(k.full) * int64(ceilDiv(length, block)) * page
	if k.sliding > 0 {
		n += int64(k.sliding) * int64(ceilDiv(min(k.window-1+k.batched, length), block)+1) * page
	}
	return n
}

// longest is the longest max_model_len whose one sequence fits memory:
// vLLM's "estimated maximum model length" (a binary search over the
// same check), 0 when not even one block does.
func (k kvLayout) longest(memory int64, block int) int {
	if k.perLayerToken <= 0 {
		return 0
	}
	lo, hi := 0, 1<<30
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if k.sequenceBytes(mid, block) <= memory {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func ceilDiv(a, b int) int {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
