#!/usr/bin/env bash
# Usage: hack/install-golangci-lint.sh DIR
#
# Builds golangci-lint from the Go module proxy into DIR and prints its path
# on the last line of stdout. `make lint` (part of `make test`) runs it with
# the repository's .golangci.yml: the layering rules (depguard), import
# grouping (goimports), no init(), and the standard checks.
#
# GOLANGCI_LINT_VERSION (default v2.15.0) must build with the local Go and
# understand its language version: v2.15.0's go.mod says go 1.26.0. A DIR
# that already holds the wanted version is reused, so point DIR at a cache
# outside the work tree (the Makefile uses one directory per version) to
# build once per machine; the build shares the Go build cache.
set -euo pipefail

dir="${1:?usage: $0 DIR}"
version="${GOLANGCI_LINT_VERSION:-v2.15.0}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
bin="$dir/golangci-lint"

# Serialise parallel callers.
exec 9>"$dir/.golangci-lint.lock"
flock 9

installed() { "$bin" version --short 2>/dev/null | grep -qx "${version#v}"; }

if [[ -x "$bin" ]] && installed; then
  echo "$bin"
  exit 0
fi

echo "installing golangci-lint $version into $dir (a few minutes on a cold build cache)" >&2
start=$SECONDS
# Outside any module, so the project's go.mod is not consulted or changed.
(cd / && GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$dir" \
  go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${version}") >&2
if ! installed; then
  echo "golangci-lint reports $("$bin" version --short 2>&1), expected ${version#v}" >&2
  exit 1
fi
echo "golangci-lint $version built in $((SECONDS - start)) s" >&2
echo "$bin"
