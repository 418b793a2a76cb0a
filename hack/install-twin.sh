#!/usr/bin/env bash
# hack/install-twin.sh DIR
#
# Builds the parts of the cluster twin that envtest does not have: the real
# kube-scheduler and kube-controller-manager (the same Kubernetes release as
# hack/install-envtest.sh's kube-apiserver) and KWOK's fake kubelet, from
# source the Go module proxy serves, and KWOK's stage definitions
# (stages.yaml). Prints the directory holding them as the last line of
# stdout, and progress on stderr.
#
# Cached under DIR by version: a second call only checks stamp files. Cold,
# about 7 minutes on 2 cores (measured alone: the scheduler 83 s and the
# controller-manager 94 s when built one after the other, now built in one
# `go build`; KWOK; the KubeRay operator 129 s; KubeRay 1.6.0, 262 s with
# its modules downloaded) once install-envtest.sh has put k8s.io/kubernetes
# in the module cache.
#
#   K8S_VERSION      Kubernetes release, default 1.37.1 (as install-envtest.sh)
#   KWOK_VERSION     KWOK release, default 0.8.0
#   KUBERAY_VERSIONS KubeRay operator releases, default "1.3.0 1.6.0" (the
#                    embedded default capability file's, and the newest the
#                    module proxy serves, which the DRA test runs: 1.3.0
#                    cannot carry a resource claim); each goes into
#                    kuberay-<version>/ beside the binaries, with the CRDs of
#                    that release (config/crd/bases of its module)
#   GATEWAY_API_VERSION, GAIE_VERSION  the Gateway API (standard channel,
#                    default 1.5.1) and Inference Extension (default 1.5.0)
#                    CRDs the examples' gateway declares, copied from their
#                    Go modules into gateway-crds-<api>-<gaie>/
set -euo pipefail

dir=${1:?usage: install-twin.sh DIR}
k8s=${K8S_VERSION:-1.37.1}
k8s=${k8s#v}
kwok=${KWOK_VERSION:-0.8.0}
kwok=${kwok#v}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
out="$dir/k8s-$k8s-kwok-$kwok-$(go env GOOS)-$(go env GOARCH)"
stamp="$out/.complete"

say() { echo "install-twin: $*" >&2; }
# shellcheck source=lib/kubernetes-module.sh
source "$(dirname "$0")/lib/kubernetes-module.sh"

# KWOK's fake kubelet does what its Stage objects say. Its own "fast"
# stages (nodes Ready at once and kept Ready by heartbeats; pods Running
# and Ready at once, completed, deleted) are taken from the KWOK module the
# binary is built from, not copied into this repository.
stages() {
  local mod
  mod=$(cd "$dir" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kwok@v$kwok" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -d $mod ]] || { say "sigs.k8s.io/kwok@v$kwok is not available from the module proxy"; exit 1; }
  {
    echo "# KWOK v$kwok's own stages, from $mod/kustomize/stage (hack/install-twin.sh)"
    for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      echo "---"
      grep -v '^---$' "$mod/kustomize/stage/$f"
    done
  } >"$out/stages.yaml.tmp"
  mv "$out/stages.yaml.tmp" "$out/stages.yaml"
}

# The real KubeRay operator of a release, and that release's CRDs. Its
# module pins some dependencies with replace directives, which the wrapper
# module copies.
kuberay() {
  local v=$1 kdir="$out/kuberay-$1" kwork gomod mod start
  [[ -f $kdir/.complete && -x $kdir/kuberay-operator ]] && return 0
  say "building the KubeRay operator v$v"
  start=$SECONDS
  kwork=$(mktemp -d "$dir/build.XXXXXX")
  mkdir -p "$kdir/crds"
  gomod=$(cd "$kwork" && go mod download -json "github.com/ray-project/kuberay/ray-operator@v$v" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  mod=$(cd "$kwork" && go mod download -json "github.com/ray-project/kuberay/ray-operator@v$v" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -f $gomod && -d $mod ]] || { say "github.com/ray-project/kuberay/ray-operator@v$v is not available from the module proxy"; exit 1; }
  {
    echo "module airunway-render.local/kuberay"
    echo "go 1.26.0"
    echo "require github.com/ray-project/kuberay/ray-operator v$v"
    grep -E '^replace ' "$gomod" || true
  } >"$kwork/go.mod"
  printf 'package main\n\nimport _ "github.com/ray-project/kuberay/ray-operator"\n' >"$kwork/deps.go"
  (cd "$kwork" && go mod tidy >&2 && go build -trimpath -ldflags "-s -w" -o "$kdir/kuberay-operator" github.com/ray-project/kuberay/ray-operator)
  cp "$mod"/config/crd/bases/ray.io_*.yaml "$kdir/crds/"
  chmod u+w "$kdir"/crds/*.yaml
  rm -rf "$kwork"
  touch "$kdir/.complete"
  say "built the KubeRay operator v$v in $((SECONDS - start)) s"
}

# The Gateway API and Inference Extension CRDs, from their own modules.
gateway_crds() {
  local api=${GATEWAY_API_VERSION:-1.5.1} gaie=${GAIE_VERSION:-1.5.0} gdir gwork mod f
  gdir="$out/gateway-crds-${api#v}-${gaie#v}"
  [[ -f $gdir/.complete ]] && return 0
  say "copying the Gateway API v${api#v} (standard) and Inference Extension v${gaie#v} CRDs"
  gwork=$(mktemp -d "$dir/build.XXXXXX")
  mkdir -p "$gdir"
  mod=$(cd "$gwork" && go mod download -json "sigs.k8s.io/gateway-api@v${api#v}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  for f in "$mod"/config/crd/standard/*.yaml; do
    grep -q '^kind: CustomResourceDefinition' "$f" && cp "$f" "$gdir/"
  done
  mod=$(cd "$gwork" && go mod download -json "sigs.k8s.io/gateway-api-inference-extension@v${gaie#v}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  cp "$mod"/config/crd/bases/*.yaml "$gdir/"
  chmod u+w "$gdir"/*.yaml
  rm -rf "$gwork"
  touch "$gdir/.complete"
}

exec 8>"$dir/.lock"
flock 8
if [[ -f $stamp && -x $out/kube-scheduler && -x $out/kube-controller-manager && -x $out/kwok ]]; then
  [[ -f $out/stages.yaml ]] || stages
  for v in ${KUBERAY_VERSIONS:-1.3.0 1.6.0}; do kuberay "${v#v}"; done
  gateway_crds
  echo "$out"
  exit 0
fi

export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
work=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/k8s" "$work/kwok"

kubernetes_module "$work/k8s" twin "$k8s" kube-scheduler kube-controller-manager
# One `go build` for both: what they share compiles once, and they link
# side by side.
say "building kube-scheduler and kube-controller-manager v$k8s"
start=$SECONDS
(cd "$work/k8s" && go build -trimpath -ldflags "$k8s_version_flags" -o "$out/" k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager)
say "built kube-scheduler and kube-controller-manager in $((SECONDS - start)) s"

say "building kwok v$kwok"
start=$SECONDS
printf 'module airunway-render.local/kwok\ngo 1.26.0\nrequire sigs.k8s.io/kwok v%s\n' "$kwok" >"$work/kwok/go.mod"
printf 'package main\n\nimport _ "sigs.k8s.io/kwok/cmd/kwok"\n' >"$work/kwok/deps.go"
(cd "$work/kwok" && go mod tidy >&2 && go build -trimpath -ldflags "-s -w" -o "$out/kwok" sigs.k8s.io/kwok/cmd/kwok)
say "built kwok in $((SECONDS - start)) s"
stages

"$out/kube-scheduler" --version >&2
"$out/kwok" --version >&2 || true
touch "$stamp"
for v in ${KUBERAY_VERSIONS:-1.3.0 1.6.0}; do kuberay "${v#v}"; done
gateway_crds
echo "$out"
