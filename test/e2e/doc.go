// Package e2e runs the built airunway-render binary through the real tools
// that host KRM functions — standalone kustomize (exec transformer), kpt
// (fn render / fn eval) and, where buildah and podman exist, the container
// image — and through its own CLI on real files.
//
// The tests assert the objects that come out, never only exit status:
// kustomize and kubectl silently skip exec functions when a flag is
// missing and still exit 0.
//
// Binaries are found through the environment, as `make test` sets it:
//
//	AIRUNWAY_RENDER_BIN  the function binary (built once into a temp dir if unset)
//	KUSTOMIZE            standalone kustomize v5.8.2 (installed into the user
//	                     cache with hack/install-kustomize.sh if unset)
//
// kpt cannot be installed from the module proxy, so kpt tests skip when it
// is not on PATH; kustomize tests never skip.
package e2e
