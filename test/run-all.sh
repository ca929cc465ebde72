#!/usr/bin/env bash
# Runs every bloomguard test suite on a fresh Debian 12 machine (as root):
# installs what is missing, builds, then runs the regression tests, the
# isolation specs, the TAP tests (restarts, stress) and the benchmarks'
# smoke runs, each against throwaway clusters started as the postgres user.
#
#   test/run-all.sh                  # one PostgreSQL: $PG_CONFIG, or Debian's
#                                    # for $PG_MAJOR, or the newest installed
#   PG_MAJOR=17 test/run-all.sh      # another Debian-packaged version
#   PG_CONFIG=/path/to/pg_config test/run-all.sh   # any installation
#   test/run-all.sh --no-bench       # without the benchmark smoke runs
#   BG_PACKAGE=0 test/run-all.sh     # without the Debian package suite
#                                    # (test/package.sh; root only)
#   BG_CITUS=0 test/run-all.sh       # without the Citus suite (Citus
#                                    # built by test/citus-build.sh; with
#                                    # --assert only if BG_CITUS=1)
#   test/run-all.sh --all-versions   # 15 here, 17 and 18 in Debian roots,
#                                    # 15 with assertions (test/matrix.sh)
#   PG_CONFIG=$(test/assert-build.sh) test/run-all.sh --no-bench --assert
#                                    # an assert-enabled server, with the
#                                    # suites of the matrix's assert row
#   PG_CONFIG=$(test/assert-build.sh) test/run-all.sh --no-bench --assert --long
#                                    # the same, with the random and
#                                    # Valgrind suites in their long mode
#
# --assert adds, after the others: sql/discard.sql (the planner path and
# the lookups, in small) again with debug_discard_caches = 1, because every
# backend-local cache must survive an invalidation at any point (make
# installcheck-discard; planner.sql and lookup.sql themselves would take
# hours so), and PostgreSQL's own regression suite with the library loaded
# and, twice more pairwise, with every table guarded from its creation and
# the planner path off and on, compared (test/core-regress.sh), SQLsmith
# (test/sqlsmith.sh), the differential query generator (test/diffgen.sh)
# and the regression files of the planner path and the lookups under
# Valgrind (test/valgrind.sh), run as root; the time each takes is logged.
# --long (the long mode, not run by CI) runs those three tools ten times
# longer: SQLsmith 15000 queries, the generator 30000 statements, and
# every regression file under Valgrind but the timing-dependent ones.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

bench=1
assert=0
long=0
for arg in "$@"; do
	case $arg in
	--all-versions) exec bash "$top/test/matrix.sh" ;;
	--no-bench) bench=0 ;;
	--assert) assert=1 ;;
	--long) long=1 ;;
	*) echo "usage: $0 [--all-versions | [--no-bench] [--assert [--long]]]" >&2; exit 2 ;;
	esac
done

. "$top/test/lib/common.sh"
if [ "$assert" = 1 ] && ! { "$PG_CONFIG" --configure 2>/dev/null || true; } | grep -q -- '--enable-cassert'; then
	echo "--assert needs a PostgreSQL built with --enable-cassert ($PG_CONFIG is not; test/assert-build.sh makes one)" >&2
	exit 2
fi

passed=0
failed=0
failed_names=""
finish() {
	echo
	echo "PostgreSQL $PG_MAJOR ($PG_CONFIG)"
	echo "suites:${failed_names:+ failed:$failed_names}"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if [ "$bench" = 1 ]; then
	bg_install_deps gnuplot-nox redis-server python3-redis python3-psycopg2 || exit 1
else
	bg_install_deps || exit 1
fi
# build in a copy, so that the checkout keeps no objects compiled against
# another version's headers for a later plain `make install` to reuse
work=$(bg_copy_for_postgres "$top")
if ! bg_build_install "$work"; then
	failed=1 failed_names=" build"
	finish
fi
chown -R "$(stat -c %U "$work")" "$work"
bg_log "running tests in $work"

# run_suite NAME COMMAND: run COMMAND in the copy as the postgres user
# (run_root_suite: as root) and count it
run_suite() {
	local name=$1
	shift
	bg_log "suite: $name"
	if bg_as_postgres "cd '$work' && $*"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		for f in "$work"/regression.diffs "$work"/output_iso/regression.diffs "$work"/output_discard/regression.diffs; do
			[ -s "$f" ] && { echo "---- $f"; head -200 "$f"; }
		done
	fi
}
run_root_suite() {
	local name=$1
	shift
	bg_log "suite: $name"
	if (cd "$work" && PG_CONFIG=$PG_CONFIG bash -c "$*"); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
	fi
}

# the house rules the compiler does not check: no circles between the
# files of src/, a comment above every function (test/check-layers.py), no
# global read across files without a stated reason (test/check-symbols.py,
# on the objects just built; make check-layers runs both); META.json valid
# for PGXN and at the extension's version (test/check-meta.py); the
# Markdown files' links and anchors resolve, and the README's reference
# matches the SQL scripts and the settings (test/check-docs.py)
run_suite layers "python3 test/check-meta.py . && python3 test/check-docs.py . && make -s PG_CONFIG='$PG_CONFIG' check-layers"
# the regression and isolation runs' server logs may hold no warning or
# error their expected output does not show (test/check-logs.pl); each TAP
# test checks its own nodes' logs (test/lib/BloomGuard/Test.pm)
run_suite regress "make -s PG_CONFIG='$PG_CONFIG' installcheck-regress &&
	perl test/check-logs.pl log/postmaster.log expected"
run_suite isolation "make -s PG_CONFIG='$PG_CONFIG' installcheck-isolation &&
	perl test/check-logs.pl output_iso/log/postmaster.log test/isolation/expected"
# the TAP tests but Citus's (test/t/*citus*.pl: the citus suite below)
tap_tests=$(cd "$work" && ls test/t/*.pl | grep -v citus | tr '\n' ' ')
run_suite tap "make -s PG_CONFIG='$PG_CONFIG' installcheck-tap PROVE_TESTS='$tap_tests'"
# Citus (test/citus-build.sh builds it from the archives in $BG_CITUS_SRC,
# default /work/shared/vendor/citus, caches the build under
# /var/cache/bloomguard-test and installs it into this PostgreSQL), then
# its TAP tests, a coordinator and two workers (test/t/*citus*.pl).  Where
# no archive supports this PostgreSQL, or they are not there, the suite is
# not run and says why (as test/t/025_citus.pl does when run alone).
# BG_CITUS=0 leaves it out; with --assert it is left out unless BG_CITUS=1
# (the host's row runs it: a first build of Citus takes about ten minutes
# on two cores, which the assert-enabled row would pay again)
t0=$(date +%s)
if [ "${BG_CITUS:-$((1 - assert))}" = 0 ]; then
	bg_log "suite: citus not run (BG_CITUS=${BG_CITUS:-0}$([ "$assert" = 1 ] && echo ', --assert'))"
else
	citus_rc=0
	citus_step=citus-build
	# test/t/029_citus_sqlsmith.pl runs Debian's sqlsmith
	bg_install_deps sqlsmith || { citus_rc=1; citus_step=citus-deps; }
	[ "$citus_rc" != 0 ] || PG_CONFIG=$PG_CONFIG bash "$top/test/citus-build.sh" >/dev/null || citus_rc=$?
	case $citus_rc in
	0)
		citus_built=1
		run_suite citus "make -s PG_CONFIG='$PG_CONFIG' installcheck-tap PROVE_TESTS='test/t/*citus*.pl'"
		;;
	3) bg_log "suite: citus NOT RUN: Citus could not be built for this PostgreSQL (see above)" ;;
	*)
		failed=$((failed + 1))
		bg_log "suite: $citus_step FAILED (citus not run)"
		failed_names="$failed_names $citus_step"
		;;
	esac
	bg_log "citus: $(($(date +%s) - t0)) s"
fi
# the Debian package (test/package.sh): built for this PostgreSQL, then
# installed in a new minimal Debian 12 root, with the demo and the
# package's autopkgtest run there.  Only as root, with Debian's own
# PostgreSQL, and not inside a chroot (test/matrix.sh's and
# test/fresh-root.sh's roots: a root would have to be made inside a root);
# BG_PACKAGE=0 leaves it out
package_skip=""
if [ "${BG_PACKAGE:-1}" = 0 ]; then
	package_skip="BG_PACKAGE=0"
elif [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ] || ! bg_pg_is_debian; then
	package_skip="needs root, Debian and Debian's PostgreSQL"
else
	ischroot
	[ $? = 1 ] || package_skip="inside a chroot"
fi
if [ -z "$package_skip" ]; then
	bg_log "suite: package"
	# nocheck: the build's own run of the regression tests (dh_pgxs_test)
	# is the same as the autopkgtest's in the root, against the installed
	# package
	if DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-nocheck} DEMO_ROWS=${DEMO_ROWS:-50000} \
		DEMO_SECONDS=${DEMO_SECONDS:-1} bash "$top/test/package.sh"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names package"
	fi
else
	bg_log "suite: package not run ($package_skip)"
fi
if [ "$bench" = 1 ] && [ -x "$work/test/bench/run.sh" ]; then
	run_suite bench-smoke "BENCH_SMOKE=1 test/bench/run.sh"
fi
# the cold-index benchmark's smoke run (a minute): as root, since it puts
# the server in a memory cgroup it makes; where none can be made (a
# chroot, a container) it says SKIPPED and passes
if [ "$bench" = 1 ] && [ -x "$work/test/bench/cold.sh" ]; then
	run_root_suite bench-cold-smoke "BENCH_SMOKE=1 bash test/bench/cold.sh"
fi
# the Citus cold-shard benchmark's smoke run (under a minute): as root, for
# the workers' memory cgroups; where the citus suite ran
if [ "$bench" = 1 ] && [ "${citus_built:-0}" = 1 ] && [ -x "$work/test/bench/citus-cold.sh" ]; then
	run_root_suite bench-citus-cold-smoke "BENCH_SMOKE=1 bash test/bench/citus-cold.sh"
fi
if [ "$assert" = 1 ]; then
	t0=$(date +%s)
	run_suite discard-caches "make -s PG_CONFIG='$PG_CONFIG' installcheck-discard &&
		perl test/check-logs.pl output_discard/log/postmaster.log expected"
	bg_log "discard-caches: $(($(date +%s) - t0)) s"
	for s in core-regress sqlsmith diffgen valgrind; do
		t0=$(date +%s)
		opts=""
		if [ "$long" = 1 ]; then
			case $s in
			sqlsmith) opts="SQLSMITH_QUERIES=${SQLSMITH_QUERIES:-15000}" ;;
			diffgen | valgrind) opts="--long" ;;
			esac
		fi
		case $opts in
		*=*) run_root_suite "$s" "$opts bash test/$s.sh" ;;
		*) run_root_suite "$s" "bash test/$s.sh $opts" ;;
		esac
		bg_log "$s: $(($(date +%s) - t0)) s"
	done
fi

finish
