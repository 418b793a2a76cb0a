package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/airunway-render/airunway-render/api/hub"
	"github.com/airunway-render/airunway-render/diag"
	"github.com/airunway-render/airunway-render/internal/nearest"
	"github.com/airunway-render/airunway-render/providers"
	"github.com/airunway-render/airunway-render/providers/engineargs"
	"github.com/airunway-render/airunway-render/providers/llmd"
	"github.com/airunway-render/airunway-render/providers/vllm"
)

// serverDefaults are the providers whose model server is the image's own
// entrypoint fed `spec.engine.args` and `spec.engine.extraArgs` as its
// command line, with the image each runs when neither the model nor the
// capability file names one.
var serverDefaults = map[string]string{
	hub.ProviderVLLM: vllm.DefaultImage,
	hub.ProviderLLMD: llmd.DefaultImage,
}

// checkEngineArgs refuses an engine argument the pinned server release
// does not have: the server would exit at start-up with "unrecognized
// arguments". It checks `spec.engine.args` keys and the `--flag` tokens of
// `spec.engine.extraArgs` against providers/engineargs' table for the
// release the image runs. When that release cannot be known, or has no
// table, nothing is refused: an unchecked-engine-args warning says why,
// except for the vllm provider's own floating default, which the
// floating-image warning already names.
func checkEngineArgs(md *hub.ModelDeployment, engine, provider string, pc *hub.ResolvedProvider, l *diag.List) {
	def, ok := serverDefaults[provider]
	e := md.Spec.Engine
	if !ok || engine != hub.EngineVLLM || e == nil {
		return
	}
	type flag struct{ field, key string }
	var flags []flag
	for _, k := range slices.Sorted(maps.Keys(e.Args)) {
		if providers.ValidArgKey(k) { // the provider refuses the others
			flags = append(flags, flag{"spec.engine.args." + k, k})
		}
	}
	for i, tok := range e.ExtraArgs {
		if key, ok := hub.FlagKey(tok); ok {
			flags = append(flags, flag{fmt.Sprintf("spec.engine.extraArgs[%d]", i), key})
		}
	}
	if len(flags) == 0 {
		return
	}
	image, from := md.Spec.EngineImage(), "spec.engine.image"
	if image == "" && pc != nil && pc.Images[hub.EngineVLLM] != "" {
		image, from = pc.Images[hub.EngineVLLM], "the capability file's `images.vllm`"
	}
	if image == "" {
		image, from = def, "the "+provider+" provider's default"
	}
	server, why := engineargs.ForImage(image)
	if server == nil {
		if image == vllm.DefaultImage && provider == hub.ProviderVLLM {
			return // the floating-image warning covers it
		}
		l.Warnf(diag.UncheckedEngineArgs, "spec.engine", "the engine arguments are not checked against the server's options: %s %q: %s (releases with a table: %s)", from, image, why, strings.Join(engineargs.Releases(), ", "))
		return
	}
	for _, f := range flags {
		if server.Known(f.key) {
			continue
		}
		opt := "--" + f.key
		near := nearest.Closest("--"+strings.ReplaceAll(f.key, "_", "-"), server.Options(), 1)
		hint := ""
		if len(near) == 1 {
			hint = fmt.Sprintf("; did you mean %q?", near[0])
		}
		l.Errorf(f.field, "%s %s has no option %q%s", server.Name, server.Release, opt, hint)
	}
}
