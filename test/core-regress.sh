#!/usr/bin/env bash
# PostgreSQL's own regression suite against a server with bloomguard
# preloaded, in two parts.
#
# The guarded comparison (always): the suite with every table guarded from
# its creation, run twice, with the planner path (bloomguard.transparent)
# off and on, and the two runs' result files compared (test/core-compare.py):
# a difference that is not a plan line, or a crash, fails.  An event
# trigger (the test-only extension in test/guard-all, loaded into the
# suite's database by pg_regress --load-extension) attaches every table
# that gets a primary key, in the creating command's transaction (attach.c:
# attach in a transaction); then the same pair again with enable_seqscan
# and enable_bitmapscan off, so that index scans, and so the BloomGuard
# node, are chosen wherever they can be.  The comparison needs no expected
# files, so it runs whatever minor release the suite is.
#
# Against the expected files (only where the suite and the server are the
# same release: a minor release can change what the suite expects): the
# suite with bloomguard loaded but not created; every table with a primary
# key it leaves behind, guarded and checked (test/attach-all.py); the suite
# once more with the extension created first (--load-extension).
#
#   test/core-regress.sh        # as root: installs what is missing, builds
#                               # and installs bloomguard (and, for the run,
#                               # the test-only extension) into $PG_CONFIG's
#                               # installation, runs as the postgres user
#
# PG_SRC is a PostgreSQL source tree of the same major version as
# $PG_CONFIG (default: the one test/assert-build.sh unpacks); the suite's
# inputs (sql/, expected/, data/, parallel_schedule) come from it, pg_regress
# from $PG_CONFIG's pgxs (or the tree's own, when the installation has
# none), and the suite's C functions (regress.so, refint.so, autoinc.so) are
# built from the tree's sources against $PG_CONFIG.
#
# CORE_REGRESS_ONLY=guarded runs only the guarded comparison,
# CORE_REGRESS_ONLY=expected only the part against the expected files.
#
# At the end, if test/sqlsmith.sh takes --existing, it is run, as the
# postgres user, against the "regression" database the last guarded run
# (planner path on, every table guarded) left, on this script's server:
# PGHOST, PGPORT and PGDATABASE name it, PG_CONFIG the installation, and
# SQLSMITH_SERVER_LOG is the server's log (this script also fails the run
# on a crash in it).  Its result is one more line of the summary.
# CORE_REGRESS_SQLSMITH=0 leaves it out.
#
# Before the closing line "N passed, N failed" (the exit status is
# non-zero on any failure) come the figures of each guarded run: time,
# statements, tables guarded and refused (and why), plans with the node,
# key checks and what the filter answered.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/common.sh"
PG_SRC=${PG_SRC:-/var/cache/bloomguard-test/pg15-assert-src/tree}
export PG_SRC

. "$top/test/lib/cluster.sh"

# The test-only extension's files, into (or out of) the installation's
# extension directory: only for the run, never packaged.
guard_all_files() {
	local ext
	ext=$("$PG_CONFIG" --sharedir)/extension
	if [ "$1" = install ]; then
		install -m 644 "$top/test/guard-all/bloomguard_guard_all.control" \
			"$top/test/guard-all/bloomguard_guard_all--1.0.sql" "$ext/"
	else
		rm -f "$ext/bloomguard_guard_all.control" "$ext/bloomguard_guard_all--1.0.sql"
	fi
}

if [ "${1:-}" != --as-postgres ]; then
	# SQLsmith's package too, for the run against the database the last
	# guarded run leaves (below), unless it is left out
	pkgs=python3-psycopg2
	[ "${CORE_REGRESS_SQLSMITH:-1}" = 0 ] || pkgs="$pkgs sqlsmith"
	if [ "$(id -u)" = 0 ]; then
		# shellcheck disable=SC2086
		bg_install_deps $pkgs || exit 1
		guard_all_files install || exit 1
		trap 'guard_all_files remove' EXIT
	fi
	bg_rerun_as_postgres test/core-regress.sh "$pkgs" \
		"PG_SRC CORE_REGRESS_ONLY CORE_REGRESS_ANY_MINOR CORE_REGRESS_SKIP CORE_REGRESS_SQLSMITH SQLSMITH_QUERIES SQLSMITH_SEED"
fi

regress=$PG_SRC/src/test/regress
src_version=$(sed -n 's/^#define PG_VERSION "\(.*\)"$/\1/p' "$PG_SRC/src/include/pg_config.h" 2>/dev/null)
src_major=${src_version%%.*}
pg_version=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9.]*\).*/\1/p')
echo "server:      PostgreSQL $pg_version ($PG_CONFIG)"
echo "suite from:  ${src_version:-nothing} ($PG_SRC)"
if [ -z "$src_version" ] || [ ! -f "$regress/parallel_schedule" ]; then
	echo "SKIPPED: $PG_SRC is not a configured PostgreSQL source tree (run test/assert-build.sh, or set PG_SRC)"
	echo "0 passed, 0 failed"
	exit 0
fi
if [ "$src_major" != "$PG_MAJOR" ]; then
	echo "SKIPPED: the suite is PostgreSQL $src_version's, the server is $pg_version (major versions differ)"
	echo "0 passed, 0 failed"
	exit 0
fi
# The part against the expected files runs only where the suite and the
# server are the same release (15.20's psql and ruleutils print what
# 15.18's expected files do not), unless CORE_REGRESS_ANY_MINOR=1.
expected_part=1 guarded_part=1
case ${CORE_REGRESS_ONLY:-} in
guarded) expected_part=0 ;;
expected) guarded_part=0 ;;
esac
if [ "$expected_part" = 1 ] && [ "$src_version" != "$pg_version" ] && [ "${CORE_REGRESS_ANY_MINOR:-}" != 1 ]; then
	echo "note:        the runs against the expected files are skipped: the suite is $src_version's, the server $pg_version (CORE_REGRESS_ANY_MINOR=1 runs them anyway); the guarded comparison runs"
	expected_part=0
fi
if [ "$guarded_part" = 1 ] && [ ! -f "$("$PG_CONFIG" --sharedir)/extension/bloomguard_guard_all.control" ]; then
	echo "FAILED: the test-only extension bloomguard_guard_all is not installed (run this as root, which installs it for the run)"
	echo "0 passed, 1 failed"
	exit 1
fi

t0=$(date +%s)
pg_regress=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress
[ -x "$pg_regress" ] || pg_regress=$regress/pg_regress
dir=$(mktemp -d /tmp/bloomguard-core.XXXXXX)
trap 'bg_cluster_stop "$dir"' EXIT
passed=0 failed=0 failed_names=""
result() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1)) failed_names="$failed_names $1"
	fi
}

# the suite's C functions, built against this installation
mkdir -p "$dir/lib"
cp "$regress/regress.c" "$PG_SRC/contrib/spi/refint.c" "$PG_SRC/contrib/spi/autoinc.c" "$dir/lib/"
# (refint with REFINT_VERBOSE, as the tree's own makefile builds it: the
# triggers test expects its notices)
printf 'MODULES = regress refint autoinc\nPG_CPPFLAGS = -DREFINT_VERBOSE\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' >"$dir/lib/Makefile"
if ! make -s -C "$dir/lib" PG_CONFIG="$PG_CONFIG" >"$dir/lib/build.log" 2>&1; then
	cat "$dir/lib/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi

# No background worker: a worker connected to a database makes the suite's
# DROP DATABASE and ALTER DATABASE ... RENAME fail now and then, and in
# the guarded runs it would build, at a time of its own, the filters of
# new partitions (which stay unbuilt: their lookups are plain).  Room for
# every guard the suite's tables get, so that no attach is refused for
# want of slots or memory, whatever ran in parallel.
bg_cluster_start "$dir" "bloomguard.background_worker = off
bloomguard.max_guards = 20000
bloomguard.max_memory = 256MB" || exit 1
bg_log "cluster in $dir ($("$PG_BIN/psql" -XAtc 'SHOW server_version' postgres))"
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Run the core suite; $1 names the run, the rest are pg_regress options.
# Prints the tests that did not match the expected files unless the run
# is a guarded one (whose outputs show the guard's triggers).
core_suite() {
	local name=$1 start rc
	shift
	mkdir -p "$dir/$name"
	start=$(date +%s)
	"$pg_regress" --bindir="$PG_BIN" --dlpath="$dir/lib" --inputdir="$regress" \
		--outputdir="$dir/$name" --host="$PGHOST" --port="$PGPORT" \
		--max-concurrent-tests=20 "$@" >"$dir/$name/pg_regress.out" 2>&1
	rc=$?
	echo $(($(date +%s) - start)) >"$dir/$name/seconds"
	case $name in
	guard-*) ;;
	*)
		grep -E 'FAILED|failed|tests passed|tests? failed' "$dir/$name/pg_regress.out" | sed 's/^ *//' | head -40
		if [ "$rc" != 0 ] && [ -s "$dir/$name/regression.diffs" ]; then
			echo "---- $name: regression.diffs (first 150 lines)"
			head -150 "$dir/$name/regression.diffs"
		fi
		;;
	esac
	echo "$name: $(cat "$dir/$name/seconds") s"
	return $rc
}

# Wait for the server to accept connections (after a crash, its restart).
server_up() {
	local i
	for i in $(seq 120); do
		"$PG_BIN/pg_isready" -q && return 0
		sleep 1
	done
	return 1
}

# Succeed if the server log has no crash from byte $1 on (all of it by
# default); otherwise print the lines.
crashes() {
	tail -c +$((${1:-0} + 1)) "$dir/server.log" >"$dir/log.part"
	if bg_log_crashes "$dir/log.part" >"$dir/crashes"; then
		return 0
	fi
	echo "---- crashes in the server log:"
	cat "$dir/crashes"
	return 1
}

if [ "$expected_part" = 1 ]; then
	echo
	echo "== the core suite, bloomguard preloaded, not created"
	core_suite plain --schedule="$regress/parallel_schedule"
	rc=$?
	crashes || rc=1
	result plain $rc

	echo
	echo "== every table with a primary key the suite left in regression, guarded and checked"
	start=$(date +%s)
	/usr/bin/python3 "$top/test/attach-all.py" "dbname=regression host=$PGHOST port=$PGPORT"
	rc=$?
	echo "attach-all: $(($(date +%s) - start)) s"
	crashes || rc=1
	result attach-all $rc

	# The skips: tests whose expected output lists objects of the whole
	# database, which then include the extension's.  event_trigger lists
	# every event trigger, and CREATE EXTENSION adds bloomguard_sql_drop.
	skip="${CORE_REGRESS_SKIP-event_trigger}"
	echo
	echo "== the core suite with CREATE EXTENSION bloomguard in regression first"
	sed -E "$(for t in $skip; do printf 's/ %s( |$)/ /;' "$t"; done)" "$regress/parallel_schedule" |
		sed -E 's/^test: *$//' >"$dir/schedule-ext"
	echo "skipped tests:${skip:- none}"
	server_up
	core_suite with-extension --schedule="$dir/schedule-ext" --load-extension=bloomguard
	rc=$?
	crashes || rc=1
	result with-extension $rc
fi

# One guarded run: $1 names it, $2 is the sessions' PGOPTIONS.  Every
# table is guarded by the event trigger from its creation; the figures
# (guarded_figures) come from the server log lines of the run and, for
# the last run, from the health view of the database it leaves.  The
# database of every run but the last is dropped at its end, so that its
# guards' counters reach the log (shmem.c logs them at DEBUG1 as it frees
# each guard) within the run's part of it.
guarded_run() {
	local name=$1 options=$2 last=${3:-0} logpos rc
	echo
	echo "== $name: every table guarded from its creation; PGOPTIONS=$options"
	server_up
	logpos=$(stat -c %s "$dir/server.log")
	echo "$logpos" >"$dir/$name.logpos"
	PGOPTIONS="$options" core_suite "$name" --schedule="$regress/parallel_schedule" \
		--load-extension=bloomguard --load-extension=bloomguard_guard_all
	crashes "$logpos"
	rc=$?
	if [ "$last" = 1 ]; then
		psql -d regression -AtF ' ' -c "SELECT count(*), coalesce(sum(checks), 0), coalesce(sum(shortcuts), 0),
			coalesce(sum(source_lookups), 0), coalesce(sum(fallbacks), 0) FROM bloomguard_health" \
			>"$dir/$name/live" || rc=1
	else
		psql -d postgres -c "DROP DATABASE regression" || rc=1
		echo "0 0 0 0 0" >"$dir/$name/live"
	fi
	tail -c +$((logpos + 1)) "$dir/server.log" >"$dir/$name/server.log"
	return $rc
}

# Print a guarded run's figures (from its log part and its live guards).
guarded_figures() {
	local name=$1 log=$dir/$1/server.log
	awk -v name="$name" -v live="$(cat "$dir/$name/live")" -v secs="$(cat "$dir/$name/seconds")" \
		-v plans="$(grep -l 'Custom Scan (BloomGuard)' "$dir/$name"/results/*.out 2>/dev/null | wc -l)" \
		-v planlines="$(cat "$dir/$name"/results/*.out 2>/dev/null | grep -c 'Custom Scan (BloomGuard)')" '
		/ pg_regress\/[^ ]* LOG:  statement: / { statements++ }
		/bloomguard_guard_all: guarded / { guarded++ }
		/bloomguard_guard_all: skipping / { r = $0; sub(/.*: /, "", r); skipped[r]++ }
		/bloomguard_guard_all: not guarding / {
			refused++
			r = $0; sub(/.*bloomguard_guard_all: not guarding [^:]*: /, "", r)
			gsub(/"[^"]*"/, "\"...\"", r); why[r]++
		}
		/bloomguard: freed the guard of relation/ {
			n = split($0, w, " ")
			for (i = 1; i <= n; i++) {
				if (w[i] ~ /^checks,?$/) checks += w[i - 1]
				if (w[i] ~ /^shortcuts,?$/) shortcuts += w[i - 1]
				if (w[i] == "source" && w[i + 1] ~ /^lookups,?$/) lookups += w[i - 1]
				if (w[i] ~ /^fallbacks,?$/) fallbacks += w[i - 1]
			}
			freed++
		}
		END {
			split(live, l, " ")
			checks += l[2]; shortcuts += l[3]; lookups += l[4]; fallbacks += l[5]
			printf "%s: %d s, %d statements; tables guarded %d, refused %d; %d plans with the node in %d result files\n",
				name, secs, statements, guarded, refused, planlines, plans
			printf "%s: key checks %d: the filter trusted for %d (answered absent %d, maybe %d), not trusted %d\n",
				name, checks, shortcuts + lookups, shortcuts, lookups, fallbacks
			for (r in why) printf "%s:   refused %d: %s\n", name, why[r], r
			for (r in skipped) printf "%s:   not attached, %s: %d\n", name, r, skipped[r]
		}' "$log"
}

if [ "$guarded_part" = 1 ]; then
	# the statements (counted) and the counters of freed guards (summed)
	psql -d postgres -c "ALTER SYSTEM SET log_min_messages = debug1" \
		-c "ALTER SYSTEM SET log_statement = 'all'" -c "SELECT pg_reload_conf()" >/dev/null
	noindex="-c enable_seqscan=off -c enable_bitmapscan=off"
	# the planner path off first, so that the last run leaves its database
	# with the path on for SQLsmith
	guarded_run guard-off "-c bloomguard.transparent=off"
	result guard-off $?
	guarded_run guard-on "-c bloomguard.transparent=on"
	result guard-on $?
	echo
	echo "== guard-on against guard-off"
	/usr/bin/python3 "$top/test/core-compare.py" "$dir/guard-off/results" "$dir/guard-on/results"
	result compare $?
	guarded_run guard-off-index "-c bloomguard.transparent=off $noindex"
	result guard-off-index $?
	guarded_run guard-on-index "-c bloomguard.transparent=on $noindex" 1
	result guard-on-index $?
	echo
	echo "== guard-on-index against guard-off-index"
	/usr/bin/python3 "$top/test/core-compare.py" "$dir/guard-off-index/results" "$dir/guard-on-index/results"
	result compare-index $?
	psql -d postgres -c "ALTER SYSTEM RESET log_min_messages" -c "ALTER SYSTEM RESET log_statement" \
		-c "SELECT pg_reload_conf()" >/dev/null

	if [ "${CORE_REGRESS_SQLSMITH:-1}" != 0 ] && [ -f "$top/test/sqlsmith.sh" ] &&
		grep -q -- '--existing' "$top/test/sqlsmith.sh"; then
		echo
		echo "== SQLsmith against the database the last guarded run left (test/sqlsmith.sh --existing)"
		server_up
		logpos=$(stat -c %s "$dir/server.log")
		PGDATABASE=regression SQLSMITH_SERVER_LOG="$dir/server.log" bash "$top/test/sqlsmith.sh" --existing
		rc=$?
		crashes "$logpos" || rc=1
		result sqlsmith-existing $rc
	fi
fi

echo
if [ "$guarded_part" = 1 ]; then
	for run in guard-off guard-on guard-off-index guard-on-index; do
		[ -f "$dir/$run/seconds" ] && guarded_figures "$run"
	done
fi
echo "core-regress: PostgreSQL $pg_version, suite $src_version, $(($(date +%s) - t0)) s${failed_names:+, failed:$failed_names}"
bg_cluster_finish "$dir" "$passed" "$failed"
