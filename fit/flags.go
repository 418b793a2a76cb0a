package fit

import (
	"slices"
	"strconv"
	"strings"
)

// engineFlags reads an engine's options from a model's engine args
// (spec.engine.args, keys without dashes) and extra args (--flag=value
// or --flag value), as the engines' parsers do: a name with dashes or
// underscores, the last value winning.
type engineFlags struct {
	args  map[string]string
	extra []string
}

// get returns the value of the first of names set, ok false when none is.
func (f engineFlags) get(names ...string) (string, bool) {
	var all []string
	for _, n := range names {
		all = append(all, n, strings.ReplaceAll(n, "-", "_"))
	}
	value, found := "", false
	for i, a := range f.extra {
		for _, n := range all {
			switch {
			case a == "--"+n && i+1 < len(f.extra):
				value, found = f.extra[i+1], true
			case strings.HasPrefix(a, "--"+n+"="):
				value, found = strings.TrimPrefix(a, "--"+n+"="), true
			}
		}
	}
	if found {
		return strings.TrimSpace(value), true
	}
	for _, n := range all {
		if v, ok := f.args[n]; ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// has reports whether a flag is set at all (a boolean flag has no value).
func (f engineFlags) has(name string) bool {
	if _, ok := f.get(name); ok {
		return true
	}
	under := strings.ReplaceAll(name, "-", "_")
	return slices.ContainsFunc(f.extra, func(a string) bool { return a == "--"+name || a == "--"+under })
}

func (f engineFlags) positive(names ...string) int {
	if v, ok := f.get(names...); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 1<<30 {
			return n
		}
	}
	return 0
}

// unmodelledVLLMFlags change what vLLM keeps in GPU memory in ways the
// arithmetic does not follow: a fit with any of them is an estimate
// without them, and says so.
var unmodelledVLLMFlags = []string{
	"cpu-offload-gb", "num-gpu-blocks-override", "enable-lora", "speculative-config",
	"kv-transfer-config", "kv-offloading-size", "enable-expert-parallel", "data-parallel-size",
	"limit-mm-per-prompt", "swap-space", "mm-processor-cache-gb",
}

// VLLMLaunch reads a vLLM launch from a model's engine args: the memory
// utilisation, the lengths and batch sizes, the KV cache's dtype, the
// quantization and dtype, a KV cache size set by hand and the block
// size; the parallel sizes are the caller's (the renderer's placement).
// unmodelled lists the flags set whose effect on memory is not followed.
func VLLMLaunch(args map[string]string, extra []string) (l Launch, unmodelled []string) {
	f := engineFlags{args, extra}
	if v, ok := f.get("gpu-memory-utilization"); ok {
		if u, err := strconv.ParseFloat(v, 64); err == nil && u > 0 && u <= 1 {
			l.Utilization = u
		}
	}
	l.MaxModelLen = f.positive("max-model-len")
	l.MaxNumBatchedTokens = f.positive("max-num-batched-tokens")
	l.MaxNumSeqs = f.positive("max-num-seqs")
	l.BlockSize = f.positive("block-size")
	l.KVCacheDType, _ = f.get("kv-cache-dtype")
	l.Quantization, _ = f.get("quantization", "q")
	l.DType, _ = f.get("dtype")
	if v, ok := f.get("kv-cache-memory-bytes", "kv-cache-memory"); ok {
		if n, err := parseBytes(v); err == nil && n > 0 {
			l.KVCacheMemoryBytes = n
		}
	}
	for _, name := range unmodelledVLLMFlags {
		if f.has(name) {
			unmodelled = append(unmodelled, "--"+name)
		}
	}
	return l, unmodelled
}

// UnfollowedQuantization says whether the launch's --quantization is one
// the arithmetic does not follow for m: anything but the checkpoint's own
// method, or fp8 on an unquantized checkpoint (online quantization). vLLM
// then loads another kernel's layout, or refuses the mismatch.
func (l Launch) UnfollowedQuantization(m Model) bool {
	q := strings.ToLower(l.Quantization)
	switch {
	case q == "":
		return false
	case m.Quantization != nil:
		return q != strings.ToLower(m.Quantization.Method)
	}
	return q != "fp8"
}

// parseBytes reads a size as vLLM's --kv-cache-memory-bytes takes it: a
// number of bytes, or with a suffix k, m, g (powers of 1000) or Ki, Mi,
// Gi (powers of 1024).
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}} {
		if strings.HasSuffix(strings.ToLower(s), u.suffix) {
			s, mult = s[:len(s)-len(u.suffix)], u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || f > 1<<50 {
		return 0, strconv.ErrSyntax
	}
	return int64(f * float64(mult)), nil
}
