#!/bin/sh
# Renders every cluster overlay of examples/kustomize into rendered/<cluster>,
# one file per object plus a kustomization.yaml listing them: the directory a
# Flux Kustomization applies (Flux cannot run KRM functions itself).
#
# Usage: examples/flux/render.sh        (KUSTOMIZE=path/to/kustomize to pick the binary)
#
# Needs standalone kustomize (kubectl kustomize has no --enable-exec) and
# airunway-render: bin/airunway-render (`make build`) when there is one, else
# the one on PATH (`make install`). Each directory is built aside and
# replaces the old one only when complete, so objects of deleted models
# leave Git (Flux prunes them) and a failure leaves the old directory.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
kustomize=$(command -v "${KUSTOMIZE:-kustomize}") || {
  echo "render.sh: ${KUSTOMIZE:-kustomize} not found" >&2
  exit 1
}
case $kustomize in /*) ;; *) kustomize=$PWD/$kustomize ;; esac
# The overlays' exec declaration names airunway-render, looked up on PATH.
PATH="$here/../../bin:$PATH"
export PATH

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for overlay in "$here"/../kustomize/clusters/*/; do
  cluster=$(basename "$overlay")
  out="$tmp/$cluster"
  mkdir -p "$out"
  "$kustomize" build --enable-alpha-plugins --enable-exec "$overlay" -o "$out"
  # An empty directory would make Flux prune every model of the cluster.
  if ! grep -lqs '^kind: ModelDeployment$' "$out"/*.yaml; then
    echo "render.sh: $overlay rendered no ModelDeployment; refusing to replace $here/rendered/$cluster" >&2
    exit 1
  fi
  (cd "$out" && "$kustomize" create --autodetect)
done

# Every overlay rendered: replace the whole tree, so clusters whose overlay
# is gone disappear too.
rm -rf "$here/rendered"
mkdir -p "$here/rendered"
for out in "$tmp"/*/; do
  cluster=$(basename "$out")
  mv "$out" "$here/rendered/$cluster"
  echo "rendered $cluster: $(ls "$here/rendered/$cluster" | grep -vc '^kustomization.yaml$') objects in examples/flux/rendered/$cluster"
done
