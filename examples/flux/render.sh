#!/bin/sh
# Renders every cluster overlay of examples/kustomize into rendered/<cluster>,
# one file per object plus a kustomization.yaml listing them: the directory a
# Flux Kustomization applies (Flux cannot run KRM functions itself).
#
# Usage: examples/flux/render.sh        (KUSTOMIZE=path/to/kustomize to pick the binary)
#
# Needs standalone kustomize (kubectl kustomize has no --enable-exec) and
# bin/airunway-render (`make build`). Each directory is rebuilt from scratch,
# so objects of deleted models disappear from Git, and Flux prunes them.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
kustomize=${KUSTOMIZE:-kustomize}

for overlay in "$here"/../kustomize/clusters/*/; do
  cluster=$(basename "$overlay")
  out="$here/rendered/$cluster"
  rm -rf "$out"
  mkdir -p "$out"
  "$kustomize" build --enable-alpha-plugins --enable-exec "$overlay" -o "$out"
  # An empty directory would make Flux prune every model of the cluster.
  if ! ls "$out"/airunway.ai_v1alpha1_modeldeployment_*.yaml >/dev/null 2>&1; then
    echo "render.sh: $overlay rendered no ModelDeployment; refusing to write an empty $out" >&2
    exit 1
  fi
  (cd "$out" && "$kustomize" create --autodetect)
  echo "rendered $cluster: $(ls "$out" | grep -vc '^kustomization.yaml$') objects in $out"
done
