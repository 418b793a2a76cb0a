#!/usr/bin/env bash
# Usage: hack/install-image-tools.sh
#
# Installs buildah, podman and runc from Debian when any is missing: the image
# test builds the Dockerfile's `prebuilt` stage (FROM scratch, so no registry
# is needed) and runs it. runc is needed because podman's default crun cannot
# set rlimits in the sandboxes CI runs in. Needs root; a no-op when the tools
# are already on PATH.
set -euo pipefail

missing=()
for tool in buildah podman runc; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "install-image-tools: missing ${missing[*]}; install them (apt-get install buildah podman runc) or run as root" >&2
  exit 1
fi
echo "install-image-tools: apt-get install ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A lock held by a concurrent apt run is waited for, not failed on.
apt-get -o DPkg::Lock::Timeout=120 update -qq >&2
apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends buildah podman runc >&2
