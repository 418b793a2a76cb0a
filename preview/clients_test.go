package preview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// side is one model rendered with the API formats given and a route with
// a match per path.
func side(t *testing.T, formats string, paths ...string) Side {
	t.Helper()
	var matches []string
	for _, p := range paths {
		matches = append(matches, fmt.Sprintf("{path: {type: PathPrefix, value: %q}, headers: [{type: Exact, name: X-Gateway-Model-Name, value: qwen}]}", p))
	}
	md := yaml.MustParse(`apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: qwen
  namespace: ai
  annotations: {render.airunway.ai/provider: vllm, render.airunway.ai/served-name: qwen, render.airunway.ai/api-formats: "` + formats + `"}`)
	route := yaml.MustParse(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: qwen
  namespace: ai
  annotations: {render.airunway.ai/generated-from: qwen}
spec:
  parentRefs: [{name: inference-gateway}]
  rules: [{matches: [` + strings.Join(matches, ", ") + `]}]`)
	return Side{CapsFile: "caps.yaml", Objects: []*yaml.RNode{md, route}}
}

// TestAPIFormatFindings: an upgrade that takes API formats away from a
// model breaks their clients (and narrows its route); one that adds
// formats breaks nothing, though the route changes.
func TestAPIFormatFindings(t *testing.T) {
	all := side(t, "openai-chat,openai-responses,anthropic-messages", "/", "/v1/responses", "/v1/messages")
	chat := side(t, "openai-chat", "/")
	var messages []string
	for _, f := range clientFindings(all, chat) {
		require.True(t, f.Breaking, f.Message)
		messages = append(messages, f.Object+": "+f.Message)
	}
	require.Equal(t, []string{
		"ModelDeployment/ai/qwen: its engine no longer answers openai-responses, anthropic-messages through provider vllm (it answers openai-chat): clients sending those requests fail",
		"HTTPRoute/ai/qwen: what a request must carry to match the route (parent gateway, hostname, path or header) changes: clients sending the old match reach no model",
	}, messages)
	require.Empty(t, clientFindings(chat, all))
}
