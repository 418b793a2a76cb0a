#!/usr/bin/env bash
# hack/test.sh: what `make test` runs (the Makefile passes the variables
# below). Every test of the module, with the tools the tests need built
# from source on first use and cached under TOOLS_DIR.
#
# On a cold machine the run is bound by compiling on 2 cores: kube-apiserver,
# the twin's components, Argo CD and Flux take most of it. On a warm one it
# is bound by the cluster tests' own waits (controllers reconciling, Argo CD
# and Flux on their loops). So everything runs as soon as what it needs is
# there, in three lanes side by side:
#
#   lane 1 (background)  hack/install-gitops.sh (Argo CD, Flux, redis-server),
#                        then, once the binaries are built, the GitOps suite
#                        (GITOPS_TESTS in ./test/twin)
#   lane 2 (background)  make tools, hack/install-envtest.sh,
#                        hack/install-twin.sh, then, once the binaries are
#                        built, the cluster packages (CLUSTER_PACKAGES), all
#                        four at once: they mostly wait on controllers, and
#                        go test's default of one per core ran the twin
#                        beside the other three one after another, the
#                        longest chain of the run
#   lane 3 (foreground)  make verify-modules lint build; go test of every
#                        package but the cluster ones (which replays the fuzz
#                        targets' seeds); hack/fuzz.sh only if TEST_FUZZTIME
#
# Warm, the tools are cached and lanes 1 and 2 start their tests as soon as
# `make build` is done, beside lane 3's. Every go command runs with
# -trimpath, as `make build` does, so the tests reuse the packages compiled
# for the binaries instead of compiling them a second time. Each phase
# prints "make test [elapsed] ..." on stderr, so a slow run shows where its
# time went; a lane's test output is printed when it ends. A failure
# anywhere stops the run and the lanes with it.
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
# the go builds and tests it started too. The whole session is signalled,
# not only the chain's process group: envtest starts kube-apiserver and
# etcd in process groups of their own, and a stopped run left them behind
# as orphans that spun for minutes. What outlives SIGTERM by 10 s is killed.
stop_chains() {
	local pid i
	for pid in "${chains[@]}"; do pkill -TERM -s "$pid" 2>/dev/null || true; done
	for pid in "${chains[@]}"; do
		for ((i = 0; i < 100; i++)); do
			pgrep -s "$pid" >/dev/null || break
			sleep 0.1
		done
		pkill -KILL -s "$pid" 2>/dev/null || true
	done
	rm -rf "$out"
}
trap stop_chains EXIT
trap 'exit 130' INT TERM

# The lanes wait for the binaries the tests run: "$out/built" appears once
# `make build` is done (a failed build stops the run, and the lanes with it).
export AIRUNWAY_RENDER_BIN=$PWD/bin/airunway-render AIRUNWAY_STATUS_REPORTER_BIN=$PWD/bin/airunway-status-reporter
wait_built='until [ -e "$OUT/built" ]; do sleep 1; done'
# The GitOps suite runs on the twin too: it also waits for lane 2's tools.
wait_twin='until [ -e "$OUT/tools-built" ]; do sleep 1; done'

say "lane 1: hack/install-gitops.sh (Argo CD, Flux; cached after the first run), then the GitOps suite"
setsid env OUT="$out" GO="$go" GITOPS_TESTS="$gitops_tests" bash -c '
	set -e
	hack/install-gitops.sh "$1" >"$OUT/gitops"
	GITOPS_ASSETS=$(tail -n1 "$OUT/gitops") && export GITOPS_ASSETS
	'"$wait_twin"'
	KUBEBUILDER_ASSETS=$(tail -n1 "$OUT/envtest") TWIN_ASSETS=$(tail -n1 "$OUT/twin") && export KUBEBUILDER_ASSETS TWIN_ASSETS
	'"$wait_built"'
	echo "lane 1: go test -run $GITOPS_TESTS ./test/twin (GITOPS_ASSETS=$GITOPS_ASSETS)" >&2
	exec "$GO" test -count=1 -timeout 20m -v -run "$GITOPS_TESTS" ./test/twin >"$OUT/gitops-tests" 2>&1' _ "$GITOPS_DIR" &
gitops_lane=$!
chains+=("$gitops_lane")
say "lane 2: make tools, hack/install-envtest.sh, hack/install-twin.sh (cached after the first run), then the cluster packages"
setsid env OUT="$out" GO="$go" MAKE_CMD="$make" GITOPS_TESTS="$gitops_tests" bash -c '
	set -e
	"$MAKE_CMD" --no-print-directory tools >&2
	hack/install-envtest.sh "$1" >"$OUT/envtest"
	hack/install-twin.sh "$2" >"$OUT/twin"
	touch "$OUT/tools-built"
	KUBEBUILDER_ASSETS=$(tail -n1 "$OUT/envtest") TWIN_ASSETS=$(tail -n1 "$OUT/twin") && export KUBEBUILDER_ASSETS TWIN_ASSETS
	'"$wait_built"'
	shift 2
	echo "lane 2: go test $* (KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS TWIN_ASSETS=$TWIN_ASSETS)" >&2
	exec "$GO" test -count=1 -p 4 -timeout 30m -skip "$GITOPS_TESTS" "$@" >"$OUT/cluster-tests" 2>&1' \
	_ "$ENVTEST_DIR" "$TWIN_DIR" "${cluster_packages[@]}" &
cluster_lane=$!
chains+=("$cluster_lane")

say "lane 3: make verify-modules lint build"
"$make" --no-print-directory verify-modules lint build
touch "$out/built"

mapfile -t packages < <("$go" list ./... | grep -vxF "${cluster_packages[@]/#/-e}")
say "lane 3: go test: ${#packages[@]} packages that need no cluster"
"$go" test -count=1 -timeout 30m "${packages[@]}"

# go test above replayed every fuzz target's seeds and saved failures.
# Fuzzing itself is `make fuzz`: a few seconds a target here spent them
# replaying the corpus the earlier runs generated (it grows with each run)
# and found nothing new, at three minutes or more of a warm run.
if [ -n "${TEST_FUZZTIME:-}" ]; then
	say "lane 3: hack/fuzz.sh $TEST_FUZZTIME"
	hack/fuzz.sh "$TEST_FUZZTIME"
fi

# A lane that failed before its tests (a tool's build) said why on stderr;
# one whose tests failed has their output in its file.
lane_status=0
say "waiting for lane 2 (the cluster packages)"
wait "$cluster_lane" || lane_status=$?
say "lane 2: go test: ${cluster_packages[*]#"$module/"} (exit $lane_status):"
if ! cat "$out/cluster-tests" 2>/dev/null; then
	say "FAILED: lane 2 stopped before its tests: building the cluster tools (their output is above)"
	exit 1 # lane 1 waits for those tools: stopped with the run
fi
gitops_status=0
say "waiting for lane 1 (the GitOps suite)"
wait "$gitops_lane" || gitops_status=$?
say "lane 1: go test -run $gitops_tests ./test/twin (exit $gitops_status):"
cat "$out/gitops-tests" 2>/dev/null || say "lane 1 failed before its tests: building the GitOps engines (their output is above)"
if [ "$lane_status" -ne 0 ] || [ "$gitops_status" -ne 0 ]; then
	say "FAILED: the cluster packages' tests (exit $lane_status) or the GitOps suite (exit $gitops_status)"
	exit 1
fi
say "passed"
