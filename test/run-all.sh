#!/usr/bin/env bash
# Runs every bloomguard test suite on a fresh Debian 12 machine (as root):
# installs what is missing, builds, then runs the regression tests, the
# isolation specs, the TAP tests (restarts, stress) and the benchmark smoke
# run, each against throwaway clusters started as the postgres user.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"

bg_install_deps gnuplot-nox redis-server python3-redis python3-psycopg2 || exit 1
bg_build_install "$top" || exit 1
work=$(bg_copy_for_postgres "$top")
bg_log "running tests in $work"

passed=0
failed=0
failed_names=""
run_suite() {
	local name=$1
	shift
	bg_log "suite: $name"
	if bg_as_postgres "cd '$work' && $*"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		for f in "$work"/regression.diffs "$work"/output_iso/regression.diffs; do
			[ -s "$f" ] && { echo "---- $f"; head -200 "$f"; }
		done
	fi
}

run_suite regress "make -s PG_CONFIG='$PG_CONFIG' installcheck-regress"
run_suite isolation "make -s PG_CONFIG='$PG_CONFIG' installcheck-isolation"
run_suite tap "make -s PG_CONFIG='$PG_CONFIG' installcheck-tap"
if [ -x "$work/test/bench/run.sh" ]; then
	run_suite bench-smoke "BENCH_SMOKE=1 test/bench/run.sh"
fi

echo
echo "suites:${failed_names:+ failed:$failed_names}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
