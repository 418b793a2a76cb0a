#!/bin/sh
# Renders each cluster of the fleet (examples/fleet/clusters/<cluster>) into
# examples/fleet/rendered/<cluster>: one file per object and a
# kustomization.yaml listing them, the plain YAML a Flux Kustomization
# applies (Flux cannot run KRM functions). Run it in CI after `airunway-render
# plan --fleet ... --write` and commit the result, as examples/flux/render.sh
# is run for the single-cluster example; a pull request whose rendered
# directories are stale should fail (examples/flux/ci-workflow.yaml).
#
# Usage: examples/fleet/flux/render.sh
#
# Only airunway-render is needed, no standalone kustomize:
# `airunway-render build` builds the cluster's overlay as `kustomize build`
# does (the renderer keeps only the models annotated airunway.ai/cluster:
# <cluster>, or not annotated), and `render --output-dir --kustomization`
# writes that output, unchanged (a second rendering is a fixed point), one
# file per object. bin/airunway-render (`make build`) when there is one,
# else the one on PATH (`make install`). Each directory is built aside and
# replaces the old ones only when every cluster rendered, so a model moved
# to another cluster leaves its old directory (Flux prunes it there) and a
# failure leaves the committed directories as they were.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
fleet=$(cd "$here/.." && pwd)
PATH="$fleet/../../bin:$PATH"
export PATH
command -v airunway-render >/dev/null || {
  echo "render.sh: airunway-render not found (make build, or make install)" >&2
  exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for overlay in "$fleet"/clusters/*/; do
  cluster=$(basename "$overlay")
  out="$tmp/$cluster"
  airunway-render build "$overlay" >"$tmp/$cluster.yaml"
  airunway-render render -f "$tmp/$cluster.yaml" --capabilities "$overlay/capabilities.yaml" \
    --output-dir "$out" --kustomization
  # A cluster may run no model of the fleet, but never loses its Namespace:
  # a directory without one would make Flux prune everything it applied.
  if ! grep -rlqs '^kind: Namespace$' "$out"; then
    echo "render.sh: $overlay rendered no Namespace; refusing to replace $fleet/rendered/$cluster" >&2
    exit 1
  fi
done

rm -rf "$fleet/rendered"
mkdir -p "$fleet/rendered"
for out in "$tmp"/*/; do
  cluster=$(basename "$out")
  mv "$out" "$fleet/rendered/$cluster"
  echo "rendered $cluster: $(grep -c '^- ' "$fleet/rendered/$cluster/kustomization.yaml") objects in examples/fleet/rendered/$cluster"
done
