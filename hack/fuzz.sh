#!/usr/bin/env bash
# Runs every Go fuzz target of the module, one after another, for FUZZTIME
# each (go test accepts only one -fuzz target per invocation), then prints a
# table: target, package, checked-in seed files (<pkg>/testdata/fuzz/<name>),
# entries of the generated corpus ($GOCACHE/fuzz/<import path>/<name>), execs
# and execs/sec. Targets are found by grepping `func Fuzz` in *_test.go, so a
# new one is picked up without editing this script.
#
# Usage: hack/fuzz.sh [FUZZTIME]      FUZZTIME: a duration (5s, 2m) or Nx execs;
#                                     default $FUZZTIME, else 60s
# Environment:
#   FUZZ_MATCH     only targets whose name matches this extended regexp
#   FUZZ_PARALLEL  fuzzing workers per target (go test -parallel; default GOMAXPROCS)
#
# Go 1.26's fuzz coordinator sometimes reports its own FUZZTIME deadline as
# a failure (go.dev/issue/75804, fixed in Go 1.27): a bare "context deadline
# exceeded" with no input written. Such a run counts as passed once the
# target's seed corpus replays cleanly, and the table says so.
#
# Exit status: 0 when every target passed; 1 otherwise. A failing input is
# written by Go into the package's testdata/fuzz/<name>/, the checked-in seed
# corpus: the script prints its path; move it out (or fix the bug) before
# committing.
set -euo pipefail

cd "$(dirname "$0")/.."
fuzztime=${1:-${FUZZTIME:-60s}}
go=${GO:-go}
cache=$("$go" env GOCACHE)
logdir=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

# file:func pairs, skipping vendored code and corpora.
mapfile -t found < <(grep -rEo --include='*_test.go' --exclude-dir=vendor --exclude-dir=testdata --exclude-dir=.git \
	'^func Fuzz[A-Za-z0-9_]*\(' . | sed -E 's/\($//; s/:func /:/' | sort)
if [ ${#found[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 1
fi

# seconds converts a Go duration as printed by the fuzzer (1h2m3s, 45s, 1m0s).
seconds() {
	local d=$1 total=0 n
	while [[ $d =~ ^([0-9.]+)([hms])(.*)$ ]]; do
		n=${BASH_REMATCH[1]%.*}
		case ${BASH_REMATCH[2]} in
		h) total=$((total + n * 3600)) ;;
		m) total=$((total + n * 60)) ;;
		s) total=$((total + n)) ;;
		esac
		d=${BASH_REMATCH[3]}
	done
	echo "$total"
}

count() { [ -d "$1" ] && find "$1" -type f | wc -l | tr -d ' ' || echo 0; }

# coordinator_race reports a run whose only failure is the fuzz
# coordinator's deadline: "context deadline exceeded" and no input written.
coordinator_race() {
	grep -q '^    context deadline exceeded$' "$1" && ! grep -q 'Failing input written to' "$1" &&
		[ "$(grep -c '^--- FAIL' "$1")" -eq 1 ]
}

rows=()
failed=()
start_all=$(date +%s)
for entry in "${found[@]}"; do
	file=${entry%%:*}
	name=${entry##*:}
	if [ -n "${FUZZ_MATCH:-}" ] && ! [[ $name =~ $FUZZ_MATCH ]]; then
		continue
	fi
	dir=$(dirname "$file")
	pkg=$("$go" list "$dir")
	log=$logdir/$name.log
	args=(test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime")
	[ -n "${FUZZ_PARALLEL:-}" ] && args+=(-parallel "$FUZZ_PARALLEL")
	echo "== $name ($dir, $fuzztime)"
	status=ok
	rc=0
	"$go" "${args[@]}" "$dir" >"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] && coordinator_race "$log" && "$go" test -run "^${name}\$" "$dir" >>"$log" 2>&1; then
		# Go 1.26's fuzz coordinator can report its own FUZZTIME deadline
		# as a failure (go.dev/issue/75804, fixed in Go 1.27): a bare
		# "context deadline exceeded" and no input written. The seed corpus
		# is replayed, so nothing is hidden behind it.
		status="ok (deadline race, go.dev/issue/75804; seeds replayed)"
	elif [ "$rc" -ne 0 ]; then
		status=FAIL
		failed+=("$name")
		# The fuzzer's own report: the failure, its stack and the input.
		grep -v '^fuzz: elapsed' "$log" | tail -n 60
		if input=$(grep -oE 'Failing input written to [^ ]+' "$log" | tail -n1); then
			input=${input#Failing input written to }
			echo "!! $name failed; input written to $dir/$input (inside the checked-in seed corpus: move it out before committing)"
			echo "!! re-run: go test -run '^$name/$(basename "$input")\$' $dir"
		fi
	fi
	last=$(grep -E '^fuzz: elapsed: .*execs: [0-9]+' "$log" | tail -n1 || true)
	execs=-
	rate=-
	if [[ $last =~ elapsed:\ ([0-9hms.]+),\ execs:\ ([0-9]+) ]]; then
		execs=${BASH_REMATCH[2]}
		secs=$(seconds "${BASH_REMATCH[1]}")
		[ "$secs" -gt 0 ] && rate=$((execs / secs))
	elif baseline=$(grep -oE 'baseline coverage: [0-9]+/[0-9]+' "$log" | tail -n1); then
		# FUZZTIME ran out while the seed corpus was still being measured.
		execs="baseline:${baseline#baseline coverage: }"
	fi
	seeds=$(count "$dir/testdata/fuzz/$name")
	generated=$(count "$cache/fuzz/$pkg/$name")
	rows+=("$name|$dir|$seeds|$generated|$execs|$rate|$status")
done

echo
printf '%-32s %-16s %6s %10s %14s %10s %s\n' TARGET PACKAGE SEEDS GENERATED EXECS EXECS/SEC STATUS
for r in "${rows[@]}"; do
	IFS='|' read -r name dir seeds generated execs rate status <<<"$r"
	printf '%-32s %-16s %6s %10s %14s %10s %s\n' "$name" "$dir" "$seeds" "$generated" "$execs" "$rate" "$status"
done
echo "(seeds: checked-in files in <package>/testdata/fuzz/<target>, besides the f.Add seeds read from examples/ and golden/;"
echo " generated: $cache/fuzz/<import path>/<target>; $(($(date +%s) - start_all))s in all)"

if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz.sh: failed: ${failed[*]}" >&2
	exit 1
fi
