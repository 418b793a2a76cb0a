#!/usr/bin/env bash
# hack/install-gitops.sh DIR
#
# Builds the GitOps engines the GitOps suite (test/gitops, `make gitops`)
# runs on the cluster twin, from the Go module proxy and Debian's
# packages, and prints the directory holding them as the last line of
# stdout (progress on stderr):
#
#   argocd/argocd     Argo CD's repo-server, cmp-server, application-
#                     controller and ApplicationSet controller in one
#                     binary, picked by ARGOCD_BINARY_NAME (a main of our
#                     own that imports only those four commands of
#                     github.com/argoproj/argo-cd/v3) with the Application,
#                     AppProject and ApplicationSet CRDs of that release
#                     (argocd/crds/)
#   source-controller/, kustomize-controller/
#                     Flux's controllers (v1.9.6) and their CRDs (crds/)
#   redis/bin/redis-server  Debian's redis-server with the two libraries it needs
#                     that a minimal Debian lacks (run it with
#                     LD_LIBRARY_PATH=redis/lib)
#
# Cached under DIR by version: a second call only checks stamp files.
#
#   ARGOCD_VERSION   default 3.2.11: the newest release that builds from the
#                    module proxy with Go 1.26. v3.6 asks for Go 1.27; from
#                    v3.3 Argo CD builds gitops-engine from a directory of
#                    its repository (a replace to ./gitops-engine) that no
#                    module zip holds; v3.2.12's controller/cache calls a
#                    function its util/settings lacks.
#   FLUX_VERSION     Flux's controllers, default 1.9.6
#   REDIS_DEB_VERSION  the Debian package version, default the candidate
set -euo pipefail
# Functions run in $(...): without this a failed build inside one would
# not stop the script.
shopt -s inherit_errexit

dir=${1:?usage: install-gitops.sh DIR}
argocd=${ARGOCD_VERSION:-3.2.11}
argocd=${argocd#v}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
say() { echo "install-gitops: $*" >&2; }

export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

# module_file MODULE@VERSION FIELD prints a field of `go mod download -json`
# (Dir: the module's source, GoMod: its go.mod), downloading it.
module_file() { (cd "$dir" && go mod download -json "$1") | sed -n 's/.*"'"$2"'": "\(.*\)".*/\1/p'; }

# replace_block GOMOD prints the replace directives of a go.mod, single
# lines and blocks alike.
replace_block() { sed -n '/^replace[[:space:]]*(/,/^)/p; /^replace[[:space:]][^(]/p' "$1"; }

# The directory is keyed by the release and by the set of commands the
# binary holds ("appset": the four above), so a cache from before the
# ApplicationSet controller was added (argocd-VERSION, three commands) is
# not taken for this one: it is built again beside it.
build_argocd() {
  local out="$dir/argocd-$argocd-appset" work gomod mod start
  [[ -f $out/.complete && -x $out/argocd && -f $out/crds/applicationset-crd.yaml ]] && { echo "$out"; return 0; }
  say "building Argo CD v$argocd (repo-server, cmp-server, application-controller, applicationset-controller; about 11 minutes cold)"
  start=$SECONDS
  work=$(mktemp -d "$dir/build.XXXXXX")
  mkdir -p "$out/crds"
  gomod=$(module_file "github.com/argoproj/argo-cd/v3@v$argocd" GoMod)
  mod=$(module_file "github.com/argoproj/argo-cd/v3@v$argocd" Dir)
  [[ -f $gomod && -d $mod ]] || { say "github.com/argoproj/argo-cd/v3@v$argocd is not available from the module proxy"; exit 1; }
  {
    echo "module airunway-render.local/argocd"
    echo "go 1.26.0"
    echo "require github.com/argoproj/argo-cd/v3 v$argocd"
    replace_block "$gomod"
  } >"$work/go.mod"
  cat >"$work/main.go" <<'GO'
// Command argocd runs one of four Argo CD components, picked by the
// ARGOCD_BINARY_NAME environment variable as Argo CD's own main picks
// them: the parts of Argo CD the GitOps suite needs, and no API server,
// Dex or CLI. Written by hack/install-gitops.sh.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	controller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	appset "github.com/argoproj/argo-cd/v3/cmd/argocd-applicationset-controller/commands"
	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
)

func main() {
	var cmd *cobra.Command
	switch name := os.Getenv("ARGOCD_BINARY_NAME"); name {
	case "argocd-application-controller":
		cmd = controller.NewCommand()
	case "argocd-repo-server":
		cmd = reposerver.NewCommand()
	case "argocd-cmp-server":
		cmd = cmpserver.NewCommand()
	case "argocd-applicationset-controller":
		cmd = appset.NewCommand()
	default:
		fmt.Fprintf(os.Stderr, "ARGOCD_BINARY_NAME must be argocd-application-controller, argocd-repo-server, argocd-cmp-server or argocd-applicationset-controller, not %q\n", name)
		os.Exit(2)
	}
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
GO
  (cd "$work" && go list -deps . >/dev/null && go build -trimpath -ldflags "-s -w" -o "$out/argocd" .)
  cp "$mod/manifests/crds/application-crd.yaml" "$mod/manifests/crds/appproject-crd.yaml" "$mod/manifests/crds/applicationset-crd.yaml" "$out/crds/"
  chmod u+w "$out"/crds/*.yaml
  rm -rf "$work"
  touch "$out/.complete"
  say "built Argo CD v$argocd in $((SECONDS - start)) s"
  echo "$out"
}

# Flux's source-controller and kustomize-controller, in one wrapper module
# and one `go build`, so the dependencies they share compile once. v1.9.x is
# the newest line whose go.mod says go 1.26. Their own replace blocks point
# their api modules at ./api (their repository, not the module proxy) and
# pin go-digest, and kustomize-controller's pins kustomize and yaml.v3; the
# wrapper keeps the pins. source-controller links
# github.com/fluxcd/pkg/artifact v0.18.3, whose module zip the proxy does not
# serve; v0.18.0 differs from it only in dependency versions.
build_flux() {
  local version=$1 out work name mod start
  out="$dir/flux-$version"
  [[ -f $out/.complete && -x $out/source-controller/source-controller && -x $out/kustomize-controller/kustomize-controller ]] && { echo "$out"; return 0; }
  say "building Flux's source-controller and kustomize-controller v$version"
  start=$SECONDS
  work=$(mktemp -d "$dir/build.XXXXXX")
  cat >"$work/go.mod" <<GOMOD
module airunway-render.local/flux
go 1.26.0
require (
	github.com/fluxcd/source-controller v$version
	github.com/fluxcd/source-controller/api v$version
	github.com/fluxcd/kustomize-controller v$version
	github.com/fluxcd/kustomize-controller/api v$version
)
replace (
	github.com/opencontainers/go-digest => github.com/opencontainers/go-digest v1.0.1-0.20220411205349-bde1400a84be
	github.com/fluxcd/pkg/artifact => github.com/fluxcd/pkg/artifact v0.18.0
	sigs.k8s.io/kustomize/api => sigs.k8s.io/kustomize/api v0.21.1
	sigs.k8s.io/kustomize/kyaml => sigs.k8s.io/kustomize/kyaml v0.21.1
	gopkg.in/yaml.v3 => gopkg.in/yaml.v3 v3.0.1
)
GOMOD
  mkdir -p "$work/bin"
  # `go list -deps`, not `go mod tidy`: tidy also resolves the modules of
  # the controllers' tests, one of which the proxy does not serve.
  (cd "$work" && go list -deps github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller >/dev/null &&
    go build -trimpath -ldflags "-s -w" -o "$work/bin/" github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller)
  for name in source-controller kustomize-controller; do
    mkdir -p "$out/$name/crds"
    mv "$work/bin/$name" "$out/$name/$name"
    mod=$(module_file "github.com/fluxcd/$name@v$version" Dir)
    cp "$mod"/config/crd/bases/*.yaml "$out/$name/crds/"
    chmod u+w "$out/$name"/crds/*.yaml
  done
  rm -rf "$work"
  touch "$out/.complete"
  say "built Flux's controllers v$version in $((SECONDS - start)) s"
  echo "$out"
}

# Debian's redis-server, unpacked (not installed): the package and the
# libraries it links that a minimal Debian lacks.
fetch_redis() {
  local version out work deb
  version=${REDIS_DEB_VERSION:-$(apt-cache policy redis-server 2>/dev/null | sed -n 's/.*Candidate: \(.*\)/\1/p')}
  if [[ -z $version || $version == "(none)" ]]; then
    say "updating Debian's package lists to find redis-server"
    apt-get -o DPkg::Lock::Timeout=120 update -qq >&2
    version=$(apt-cache policy redis-server | sed -n 's/.*Candidate: \(.*\)/\1/p')
  fi
  out="$dir/redis-${version//[^A-Za-z0-9.+~-]/_}"
  [[ -f $out/.complete && -x $out/bin/redis-server ]] && { echo "$out"; return 0; }
  say "fetching Debian's redis-server $version"
  work=$(mktemp -d "$dir/build.XXXXXX")
  chmod 755 "$work" # apt's download user writes here
  (cd "$work" && apt-get download -qq "redis-server=$version" "redis-tools=$version" libjemalloc2 liblzf1 >&2)
  for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  mkdir -p "$out/bin" "$out/lib"
  cp "$work"/root/usr/bin/redis-check-rdb "$out/bin/redis-server"
  cp -P "$work"/root/usr/lib/x86_64-linux-gnu/libjemalloc.so.* "$work"/root/usr/lib/x86_64-linux-gnu/liblzf.so.* "$out/lib/"
  LD_LIBRARY_PATH="$out/lib" "$out/bin/redis-server" --version >&2
  rm -rf "$work"
  touch "$out/.complete"
  echo "$out"
}

exec 8>"$dir/.lock"
flock 8
flux=${FLUX_VERSION:-1.9.6}
flux=${flux#v}
redis_dir=$(fetch_redis)
argocd_dir=$(build_argocd)
flux_dir=$(build_flux "$flux")
out="$dir/gitops-argocd-$argocd-flux-$flux"
mkdir -p "$out"
ln -sfn "$argocd_dir" "$out/argocd"
ln -sfn "$redis_dir" "$out/redis"
ln -sfn "$flux_dir/source-controller" "$out/source-controller"
ln -sfn "$flux_dir/kustomize-controller" "$out/kustomize-controller"
echo "$out"
