package kaito

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPresetNameRefusesWhatKAITOCannotKeepLiteral: the preset name is
// KAITO's to place in its own pods, so the renderer cannot escape it; a
// model id with `$(...)` or shell characters is refused, while preset
// names and Hugging Face ids pass.
func TestPresetNameRefusesWhatKAITOCannotKeepLiteral(t *testing.T) {
	for _, id := range []string{"org/m-$(HF_TOKEN)", "phi;id", "a`b`", "org/m$$"} {
		l := failures(t, "model: {id: \""+id+"\"}\nengine: {type: vllm}\nprovider: {name: kaito}\n")
		require.Equal(t, []string{"spec.model.id"}, fields(l, "error"), id)
		require.Contains(t, l[0].Message, "cannot name a KAITO preset")
	}
	for _, id := range []string{"phi-3.5-mini-instruct", "Qwen/Qwen3-0.6B", "microsoft/Phi-4-mini_instruct"} {
		_, _ = render(t, "model: {id: \""+id+"\"}\nengine: {type: vllm}\nprovider: {name: kaito}\n")
	}
}
