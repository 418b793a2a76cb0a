package render

import (
	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
	"github.com/airunway-render/airunway-render/internal/wording"
)

// A model server starts by downloading its weights, loading them into the
// GPUs and building its engine; only then does it answer its health check.
// A startup probe shorter than that kills it mid-download, and it starts
// over, forever. The engine decides how long a start may take, from the
// model's size and the cluster's download rate (the capability file's
// spec.modelDownload), and the providers that write the probe give it
// that long.
const (
	// loadMiBPerSecond is the rate weights load from local disk into the
	// GPUs, on the low side (1 GiB/s).
	loadMiBPerSecond = 1024
	// engineStartSeconds covers what follows the load: the profiling
	// run, CUDA graph capture, compilation (vLLM logs minutes for large
	// models).
	engineStartSeconds = 300
	// slowDownloadSeconds: beyond this, every start of a replica
	// without a model cache spends a quarter of an hour downloading.
	slowDownloadSeconds = 900
)

// startupSeconds is how long the model's server may take to start, and
// warns when each start downloads the weights for long without a model
// cache to keep them; 0 when the model's size is not known or its weights
// do not come from the Hub.
func startupSeconds(md *hub.ModelDeployment, caps *hub.ResolvedCapabilities, models map[string]fit.Model, l *diag.List) int32 {
	s := &md.Spec
	if s.Model.Source != hub.SourceHuggingFace || s.Model.ID == "" {
		return 0
	}
	model, _, known := modelFacts(s.Model.ID, models)
	if !known {
		return 0
	}
	weightsMiB := model.Weights() >> 20
	if weightsMiB <= 0 {
		return 0
	}
	rate := int64(caps.DownloadMiBPerSecond)
	if rate <= 0 {
		rate = hub.DefaultDownloadMiBPerSecond
	}
	download := weightsMiB / rate
	if download > slowDownloadSeconds && !hasModelCache(md) {
		l.Warnf(diag.NoModelCache, "spec.model.storage", "has no model cache volume: every start of a replica (a restart, a rollout, a new node) downloads the %s GiB of %s again, about %d minutes at %d MiB/s (the capability file's `spec.modelDownload.mibPerSecond`); a volume with purpose modelCache keeps the weights between starts (upstream AI Runway #77)",
			wording.Thousands(weightsMiB>>10), s.Model.ID, download/60, rate)
	}
	return int32(min(download+weightsMiB/loadMiBPerSecond+engineStartSeconds, 24*3600))
}
