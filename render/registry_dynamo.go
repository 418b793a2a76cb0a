package render

import "github.com/airunway-render/airunway-render/providers/dynamo"

func init() { register(dynamo.Provider{}) }
