package hub

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The cases of upstream main's #317 tests (docs/upstream-main.md):
// TestEngineCapability_EffectiveAPIFormats*, TestValidateAPIFormatsForEngine*.
func TestEffectiveAPIFormats(t *testing.T) {
	var none *EngineCapability
	require.Nil(t, none.EffectiveAPIFormats(), "an engine the provider lacks")
	require.Equal(t, []string{APIFormatOpenAIChat}, (&EngineCapability{Name: EngineVLLM}).EffectiveAPIFormats(), "unset is Chat Completions")
	require.Equal(t, []string{APIFormatOpenAIChat, APIFormatAnthropicMessages},
		(&EngineCapability{Name: EngineVLLM, APIFormats: []string{APIFormatAnthropicMessages, APIFormatOpenAIChat}}).EffectiveAPIFormats(), "in status order")
}

func TestCheckAPIFormat(t *testing.T) {
	for engine, formats := range map[string][]string{
		EngineVLLM:     {APIFormatOpenAIChat, APIFormatOpenAIResponses, APIFormatAnthropicMessages},
		EngineSGLang:   {APIFormatOpenAIChat, APIFormatAnthropicMessages},
		EngineLlamaCpp: {APIFormatOpenAIChat},
		EngineTRTLLM:   {APIFormatOpenAIChat, APIFormatOpenAIResponses},
	} {
		for _, f := range formats {
			require.Empty(t, CheckAPIFormat(engine, f), "%s %s", engine, f)
		}
	}
	for _, bad := range [][2]string{{EngineTRTLLM, APIFormatAnthropicMessages}, {EngineSGLang, APIFormatOpenAIResponses}, {EngineLlamaCpp, APIFormatAnthropicMessages}} {
		require.Contains(t, CheckAPIFormat(bad[0], bad[1]), `engine "`+bad[0]+`" does not support API format "`+bad[1]+`"`)
	}
	require.Contains(t, CheckAPIFormat(EngineVLLM, "openai-completions"), `"openai-completions" is not an API format`)
	require.Len(t, EngineAPIFormats, len(Engines), "every engine has its most")
}

func TestSplitAPIFormats(t *testing.T) {
	require.Equal(t, []string{APIFormatOpenAIChat, APIFormatAnthropicMessages}, SplitAPIFormats(JoinAPIFormats([]string{APIFormatAnthropicMessages, "grpc", APIFormatOpenAIChat})))
	require.Nil(t, SplitAPIFormats(""))
}
