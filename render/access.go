package render

import (
	"slices"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/fit"
)

// tokenVariables are the environment variables through which the Hugging
// Face libraries read a token, or reach a mirror that may need none
// (huggingface_hub's constants: HF_TOKEN, the older
// HUGGING_FACE_HUB_TOKEN, HF_ENDPOINT).
var tokenVariables = []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT"}

// checkAccess holds a model whose weights come from the Hugging Face Hub
// to what the Hub requires of it: a gated repository (Llama, Gemma) serves
// its files only to an accepted user's token, so without one the model
// server's download fails with 401 and the pod restarts forever (KAITO
// refuses such a preset outright). That is certain, an error, when
// nothing else could provide the weights; with a model cache volume,
// which may hold them already, a warning. The model's facts say whether
// it is gated: the catalog (fit/catalog.json, from the Hub), a
// ModelCatalog, `--model-dir`; a model they do not cover is not judged.
func checkAccess(md *hub.ModelDeployment, models map[string]fit.Model, l *diag.List) {
	s := &md.Spec
	if s.Model.Source != hub.SourceHuggingFace || s.Model.ID == "" {
		return
	}
	model, _, known := modelFacts(s.Model.ID, models)
	if !known || model.Gated == nil || !*model.Gated {
		return
	}
	if s.Secrets != nil && s.Secrets.HuggingFaceToken != "" {
		return
	}
	for _, e := range s.Env {
		if slices.Contains(tokenVariables, e.Name) {
			return
		}
	}
	if hasModelCache(md) {
		l.Warnf(diag.GatedModel, "spec.secrets.huggingFaceToken", "is not set, and %s is gated on Hugging Face: the model server starts only if the model cache already holds its weights, since the Hub refuses the download (401) without an accepted user's token; name the token's Secret here (model facts from %s)", s.Model.ID, model.Source)
		return
	}
	l.Errorf("spec.secrets.huggingFaceToken", "must name the Secret of a Hugging Face token: %s is gated, and the Hub refuses its download (401) without an accepted user's token, so the model server would restart forever; accept the model's license on huggingface.co and store the token in a Secret of the namespace (key HF_TOKEN), or mount weights you have with a model cache volume (`spec.model.storage.volumes`, purpose modelCache) (model facts from %s)", s.Model.ID, model.Source)
}

// hasModelCache: a volume of the model may already hold its weights.
func hasModelCache(md *hub.ModelDeployment) bool {
	if md.Spec.Model.Storage == nil {
		return false
	}
	for _, v := range md.Spec.Model.Storage.Volumes {
		if v.Purpose == hub.PurposeModelCache {
			return true
		}
	}
	return false
}
