package hub

import (
	"fmt"
	"slices"
	"strings"
)

// API formats: the request formats a model server answers, as upstream AI
// Runway names them (main after v0.7.0, #317): the values of a capability
// file's `engines[].apiFormats` and of `status.gateway.apiFormats`.
const (
	// APIFormatOpenAIChat is OpenAI's Chat Completions (POST
	// /v1/chat/completions), with the rest of the OpenAI-compatible API an
	// engine serves beside it (/v1/completions, /v1/models, ...).
	APIFormatOpenAIChat = "openai-chat"
	// APIFormatOpenAIResponses is OpenAI's Responses (POST /v1/responses).
	APIFormatOpenAIResponses = "openai-responses"
	// APIFormatAnthropicMessages is Anthropic's Messages (POST
	// /v1/messages, and /v1/messages/count_tokens).
	APIFormatAnthropicMessages = "anthropic-messages"
)

// APIFormats lists the formats in the order status reports them.
var APIFormats = []string{APIFormatOpenAIChat, APIFormatOpenAIResponses, APIFormatAnthropicMessages}

// APIFormatPaths is the path prefix of each format but Chat Completions,
// which is everything else the server answers: the gateway routes a
// format's prefix only to servers that declare it.
var APIFormatPaths = map[string]string{
	APIFormatOpenAIResponses:   "/v1/responses",
	APIFormatAnthropicMessages: "/v1/messages",
}

// EngineAPIFormats is the most each engine can serve, upstream's
// ValidAPIFormatsForEngine: a provider may declare less, never more.
var EngineAPIFormats = map[string][]string{
	EngineVLLM:     {APIFormatOpenAIChat, APIFormatOpenAIResponses, APIFormatAnthropicMessages},
	EngineSGLang:   {APIFormatOpenAIChat, APIFormatAnthropicMessages},
	EngineTRTLLM:   {APIFormatOpenAIChat, APIFormatOpenAIResponses},
	EngineLlamaCpp: {APIFormatOpenAIChat},
}

// EffectiveAPIFormats is what an engine capability serves: its declared
// formats in APIFormats order, or Chat Completions alone when it declares
// none (upstream's rule for configs older than the field). Nil for a nil
// capability.
func (e *EngineCapability) EffectiveAPIFormats() []string {
	if e == nil {
		return nil
	}
	if len(e.APIFormats) == 0 {
		return []string{APIFormatOpenAIChat}
	}
	out := make([]string, 0, len(e.APIFormats))
	for _, f := range APIFormats {
		if slices.Contains(e.APIFormats, f) {
			out = append(out, f)
		}
	}
	return out
}

// CheckAPIFormat says why an engine cannot declare a format, "" when it
// can: the format must be one of APIFormats and within EngineAPIFormats.
func CheckAPIFormat(engine, format string) string {
	if !slices.Contains(APIFormats, format) {
		return fmt.Sprintf("%q is not an API format: must be one of %s", format, QuoteList(APIFormats))
	}
	allowed, known := EngineAPIFormats[engine]
	if known && !slices.Contains(allowed, format) {
		return fmt.Sprintf("engine %q does not support API format %q: it serves at most %s", engine, format, QuoteList(allowed))
	}
	return ""
}

// JoinAPIFormats and SplitAPIFormats write and read the formats as the
// annotation AnnotationAPIFormats holds them.
func JoinAPIFormats(formats []string) string { return strings.Join(formats, ",") }

// SplitAPIFormats keeps the known formats of an annotation value, in
// APIFormats order: the CRD's enum would refuse a status with any other.
func SplitAPIFormats(value string) []string {
	var out []string
	have := strings.Split(value, ",")
	for _, f := range APIFormats {
		if slices.Contains(have, f) {
			out = append(out, f)
		}
	}
	return out
}
