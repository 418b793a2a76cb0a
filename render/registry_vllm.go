package render

import "github.com/airunway-render/airunway-render/providers/vllm"

func init() { register(vllm.Provider{}) }
