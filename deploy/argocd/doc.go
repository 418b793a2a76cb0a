// Package argocd ships the Argo CD custom health check for
// airunway.ai/ModelDeployment: health.lua, and argocd-cm.yaml, a patch for
// Argo CD's argocd-cm ConfigMap that embeds it. The package has no Go API.
//
// Its test runs health.lua under gopher-lua, the interpreter Argo CD embeds,
// set up as Argo CD sets it up for argocd-cm scripts (base, package, table
// and a reduced os library only; the object converted to Lua tables as
// Argo CD converts it), and fails when argocd-cm.yaml no longer embeds
// health.lua byte for byte. Regenerate it with
//
//	go test ./deploy/argocd -update
package argocd
