package kaito

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/airunway-render/airunway-render/diag"
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

// KAITO before 0.11 refuses a modelAccessSecret for a preset whose
// weights are in its image (downloadAtRuntime false in its
// supported_models.yaml): the Secret is not passed, and a warning names
// it; a preset that downloads its weights keeps it, and so does every
// preset from 0.11.
func TestModelAccessSecretWhereKAITOTakesIt(t *testing.T) {
	const token = "secrets: {huggingFaceToken: hf-token}\nengine: {type: vllm}\nprovider: {name: kaito}\n"
	secret := func(obj map[string]any) any {
		return get(obj, "inference", "preset", "presetOptions", "modelAccessSecret")
	}
	for _, c := range []struct {
		release, id string
		kept        bool
	}{
		{"0.8.0", "phi-4", false},
		{"0.8.1", "microsoft/phi-4", false}, // rendered as phi-4
		{"0.9.0", "microsoft/Phi-4", false}, // KAITO lower-cases the id to its phi-4 preset
		{"0.10.0", "gpt-oss-20b", false},
		{"0.10.0", "openai/gpt-oss-20b", false},
		{"0.10.0", "qwen2.5-coder-7b-instruct", false},
		{"0.6.2", "phi-3.5-mini-instruct", false},
		{"0.8.0", "llama-3.1-8b-instruct", true}, // gated: required
		{"0.10.0", "openai/gpt-oss-120b", true},  // downloaded at runtime
		{"0.9.0", "Qwen/Qwen3-8B", true},         // generated from the Hub
		{"0.11.0", "phi-4", true},
		{"0.12.0", "openai/gpt-oss-20b", true},
	} {
		obj, l := render(t, "model: {id: "+c.id+"}\n"+token, at(c.release))
		if c.kept {
			require.Equal(t, "hf-token", secret(obj), "%s %s", c.release, c.id)
			require.NotContains(t, fields(l, diag.Warning), "spec.secrets.huggingFaceToken", "%s %s", c.release, c.id)
			continue
		}
		require.Nil(t, secret(obj), "%s %s", c.release, c.id)
		require.Contains(t, fields(l, diag.Warning), "spec.secrets.huggingFaceToken", "%s %s", c.release, c.id)
		for _, p := range l {
			if p.Field == "spec.secrets.huggingFaceToken" {
				require.Equal(t, diag.IgnoredField, p.Code)
				require.Contains(t, p.Message, `the Secret "hf-token" is not passed`)
				require.Contains(t, p.Message, `"This preset does not require a modelAccessSecret with HF_TOKEN key under presetOptions"`)
			}
		}
	}
	// Put back by the overrides: KAITO would refuse the Workspace.
	l := failures(t, "model: {id: phi-4}\n"+`secrets: {huggingFaceToken: hf-token}
engine: {type: vllm}
provider: {name: kaito, overrides: {inference: {preset: {presetOptions: {modelAccessSecret: mine}}}}}
`, at("0.10.0"))
	require.Equal(t, []string{"spec.provider.overrides.inference.preset.presetOptions.modelAccessSecret"}, fields(l, diag.Error))
}
