package render

import "github.com/airunway-render/airunway-render/providers/kaito"

func init() { register(kaito.Provider{}) }
