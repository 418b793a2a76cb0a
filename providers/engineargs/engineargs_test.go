package engineargs

import (
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
		"vllm/vllm-openai:v0.10.1":                      "this release of airunway-render has no option table for vLLM v0.10.1",
		"registry.example.com/vllm/vllm-openai:v0.11.0": "airunway-render does not know which server release the image runs",
		"nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.1.1":   "airunway-render does not know which server release the image runs",
		"localhost:5000/vllm-openai":                    "airunway-render does not know which server release the image runs",
	} {
		s, got := ForImage(image)
		require.Nil(t, s, image)
		require.Equal(t, why, got, image)
	}
	require.Equal(t, []string{"vllm@v0.9.1", "vllm@v0.11.0"}, Releases())
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
