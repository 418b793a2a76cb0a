package render

import (
	"fmt"
	"strings"

	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/wording"
)

// hardwareRank orders the statuses a rendered model can have, best first:
// the model's verdict is its worst component's, and a component not
// checked makes the whole unknown (upstream's HardwareCompatible Unknown).
var hardwareRank = map[fit.Status]int{fit.StatusFits: 0, fit.StatusTight: 1, fit.StatusShortContext: 2, fit.StatusNotChecked: 3}

// hardwareVerdict sums up the memory fit of a rendered model's GPU
// components for AnnotationHardwareFit: the worst status and, per
// component, what was held or why nothing was. Nothing for a model
// without GPU components (the condition is about GPUs); a component that
// does not fit never gets here, since its render fails.
func hardwareVerdict(verdicts []fit.Verdict) (status, reason string) {
	if len(verdicts) == 0 {
		return "", ""
	}
	worst := verdicts[0].Status
	parts := make([]string, 0, len(verdicts))
	for _, v := range verdicts {
		if hardwareRank[v.Status] > hardwareRank[worst] {
			worst = v.Status
		}
		part := hardwareAccount(v)
		if len(verdicts) > 1 {
			part = v.Component + ": " + part
		}
		parts = append(parts, part)
	}
	return string(worst), strings.Join(parts, "; ")
}

// hardwareAccount is one component's verdict in a line.
func hardwareAccount(v fit.Verdict) string {
	if !v.Checked() {
		return string(v.Status) + ": " + v.Reason
	}
	account := fmt.Sprintf("%s: one replica needs about %s MiB of the %s MiB its %d %s of pool %q give",
		v.Status, wording.Thousands(v.NeededMiB), wording.Thousands(v.AvailableMiB), v.GPUs, wording.Plural(v.GPUs, "GPU"), v.Pool)
	if v.Engine != "" {
		account += " (" + v.Engine + " start-up rules)"
	}
	return account
}
