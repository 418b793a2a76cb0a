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
)

// serverImage is the provider's default model server image when its
// server is the image's own entrypoint (providers.ServerImager).
func serverImage(p providers.Provider) (providers.ServerImage, bool) {
	if si, ok := p.(providers.ServerImager); ok {
		return si.ServerImage(), true
	}
	return providers.ServerImage{}, false
}

// checkEngineArgs refuses an engine argument the pinned server release
// does not have: the server would exit at start-up with "unrecognized
// arguments". It checks `spec.engine.args` keys and the `--flag` tokens of
// `spec.engine.extraArgs` against providers/engineargs' table for the
// release the image runs. When that release cannot be known, or has no
// table, nothing is refused: an unchecked-engine-args warning says why,
// except for a provider's default the provider already warns about (the
// vllm provider's floating default).
func checkEngineArgs(md *hub.ModelDeployment, engine string, p providers.Provider, pc *hub.ResolvedProvider, l *diag.List) {
	def, ok := serverImage(p)
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
		image, from = def.Default, "the "+p.Name()+" provider's default"
	}
	server, why := engineargs.ForImage(image)
	if server == nil {
		if image == def.Default && def.DefaultWarned {
			return // the provider's floating-image warning covers it
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
