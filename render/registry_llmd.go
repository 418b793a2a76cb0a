package render

import "github.com/airunway-render/airunway-render/providers/llmd"

func init() { register(llmd.Provider{}) }
