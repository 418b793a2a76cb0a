package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airunway-render/airunway-render/fit"
)

// calibrationRoot is the repository root the calibration table is read
// from (update sets it).
var calibrationRoot = "."

// calibration is docs/will-it-run.md's accuracy table: per vLLM release
// group and GPU, how far the estimate of the KV cache per GPU lands from
// what vLLM printed, then every row.
func calibration() (string, error) {
	data, err := os.ReadFile(filepath.Join(calibrationRoot, fit.CalibrationFile))
	if err != nil {
		return "", err
	}
	rows, err := fit.Calibration(data)
	if err != nil {
		return "", err
	}
	type group struct {
		key              string
		n, within        int
		sumAbs, worstAbs float64
		refusals         int
	}
	groups := map[string]*group{}
	var keys []string
	var detail strings.Builder
	detail.WriteString("| log | vLLM | model | GPU × TP × PP | KV cache printed (GiB) | estimated | error | outcome |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		p := fit.Predict(r)
		rules, _ := fit.VLLMRelease(r.Release)
		key := rules.Name + " | " + r.Product
		g := groups[key]
		if g == nil {
			g = &group{key: key}
			groups[key] = g
			keys = append(keys, key)
		}
		g.n++
		if p.Problem == "" {
			g.within++
		}
		if r.Outcome == "refused" {
			g.refusals++
		}
		printed, est, errCell := "-", "-", "-"
		if r.Printed.KVCacheGiB != 0 {
			printed = fmt.Sprintf("%.2f", r.Printed.KVCacheGiB)
			est = fmt.Sprintf("%.2f", float64(p.Startup.PerGPU.KVCache)/(1<<30))
			errCell = fmt.Sprintf("%+.2f", p.KVErrorGiB)
			g.sumAbs += math.Abs(p.KVErrorGiB)
			g.worstAbs = math.Max(g.worstAbs, math.Abs(p.KVErrorGiB))
		}
		outcome := r.Outcome
		if r.Reason != "" {
			outcome += " (" + r.Reason + ")"
		}
		fmt.Fprintf(&detail, "| [%s](%s) | %s | %s | %s × %d × %d | %s | %s | %s | %s |\n",
			r.ID, r.Source, r.Release, r.Model, r.Product, max(r.TP, 1), max(r.PP, 1), printed, est, errCell, outcome)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d logs. Within the bound: the KV cache per GPU within max(3%%, 512 MiB) of what vLLM printed, and each refusal refused for vLLM's reason.\n\n", len(rows))
	b.WriteString("| rules | GPU | logs | refusals | within the bound | mean abs. error (GiB) | worst (GiB) |\n|---|---|---|---|---|---|---|\n")
	for _, k := range keys {
		g := groups[k]
		measured := g.n - g.refusals
		mean := 0.0
		if measured > 0 {
			mean = g.sumAbs / float64(measured)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.2f | %.2f |\n", g.key, g.n, g.refusals, g.within, mean, g.worstAbs)
	}
	b.WriteString("\n<details><summary>Every row</summary>\n\n")
	b.WriteString(detail.String())
	b.WriteString("\n</details>\n")
	return b.String(), nil
}

// vllmReleases is the table of release groups whose start-up arithmetic
// the renderer repeats.
func vllmReleases() (string, error) {
	var b strings.Builder
	b.WriteString("| rules | releases read | default `--gpu-memory-utilization` | CUDA graphs taken from the KV cache | sliding-window layers | sampler (bytes a logit) |\n|---|---|---|---|---|---|\n")
	for _, r := range fit.VLLMReleases() {
		cg := "no (from the rest of the GPU)"
		if r.SubtractsCUDAGraphs {
			cg = "yes, but not on the V2 model runner (" + strings.Join(r.V2RunnerArchitectures, ", ") + ")"
		}
		sliding := "counted as full attention"
		if r.HybridKVCache {
			sliding = "their window (hybrid allocator)"
		}
		fmt.Fprintf(&b, "| %s | %s | %g | %s | %s | %g |\n", r.Name, strings.Join(r.Releases, ", "), r.DefaultUtilization, cg, sliding, r.SamplerBytesPerLogit)
	}
	return b.String(), nil
}

// gpuTable is the GPU table: what torch reports of each product.
func gpuTable() (string, error) {
	var b strings.Builder
	b.WriteString("| product (`gpu.product`) | total as torch sees it | NVLink | from |\n|---|---|---|---|\n")
	for _, d := range fit.DeviceTotals() {
		link := "yes"
		if d.PCIe {
			link = "no (PCIe)"
		}
		fmt.Fprintf(&b, "| %s | %.2f GiB | %s | %s |\n", d.Product, d.GiB, link, d.Source)
	}
	return b.String(), nil
}
