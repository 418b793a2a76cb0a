package render

import "github.com/airunway-render/airunway-render/providers/kuberay"

func init() { register(kuberay.Provider{}) }
