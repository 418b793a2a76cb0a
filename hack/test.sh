#!/usr/bin/env bash
# hack/test.sh: what `make test` runs (the Makefile passes the variables
# below). Every test of the module, with the tools the tests need built
# from source on first use and cached under TOOLS_DIR.
#
# On a cold machine the run is bound by compiling on 2 cores: kube-apiserver,
# the twin's components, Argo CD and Flux take most of it. So those builds
# start at once, in two background chains, and everything that needs none
# of them runs meanwhile; the CPU stays busy while a build waits on the
# network or a single-threaded link, and the tests' own waits overlap the
# builds:
#
#   background   hack/install-gitops.sh (Argo CD, Flux, redis-server)
#   background   make tools, then hack/install-envtest.sh, hack/install-twin.sh
#   foreground   make verify-modules lint build; go test of every package
#                but the cluster ones; hack/fuzz.sh
#   then         go test of the cluster packages (CLUSTER_PACKAGES), once the
#                second chain has finished, in the background
#   beside it    the GitOps suite (GITOPS_TESTS in ./test/twin), once the
#                first chain has finished
#
# Every go command runs with -trimpath, as `make build` does, so the tests
# reuse the packages compiled for the binaries instead of compiling them a
# second time. Each phase prints "make test [elapsed] ..." on stderr, so a
# slow run shows where its time went. A failure anywhere stops the run and
# the background builds with it.
#
#   GO, MAKE, TOOLS_DIR, ENVTEST_DIR, TWIN_DIR, GITOPS_DIR, KUSTOMIZE,
#   GITOPS_TESTS, TEST_FUZZTIME
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."

go=${GO:-go}
make=${MAKE:-make}
: "${TOOLS_DIR:?}" "${ENVTEST_DIR:?}" "${TWIN_DIR:?}" "${GITOPS_DIR:?}" "${KUSTOMIZE:?}"
gitops_tests=${GITOPS_TESTS:-TestGitOps}
module=$("$go" list -m)
# The packages whose tests need the background builds: the reporter's and
# deploy's (kube-apiserver), the end-to-end ones (kustomize, buildah,
# kube-apiserver) and the twin's (all of it).
cluster_packages=("$module/reporter" "$module/deploy" "$module/test/e2e" "$module/test/twin")
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"

t0=$SECONDS
say() { printf 'make test [%dm%02ds] %s\n' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)) "$*" >&2; }

mkdir -p "$TOOLS_DIR"
out=$(mktemp -d "${TMPDIR:-/tmp}/airunway-test.XXXXXX")
chains=()
# Each chain runs in a session of its own (setsid), so stopping it stops
# the go builds it started too.
stop_chains() {
	local pid
	for pid in "${chains[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
	rm -rf "$out"
}
trap stop_chains EXIT
trap 'exit 130' INT TERM

say "background: hack/install-gitops.sh (Argo CD, Flux; cached after the first run)"
setsid bash -c 'hack/install-gitops.sh "$1" >"$2/gitops"' _ "$GITOPS_DIR" "$out" &
gitops_chain=$!
chains+=("$gitops_chain")
say "background: make tools, hack/install-envtest.sh, hack/install-twin.sh (cached after the first run)"
setsid bash -c 'set -e; "$1" --no-print-directory tools >&2; hack/install-envtest.sh "$2" >"$4/envtest"; hack/install-twin.sh "$3" >"$4/twin"' \
	_ "$make" "$ENVTEST_DIR" "$TWIN_DIR" "$out" &
cluster_chain=$!
chains+=("$cluster_chain")

say "make verify-modules lint build"
"$make" --no-print-directory verify-modules lint build

export AIRUNWAY_RENDER_BIN=$PWD/bin/airunway-render AIRUNWAY_STATUS_REPORTER_BIN=$PWD/bin/airunway-status-reporter
mapfile -t packages < <("$go" list ./... | grep -vxF "${cluster_packages[@]/#/-e}")
say "go test: ${#packages[@]} packages that need no cluster"
"$go" test -count=1 -timeout 30m "${packages[@]}"

say "hack/fuzz.sh ${TEST_FUZZTIME:-5s}"
hack/fuzz.sh "${TEST_FUZZTIME:-5s}"

say "waiting for kube-apiserver, the twin and kustomize"
wait "$cluster_chain" || { say "FAILED: building the cluster tools (their output is above)"; exit 1; }
export KUBEBUILDER_ASSETS TWIN_ASSETS KUSTOMIZE
KUBEBUILDER_ASSETS=$(tail -n1 "$out/envtest")
TWIN_ASSETS=$(tail -n1 "$out/twin")
# The cluster packages and the GitOps suite run side by side: most of the
# GitOps suite's time is Argo CD and Flux waiting on their own loops, not
# CPU. The cluster packages' output is kept and printed when they end.
say "go test: ${cluster_packages[*]#"$module/"} (KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS TWIN_ASSETS=$TWIN_ASSETS), in the background"
setsid "$go" test -count=1 -timeout 30m -skip "$gitops_tests" "${cluster_packages[@]}" >"$out/cluster-tests" 2>&1 &
cluster_tests=$!
chains+=("$cluster_tests")

say "waiting for the GitOps engines"
wait "$gitops_chain" || { say "FAILED: building the GitOps engines (their output is above)"; exit 1; }
export GITOPS_ASSETS
GITOPS_ASSETS=$(tail -n1 "$out/gitops")
say "go test -run $gitops_tests ./test/twin (GITOPS_ASSETS=$GITOPS_ASSETS)"
gitops_status=0
"$go" test -count=1 -timeout 20m -v -run "$gitops_tests" ./test/twin || gitops_status=$?

say "waiting for the cluster packages' tests"
cluster_status=0
wait "$cluster_tests" || cluster_status=$?
say "go test: ${cluster_packages[*]#"$module/"}:"
cat "$out/cluster-tests"
if [ "$cluster_status" -ne 0 ] || [ "$gitops_status" -ne 0 ]; then
	say "FAILED: the cluster packages' tests (exit $cluster_status) or the GitOps suite (exit $gitops_status)"
	exit 1
fi
say "passed"
