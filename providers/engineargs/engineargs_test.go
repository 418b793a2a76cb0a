package engineargs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestForImage(t *testing.T) {
	for _, image := range []string{"vllm/vllm-openai:v0.11.0", "docker.io/vllm/vllm-openai:v0.11.0", "vllm/vllm-openai:v0.11.0@sha256:0123"} {
		s, why := ForImage(image)
		require.NotNil(t, s, image)
		require.Empty(t, why)
		require.Equal(t, "vLLM", s.Name)
		require.Equal(t, "v0.11.0", s.Release)
	}
	s, _ := ForImage("vllm/vllm-openai:v0.9.1")
	require.NotNil(t, s)
	require.Equal(t, "v0.9.1", s.Release)

	for image, why := range map[string]string{
		"vllm/vllm-openai:cu130-nightly":                "its tag \"cu130-nightly\" names no vLLM release",
		"vllm/vllm-openai:latest":                       "its tag \"latest\" names no vLLM release",
		"vllm/vllm-openai":                              "its tag \"latest\" names no vLLM release",
		"vllm/vllm-openai:v0.10.2":                      "this release of airunway-render has no option table for vLLM v0.10.2",
		"vllm/vllm-openai:v0.12.0":                      "this release of airunway-render has no option table for vLLM v0.12.0",
		"registry.example.com/vllm/vllm-openai:v0.11.0": "airunway-render does not know which server release the image runs",
		"nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.1":   "airunway-render does not know which server release the image runs",
		"localhost:5000/vllm-openai":                    "airunway-render does not know which server release the image runs",
	} {
		s, got := ForImage(image)
		require.Nil(t, s, image)
		require.Equal(t, why, got, image)
	}
	require.Equal(t, []string{
		"vllm@v0.9.0", "vllm@v0.9.0.1", "vllm@v0.9.1", "vllm@v0.9.2",
		"vllm@v0.10.0", "vllm@v0.10.1", "vllm@v0.10.1.1",
		"vllm@v0.11.0", "vllm@v0.11.1", "vllm@v0.11.2",
		"vllm@v0.14.0", "vllm@v0.14.1", "vllm@v0.15.1",
		"vllm@v0.19.0", "vllm@v0.19.1", "vllm@v0.23.0", "vllm@v0.24.0",
	}, Releases())
	for _, r := range Releases() {
		s, why := ForImage("vllm/vllm-openai:" + strings.TrimPrefix(r, "vllm@"))
		require.NotNil(t, s, why)
		require.True(t, s.Known("tensor-parallel-size"), r)
		require.True(t, s.Known("no-enable-prefix-caching"), r)
	}
}

func TestKnown(t *testing.T) {
	v11, _ := ForImage("vllm/vllm-openai:v0.11.0")
	v91, _ := ForImage("vllm/vllm-openai:v0.9.1")
	for _, key := range []string{
		"tensor-parallel-size",
		"tensor_parallel_size",              // FlexibleArgumentParser: underscores are dashes
		"enable-prefix-caching",             // a bool
		"no-enable-prefix-caching",          // and its negation (BooleanOptionalAction)
		"no-enable-auto-tool-choice",        // a FrontendArgs bool, 0.11's dataclass loop
		"compilation-config.cudagraph_mode", // a JSON key of --compilation-config
		"headless",                          // make_arg_parser's own
		"api-server-count",
		"config", // FlexibleArgumentParser reads it
		"help",
		"max-num-batch",           // an unambiguous prefix of --max-num-batched-tokens (allow_abbrev)
		"guided-decoding-backend", // deprecated in 0.11, still accepted
	} {
		require.True(t, v11.Known(key), key)
	}
	for _, key := range []string{
		"tensor-paralel-size",
		"no-max-model-len",     // not a bool: no negation
		"no-disable-log-stats", // store_true: no negation
		"enable-chunk-prefill",
		"model_tag", // positional, not an option
	} {
		require.False(t, v11.Known(key), key)
	}
	// Options that came after 0.9.1 are refused by 0.9.1's table.
	for _, key := range []string{"headless", "api-server-count", "no-enable-auto-tool-choice", "no-async-scheduling"} {
		require.False(t, v91.Known(key), key)
	}
	require.True(t, v91.Known("no-enable-prefix-caching"))
	require.True(t, v91.Known("disable-log-requests"))
	require.Contains(t, v11.Options(), "--tensor-parallel-size")
	require.NotContains(t, v11.Options(), "-tp")
}

// Options come and go between releases, as vLLM's source says.
func TestKnownAcrossReleases(t *testing.T) {
	server := func(release string) *Server {
		s, why := ForImage("vllm/vllm-openai:" + release)
		require.NotNil(t, s, why)
		return s
	}
	known := func(key string, releases ...string) {
		t.Helper()
		for _, r := range Releases() {
			release := strings.TrimPrefix(r, "vllm@")
			require.Equal(t, contains(releases, release), server(release).Known(key), "%s at %s", key, release)
		}
	}
	from := func(first string) []string {
		var out []string
		on := false
		for _, r := range Releases() {
			release := strings.TrimPrefix(r, "vllm@")
			on = on || release == first
			if on {
				out = append(out, release)
			}
		}
		return out
	}
	before := func(first string) []string {
		var out []string
		for _, r := range Releases() {
			release := strings.TrimPrefix(r, "vllm@")
			if release == first {
				break
			}
			out = append(out, release)
		}
		return out
	}
	known("kv-cache-memory-bytes", from("v0.11.0")...)
	known("async-scheduling", from("v0.10.0")...)
	known("headless", from("v0.10.0")...)
	known("enable-log-requests", from("v0.10.1")...)
	known("disable-log-requests", before("v0.19.0")...)
	known("swap-space", before("v0.19.0")...)
	known("num-scheduler-steps", before("v0.10.1")...)
	known("enable-reasoning", before("v0.10.0")...)
	known("task", before("v0.14.0")...)
	known("runner", from("v0.10.1")...)
	known("optimization-level", from("v0.14.0")...)
	known("grpc", from("v0.19.0")...) // v0.19's vllm serve adds it; v0.23's make_arg_parser
	// FrontendArgs' fields from its base class (v0.19's BaseFrontendArgs)
	known("no-trust-request-chat-template", from("v0.11.0")...)
	known("tokens-only", from("v0.11.1")...)
	// --hf-token takes an optional string: never a --no- form
	known("hf-token", from("v0.9.0")...)
	known("no-hf-token")
}
