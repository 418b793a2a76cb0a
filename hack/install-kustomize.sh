#!/usr/bin/env bash
# Usage: hack/install-kustomize.sh DIR
#
# Builds the standalone kustomize CLI from the Go module proxy into DIR and
# prints its path on the last line of stdout. The tests need the standalone
# binary because only it has --enable-exec: `kubectl kustomize` lacks the
# flag and silently skips exec KRM functions.
#
# KUSTOMIZE_VERSION (default v5.8.2) must build with the local Go: v5.8.3
# requires Go 1.27. A DIR that already holds the wanted version is reused, so
# point DIR at a cache outside the work tree to build once per machine.
set -euo pipefail

dir="${1:?usage: $0 DIR}"
version="${KUSTOMIZE_VERSION:-v5.8.2}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
bin="$dir/kustomize"

# Serialise parallel callers (several test packages may ask at once).
exec 9>"$dir/.kustomize.lock"
flock 9

if [[ -x "$bin" ]] && [[ "$("$bin" version 2>/dev/null)" == "$version" ]]; then
  echo "$bin"
  exit 0
fi

echo "installing kustomize $version into $dir" >&2
# Outside any module, so the project's go.mod is not consulted or changed.
(cd / && GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$dir" \
  go install "sigs.k8s.io/kustomize/kustomize/v5@${version}") >&2
got="$("$bin" version)"
if [[ "$got" != "$version" ]]; then
  echo "kustomize reports $got, expected $version" >&2
  exit 1
fi
echo "$bin"
