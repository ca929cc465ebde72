#!/usr/bin/env bash
# Citus, cold shards: the benchmark test/bench/citus_cold.pl (its header
# says what it measures), with the memory cgroups it needs.
#
#   test/bench/citus-cold.sh                  # 10M keys, about 10 minutes on 2 cores
#   BENCH_SMOKE=1 test/bench/citus-cold.sh    # 3M keys, under a minute (CI)
#
# As root: installs what is missing, builds and installs bloomguard if it
# is not installed, builds Citus (test/citus-build.sh, cached), makes a
# memory cgroup for each worker and one for the coordinator and the
# clients (cgroup v1 memory hierarchies, or three leaves of one
# delegated cgroup v2 subtree: a process moving between two v2 cgroups
# needs write access to their common ancestor), and runs the benchmark
# as the postgres user under prove.  Where no cgroup can be made, or
# Citus cannot be built, it says so and exits 0 without measuring.
# Writes test/bench/out/results-citus-cold.md and citus-cold.csv.
set -Eeuo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/test/lib/common.sh"
. "$top/test/lib/cgroup.sh"
OUT=${BENCH_OUT:-$here/out}

if [ "$(id -u)" != 0 ]; then
	echo "Citus cold benchmark SKIPPED: making its memory cgroups needs root"
	exit 0
fi
bg_install_deps libipc-run-perl || exit 1
bg_ensure_postgres_user
if [ ! -f "$PG_PKGLIBDIR/bloomguard.so" ]; then
	bg_build_install "$top" || exit 1
fi
rc=0
PG_CONFIG=$PG_CONFIG bash "$top/test/citus-build.sh" >/dev/null || rc=$?
case $rc in
0) ;;
3) echo "Citus cold benchmark SKIPPED: Citus could not be built for this PostgreSQL (see above)"; exit 0 ;;
*) echo "Citus cold benchmark: the Citus build failed" >&2; exit 1 ;;
esac

# the cgroups: W1, W2 (the workers'), CLIENT (coordinator, pgbench, the script)
tops=()
cleanup() {
	local t
	for t in "${tops[@]}"; do
		BG_CG_TOP=$t bg_cg_remove || true
	done
}
trap cleanup EXIT
if ! bg_cg_create bgcitus-w1 postgres; then
	echo "Citus cold benchmark SKIPPED: no memory cgroup: $BG_CG_WHY"
	exit 0
fi
tops+=("$BG_CG_TOP")
W1=$BG_CG
if [ "$BG_CG_VERSION" = 1 ]; then
	bg_cg_create bgcitus-w2 postgres || { echo "cannot make a second cgroup: $BG_CG_WHY" >&2; exit 1; }
	tops+=("$BG_CG_TOP")
	W2=$BG_CG
	bg_cg_create bgcitus-client postgres || { echo "cannot make a third cgroup: $BG_CG_WHY" >&2; exit 1; }
	tops+=("$BG_CG_TOP")
	CLIENT=$BG_CG
else
	# one delegated subtree: server (worker 1), client, and a third leaf
	W2=$BG_CG_TOP/w2
	mkdir "$W2"
	chown postgres "$W2/cgroup.procs" "$W2/memory.max"
	CLIENT=$BG_CG_CLIENT
fi
bg_log "memory cgroups v$BG_CG_VERSION: $W1 $W2 $CLIENT"

work=$(bg_copy_for_postgres "$top")
mkdir -p "$OUT"
rc=0
(
	# v2: the script starts in the client leaf, under the subtree it moves within
	[ "$BG_CG_VERSION" = 1 ] || echo "$BASHPID" >"$CLIENT/cgroup.procs"
	bg_as_postgres "cd '$work' && env BG_CG_W1='$W1' BG_CG_W2='$W2' BG_CG_CLIENT='$CLIENT' BG_CG_VERSION=$BG_CG_VERSION \
		BENCH_OUT='$work/test/bench/out' $(for v in $(compgen -e | grep '^BENCH_' | grep -v '^BENCH_OUT$' || true); do printf "%s=%q " "$v" "${!v}"; done) \
		make -s PG_CONFIG='$PG_CONFIG' installcheck-tap PROVE_FLAGS='--verbose' PROVE_TESTS='test/bench/citus_cold.pl'"
) || rc=$?
cp "$work"/test/bench/out/results-citus-cold.md "$work"/test/bench/out/citus-cold.csv "$OUT/" 2>/dev/null || true
if [ "$rc" = 0 ]; then
	rm -rf "$work"
	bg_log "results in $OUT/results-citus-cold.md"
else
	bg_log "the benchmark failed; its logs are in $work/tmp_check/log"
fi
exit "$rc"
