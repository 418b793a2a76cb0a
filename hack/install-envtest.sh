#!/usr/bin/env bash
# hack/install-envtest.sh DIR
#
# Builds the control plane the status reporter's tests run against: a real
# kube-apiserver and etcd, compiled from source that the Go module proxy
# serves (the only network these machines have; no release buckets, no
# container images). Prints the directory holding both binaries, for
# KUBEBUILDER_ASSETS, as the last line of stdout.
#
# The result is cached under DIR by version: a second call only checks a
# stamp file. A cold build takes about 9 minutes on 2 cores (kube-apiserver
# dominates) and leaves a few GiB in the Go caches.
#
#   K8S_VERSION   kube-apiserver release, default 1.37.1 (matches go.mod's
#                 k8s.io/* v0.37.1)
#   ETCD_VERSION  etcd release, default 3.7.3
set -euo pipefail

dir=${1:?usage: install-envtest.sh DIR}
k8s=${K8S_VERSION:-1.37.1}
k8s=${k8s#v}
etcd=${ETCD_VERSION:-3.7.3}
etcd=${etcd#v}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
out="$dir/k8s-$k8s-etcd-$etcd-$(go env GOOS)-$(go env GOARCH)"
stamp="$out/.complete"

say() { echo "install-envtest: $*" >&2; }
# shellcheck source=lib/kubernetes-module.sh
source "$(dirname "$0")/lib/kubernetes-module.sh"

# Parallel test binaries may ask at once; one builds, the others wait.
exec 8>"$dir/.lock"
flock 8
if [[ -f $stamp && -x $out/kube-apiserver && -x $out/etcd ]]; then
  echo "$out"
  exit 0
fi

# Isolate the builds from whatever module or workspace the caller is in.
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
work=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/apiserver" "$work/etcd"

kubernetes_module "$work/apiserver" apiserver "$k8s" kube-apiserver
say "building kube-apiserver v$k8s"
(cd "$work/apiserver" && go build -trimpath -ldflags "$k8s_version_flags" -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)

say "building etcd v$etcd"
cat >"$work/etcd/main.go" <<'EOF'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
printf 'module airunway-render.local/etcd\ngo 1.26.0\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$etcd" >"$work/etcd/go.mod"
(cd "$work/etcd" && go mod tidy >&2 && go build -trimpath -ldflags "-s -w" -o "$out/etcd" .)

"$out/kube-apiserver" --version >&2
touch "$stamp"
echo "$out"
