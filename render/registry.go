package render

import (
	"maps"

	"github.com/airunway-render/airunway-render/providers"
)

// builtin is filled by the registry_<provider>.go files of this package, one
// per provider, so adding a provider touches no shared line.
var builtin = map[string]providers.Provider{}

func register(p providers.Provider) { builtin[p.Name()] = p }

// Builtin is the registry of providers this release can render.
func Builtin() map[string]providers.Provider { return maps.Clone(builtin) }
