package fit

// Status is what the memory fit found for one replica.
type Status string

// The statuses of a Verdict.
const (
	// Fits: the estimate is at most Tight of what the GPUs give.
	StatusFits Status = "fits"
	// Tight: it fits, above Tight of what the GPUs give (tight-fit).
	StatusTight Status = "tight"
	// ShortContext: the weights fit, but a KV cache for one sequence of
	// the context does not; an engine other than vLLM serves shorter
	// sequences (a tight-fit warning).
	StatusShortContext Status = "short-context"
	// DoesNotFit: the render fails.
	StatusDoesNotFit Status = "does-not-fit"
	// NotChecked: Reason says why.
	StatusNotChecked Status = "not-checked"
)

// Verdict is the memory fit of one placed component of one model, as the
// renderer found it (render.Result.Fits): what `plan` prints in its memory
// table and `preview` compares before and after an upgrade. The renderer
// fills it; this package only names its fields.
type Verdict struct {
	// Namespace and Name of the ModelDeployment.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// ModelID is its spec.model.id.
	ModelID string `json:"modelId,omitempty"`
	// Component: main, prefill or decode.
	Component string `json:"component,omitempty"`
	// Pool the component is placed on.
	Pool string `json:"pool,omitempty"`
	// GPUs of one replica (all its nodes').
	GPUs int `json:"gpusPerReplica,omitempty"`
	// NeededMiB and AvailableMiB per replica (Estimate); 0 when not
	// checked.
	NeededMiB    int64 `json:"neededMiB,omitempty"`
	AvailableMiB int64 `json:"availableMiB,omitempty"`
	// Source of the model's facts (Model.Source).
	Source string `json:"source,omitempty"`
	Status Status `json:"status"`
	// Reason the fit was not checked.
	Reason string `json:"reason,omitempty"`
}

// Checked reports whether the fit was estimated.
func (v Verdict) Checked() bool { return v.Status != StatusNotChecked }

// HeadroomPercent is the share of the available memory the estimate
// leaves free, rounded towards zero (negative when it does not fit); 0
// when not checked.
func (v Verdict) HeadroomPercent() int {
	if !v.Checked() || v.AvailableMiB <= 0 {
		return 0
	}
	return int((v.AvailableMiB - v.NeededMiB) * 100 / v.AvailableMiB)
}
