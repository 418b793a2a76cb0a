package fit

import (
	"fmt"
	"math"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/airunway-render/airunway-render/internal/wording"
)

// CalibrationFile is the calibration table: public vLLM start-up logs,
// each with its source, release, model, GPU, flags and the figures it
// printed, copied and never inferred. The calibration test holds the
// estimate to every row; docs/will-it-run.md's accuracy table is
// generated from it (make docs).
const CalibrationFile = "fit/calibration/vllm-startup-logs.yaml"

// LogRow is one start-up log of the calibration table.
type LogRow struct {
	ID      string `json:"id"`
	Source  string `json:"source"`
	Release string `json:"release"`
	Engine  string `json:"engine,omitempty"`
	Model   string `json:"model"`
	// GPU as the log names it; Product as GPU Feature Discovery labels
	// it, the key of the GPU table.
	GPU     string `json:"gpu"`
	Product string `json:"product"`
	GPUs    int    `json:"gpus"`
	TP      int    `json:"tp"`
	PP      int    `json:"pp"`
	// The launch: what the command line or the log's config line set.
	DType                string  `json:"dtype,omitempty"`
	Quantization         string  `json:"quantization,omitempty"`
	KVCacheDType         string  `json:"kvCacheDtype,omitempty"`
	GPUMemoryUtilization float64 `json:"gpuMemoryUtilization,omitempty"`
	MaxModelLen          int     `json:"maxModelLen,omitempty"`
	MaxNumBatchedTokens  int     `json:"maxNumBatchedTokens,omitempty"`
	MaxNumSeqs           int     `json:"maxNumSeqs,omitempty"`
	Command              string  `json:"command,omitempty"`
	Printed              Printed `json:"printed,omitempty"`
	// Outcome: started, refused, or failed-after-kv-cache (the KV cache
	// was sized, then something else ran out of memory).
	Outcome string `json:"outcome"`
	// Refusal is vLLM's message; Reason ours for it (a Refused* word).
	Refusal string `json:"refusal,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Excerpt is the log's lines the figures were copied from.
	Excerpt string `json:"excerpt"`
	// Note says what a reader should know of the row.
	Note string `json:"note,omitempty"`
}

// Printed are the figures a log printed, in GiB as printed.
type Printed struct {
	TotalGiB          float64 `json:"totalGiB,omitempty"`
	WeightsGiB        float64 `json:"weightsGiB,omitempty"`
	NonTorchGiB       float64 `json:"nonTorchGiB,omitempty"`
	ActivationGiB     float64 `json:"activationGiB,omitempty"`
	KVCacheGiB        float64 `json:"kvCacheGiB,omitempty"`
	KVTokens          int64   `json:"kvTokens,omitempty"`
	Concurrency       float64 `json:"concurrency,omitempty"`
	ConcurrencyTokens int     `json:"concurrencyTokens,omitempty"`
	CUDAGraphGiB      float64 `json:"cudaGraphGiB,omitempty"`
}

// Calibration reads the calibration table's rows.
func Calibration(data []byte) ([]LogRow, error) {
	var rows []LogRow
	if err := sigsyaml.UnmarshalStrict(data, &rows); err != nil {
		return nil, fmt.Errorf("calibration table: %v", err)
	}
	return rows, nil
}

// Launch is the row's launch.
func (r *LogRow) Launch() Launch {
	return Launch{TP: r.TP, PP: r.PP, Utilization: r.GPUMemoryUtilization, MaxModelLen: r.MaxModelLen,
		MaxNumBatchedTokens: r.MaxNumBatchedTokens, MaxNumSeqs: r.MaxNumSeqs, KVCacheDType: r.KVCacheDType,
		Quantization: r.Quantization, DType: r.DType}
}

// Prediction is what the arithmetic says of one row, against what vLLM
// printed.
type Prediction struct {
	Row     LogRow
	Startup Startup
	// KVErrorGiB is predicted − printed KV cache per GPU; Allowed the
	// bound: max(3% of the printed, 0.5 GiB).
	KVErrorGiB, AllowedGiB float64
	// Problem says why the row fails the bound, "" when it holds.
	Problem string
}

// Predict holds the estimate to one row: the model's facts from the
// catalog, the GPU from the GPU table, the rules of the row's release.
func Predict(r LogRow) Prediction {
	p := Prediction{Row: r}
	m, ok := Lookup(r.Model)
	if !ok {
		p.Problem = fmt.Sprintf("%s is not in the model catalog", r.Model)
		return p
	}
	g := NewGPU(r.Product, 0)
	if !g.Measured {
		p.Problem = fmt.Sprintf("the GPU table has no total for %s", r.Product)
		return p
	}
	rules, exact := VLLMRelease(r.Release)
	if !exact {
		p.Problem = fmt.Sprintf("no start-up rules are derived for vLLM %s", r.Release)
		return p
	}
	p.Startup = rules.StartUp(m, r.Launch(), g)
	refused := p.Startup.Refusal != nil
	switch {
	case r.Outcome == "refused" && !refused:
		p.Problem = fmt.Sprintf("vLLM refused (%s), the estimate starts", r.Reason)
	case r.Outcome == "refused" && p.Startup.Refusal.Reason != r.Reason:
		p.Problem = fmt.Sprintf("vLLM refused for %s, the estimate for %s", r.Reason, p.Startup.Refusal.Reason)
	case r.Outcome != "refused" && refused:
		p.Problem = fmt.Sprintf("vLLM started, the estimate refuses: %s", p.Startup.Refusal.Message)
	}
	if r.Printed.KVCacheGiB != 0 && (!refused || p.Startup.PerGPU.Total > 0) {
		p.KVErrorGiB = float64(p.Startup.PerGPU.KVCache)/gib - r.Printed.KVCacheGiB
		p.AllowedGiB = math.Max(0.03*math.Abs(r.Printed.KVCacheGiB), 0.5)
		if math.Abs(p.KVErrorGiB) > p.AllowedGiB && p.Problem == "" {
			p.Problem = fmt.Sprintf("KV cache %.2f GiB, vLLM printed %.2f (off by %+.2f, more than %.2f)", float64(p.Startup.PerGPU.KVCache)/gib, r.Printed.KVCacheGiB, p.KVErrorGiB, p.AllowedGiB)
		}
	}
	return p
}

// CheckExcerpt holds a row to its excerpt: every figure it records
// appears in the lines it was copied from, as the log prints it.
func (r *LogRow) CheckExcerpt() error {
	var missing []string
	has := func(what, s string) {
		if !strings.Contains(r.Excerpt, s) {
			missing = append(missing, fmt.Sprintf("%s %q", what, s))
		}
	}
	num := func(what string, v float64) {
		if v != 0 {
			has(what, strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), "."))
		}
	}
	num("totalGiB", r.Printed.TotalGiB)
	num("weightsGiB", r.Printed.WeightsGiB)
	num("nonTorchGiB", r.Printed.NonTorchGiB)
	num("activationGiB", r.Printed.ActivationGiB)
	num("kvCacheGiB", r.Printed.KVCacheGiB)
	num("concurrency", r.Printed.Concurrency)
	num("cudaGraphGiB", r.Printed.CUDAGraphGiB)
	if r.Printed.KVTokens != 0 {
		has("kvTokens", wording.Thousands(r.Printed.KVTokens))
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: the excerpt does not show %s", r.ID, strings.Join(missing, ", "))
	}
	return nil
}
