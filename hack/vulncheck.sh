#!/usr/bin/env bash
# Usage: hack/vulncheck.sh [BINARY...]
#
# Checks the module's dependencies (and the Go standard library it is built
# with) against the Go vulnerability database with govulncheck:
#   - source mode on ./... (reports only vulnerable code that is reachable),
#   - binary mode on each BINARY given (e.g. bin/airunway-render).
#
# govulncheck is built from the Go module proxy at an exact version into
# TOOLS_DIR/govulncheck-VERSION and reused on later runs.
#
# Environment:
#   GOVULNCHECK_VERSION  default v1.8.0 (v1.9.0 does not build here: the module
#                        proxy refuses the golang.org/x/telemetry version it pins)
#   TOOLS_DIR            cache for the tool, default
#                        ${XDG_CACHE_HOME:-$HOME/.cache}/airunway-render/tools
#   GOVULNDB             database URL, default https://vuln.go.dev; a local
#                        copy as file:///abs/path (layout: index/db.json,
#                        index/modules.json, ID/<id>.json)
#   VULNCHECK_SOURCE=0   skip the source scan (binary scans only; faster)
#
# Exit status:
#   0  no known vulnerability affects the code or binaries
#   3  vulnerabilities found (govulncheck's own code for this)
#   4  the vulnerability database could not be reached: nothing was checked
#   1  any other error (build failed, bad GOVULNDB, package load error)
# `make vulncheck` turns 4 into a warning unless VULNCHECK_REQUIRED=1.
set -uo pipefail

# Binaries are named relative to the caller's directory; the source scan runs
# in the repository root.
bins=()
for b in "$@"; do
  [[ $b == /* ]] || b="$PWD/$b"
  bins+=("$b")
done
cd "$(dirname "$0")/.."

version="${GOVULNCHECK_VERSION:-v1.8.0}"
tools="${TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/airunway-render/tools}"
db="${GOVULNDB:-https://vuln.go.dev}"
db="${db%/}"
readonly EXIT_UNREACHABLE=4

say() { echo "vulncheck: $*" >&2; }
unreachable() {
  say "VULNERABILITY DATABASE UNREACHABLE: $db ($*)"
  say "nothing was checked. Point GOVULNDB at a local copy (file:///path) or run where $db is reachable."
  exit "$EXIT_UNREACHABLE"
}

# --- the tool ------------------------------------------------------------
mkdir -p "$tools/govulncheck-$version" || exit 1
dir="$(cd "$tools/govulncheck-$version" && pwd)"
bin="$dir/govulncheck"
goversion="$(go env GOVERSION)" || exit 1

exec 9>"$dir/.lock"
flock 9
# Rebuild when the cached binary is not this version or was built by another
# Go release (govulncheck loads packages with the go on PATH and refuses to
# mix releases).
if ! [[ -x $bin ]] ||
   ! "$bin" -version 2>/dev/null | grep -qx "Scanner: govulncheck@$version" ||
   [[ "$(go version "$bin" 2>/dev/null)" != "$bin: $goversion" ]]; then
  say "building govulncheck $version with $goversion into $dir"
  # Outside any module, so the project's go.mod is not consulted or changed.
  if ! (cd / && GOWORK=off GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$dir" \
        go install "golang.org/x/vuln/cmd/govulncheck@$version") >&2; then
    say "could not build golang.org/x/vuln/cmd/govulncheck@$version"
    exit 1
  fi
fi
flock -u 9

# --- the database --------------------------------------------------------
case "$db" in
  file://*)
    path="${db#file://}"
    if [[ ! -f $path/index/modules.json || ! -f $path/index/db.json ]]; then
      say "GOVULNDB=$db is not a vulnerability database (want index/db.json and index/modules.json under $path)"
      exit 1
    fi
    ;;
  http://* | https://*)
    if command -v curl >/dev/null; then
      if ! err="$(curl -fsS --max-time 15 -o /dev/null "$db/index/db.json" 2>&1)"; then
        unreachable "${err:-no answer}"
      fi
    fi
    ;;
  *)
    say "GOVULNDB=$db: want an https://, http:// or file:// URL"
    exit 1
    ;;
esac

# --- the scans -----------------------------------------------------------
status=0
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

# scan LABEL ARGS...: runs govulncheck, keeps the worst status (1 > 3 > 0).
scan() {
  local label=$1 rc
  shift
  echo "### govulncheck $label" >&2
  "$bin" -db "$db" "$@" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  # Without curl, or if the database went away after the probe, govulncheck
  # fails with one of these.
  if ((rc != 0 && rc != 3)) &&
     grep -qE 'fetching vulnerabilities|unrecognized vulndb format|no such host|connection refused|i/o timeout' "$out"; then
    unreachable "$(grep -m1 -E 'fetching vulnerabilities|unrecognized vulndb format' "$out" || echo "govulncheck could not fetch")"
  fi
  case $rc in
    0) ;;
    3) ((status == 0)) && status=3 ;;
    *) status=1 ;;
  esac
}

if [[ ${VULNCHECK_SOURCE:-1} == 0 && ${#bins[@]} == 0 ]]; then
  say "nothing to scan: VULNCHECK_SOURCE=0 and no BINARY given"
  exit 1
fi
if [[ ${VULNCHECK_SOURCE:-1} != 0 ]]; then
  scan "./... (source)" ./...
fi
for b in "${bins[@]}"; do
  if [[ ! -f $b ]]; then
    say "$b: no such binary"
    status=1
    continue
  fi
  scan "-mode binary $b" -mode binary "$b"
done

case $status in
  0) say "no known vulnerabilities (database $db)" ;;
  3) say "VULNERABILITIES FOUND (database $db)" ;;
  *) say "govulncheck failed" ;;
esac
exit "$status"
